import { z } from 'zod';
import { todayIn } from '../../calendar.js';
import { BadRequestError } from '../../errors/index.js';
import { LIMITS } from '../../graphql/args.js';
import { resolveDateRange } from '../../graphql/dates.js';
import type { AppContext, AppMiddleware } from '../../http/context.js';
import type {
  RestMealsQuery,
  RestMealsQueryVariables,
  RestSchedulesQuery,
  RestSchedulesQueryVariables,
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

/** GET /v1/neis/meals */
export function mealsHandler(deps: RestDeps): AppMiddleware {
  const dateRange = dateRangeOf(deps);
  return async (ctx) => {
    const variables = dateRange(ctx);
    await respondWithOperation(ctx, deps, {
      // The resolved dates, not the raw query: "no date" means a different day tomorrow.
      cacheKey: `neis:meals:${variables.fromDate}:${variables.toDate}`,
      query: MEALS_OPERATION,
      variables: { ...variables },
      pick: (data: RestMealsQuery) => data.meals,
    });
  };
}

/** GET /v1/neis/schedules */
export function schedulesHandler(deps: RestDeps): AppMiddleware {
  const dateRange = dateRangeOf(deps);
  return async (ctx) => {
    const variables: RestSchedulesQueryVariables = dateRange(ctx);
    await respondWithOperation(ctx, deps, {
      cacheKey: `neis:schedules:${variables.fromDate}:${variables.toDate}`,
      query: SCHEDULES_OPERATION,
      variables: { ...variables },
      pick: (data: RestSchedulesQuery) => data.schedules,
    });
  };
}

/** GET /v1/neis/timetables (grade and classNum required) */
export function timetablesHandler(deps: RestDeps): AppMiddleware {
  const parse = memoByQueryString((query) => {
    const q = parseQuery(timetablesQuery, query);
    if (q.grade === undefined) throw new BadRequestError("Missing parameter 'grade': an integer from 1 to 3 is required.", 'grade');
    if (q.classNum === undefined) throw new BadRequestError("Missing parameter 'classNum': an integer from 1 to 4 is required.", 'classNum');
    return { ...q, grade: q.grade, classNum: q.classNum };
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
