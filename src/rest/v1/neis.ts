import { z } from 'zod';
import { todayIn } from '../../calendar.js';
import { LIMITS } from '../../graphql/args.js';
import { requireClass, resolveDateRange } from '../../graphql/dates.js';
import type { AppContext, AppMiddleware } from '../../http/context.js';
import type {
  RestMealsQuery,
  RestMealsQueryVariables,
  RestSchedulesQuery,
  RestTimetablesQuery,
  RestTimetablesQueryVariables,
} from './__generated__/operations.js';
import { respondWithOperation, type RestDeps } from './execute.js';
import { MEALS_OPERATION, SCHEDULES_OPERATION, TIMETABLES_OPERATION } from './operations/neis.js';
import { dateParam, intParam, memoByQueryString, parseQuery } from './params.js';

/** The date parameters of every NEIS endpoint; unknown parameters are ignored. */
export const neisDateQuery = z.object({
  date: dateParam().optional(),
  fromDate: dateParam().optional(),
  toDate: dateParam().optional(),
});

/** GET /v1/neis/timetables adds the class, both required. */
export const timetablesQuery = neisDateQuery.extend({
  grade: intParam(LIMITS.grade).optional(),
  classNum: intParam(LIMITS.classNum).optional(),
});

/** Parses the date parameters (memoised per query string); "today" is resolved per request. */
function dateRangeOf(deps: RestDeps) {
  const parse = memoByQueryString((query) => parseQuery(neisDateQuery, query));
  return (ctx: AppContext): RestMealsQueryVariables => resolveDateRange(parse(ctx.querystring, () => ctx.query), todayIn(deps.timeZone, deps.now()));
}

/** A NEIS endpoint that takes only the date parameters (meals, schedules). */
function dateRangeHandler<TData>(deps: RestDeps, name: string, query: string, pick: (data: TData) => unknown): AppMiddleware {
  const dateRange = dateRangeOf(deps);
  return async (ctx) => {
    const variables = dateRange(ctx);
    await respondWithOperation(ctx, deps, {
      // The resolved dates, not the raw query: "no date" means a different day tomorrow.
      cacheKey: `neis:${name}:${variables.fromDate}:${variables.toDate}`,
      query,
      variables: { ...variables },
      pick,
    });
  };
}

/** GET /v1/neis/meals */
export function mealsHandler(deps: RestDeps): AppMiddleware {
  return dateRangeHandler(deps, 'meals', MEALS_OPERATION, (data: RestMealsQuery) => data.meals);
}

/** GET /v1/neis/schedules */
export function schedulesHandler(deps: RestDeps): AppMiddleware {
  return dateRangeHandler(deps, 'schedules', SCHEDULES_OPERATION, (data: RestSchedulesQuery) => data.schedules);
}

/** GET /v1/neis/timetables (grade and classNum required) */
export function timetablesHandler(deps: RestDeps): AppMiddleware {
  const parse = memoByQueryString((query) => {
    const q = parseQuery(timetablesQuery, query);
    return { ...q, ...requireClass(q.grade, q.classNum) };
  });
  return async (ctx) => {
    const q = parse(ctx.querystring, () => ctx.query);
    const variables: RestTimetablesQueryVariables = {
      grade: q.grade,
      classNum: q.classNum,
      ...resolveDateRange(q, todayIn(deps.timeZone, deps.now())),
    };
    await respondWithOperation(ctx, deps, {
      cacheKey: `neis:timetables:${variables.grade}:${variables.classNum}:${variables.fromDate}:${variables.toDate}`,
      query: TIMETABLES_OPERATION,
      variables: { ...variables },
      pick: (data: RestTimetablesQuery) => data.timetables,
    });
  };
}
