import { z } from 'zod';
import { LIMITS } from '../../graphql/args.js';
import { CLUB_STATUSES, CLUB_TYPES } from '../../data/models/club.model.js';
import type { AppMiddleware } from '../../http/context.js';
import type { RestClubsQuery, RestClubsQueryVariables } from './__generated__/operations.js';
import { respondWithOperation, type RestDeps } from './execute.js';
import { CLUBS_OPERATION } from './operations/clubs.js';
import { boolParam, defined, enumParam, intParam, memoByQueryString, parseQuery, textParam } from './params.js';

/** Every query parameter of GET /v1/clubs (spec + DECISIONS.md); unknown ones are ignored. */
export const clubsQuery = z.object({
  clubId: intParam(LIMITS.id).optional(),
  clubName: textParam().optional(),
  clubType: enumParam(CLUB_TYPES).optional(),
  clubStatus: enumParam(CLUB_STATUSES).optional(),
  includeLeaderInParticipants: boolParam().optional(),
  page: intParam(LIMITS.page).optional(),
  size: intParam(LIMITS.size).optional(),
  sortBy: enumParam(['ID', 'NAME', 'TYPE']).optional(),
  sortDirection: enumParam(['ASC', 'DESC']).optional(),
});

export function clubsVariables(q: z.output<typeof clubsQuery>): RestClubsQueryVariables {
  const { page, size, sortBy, sortDirection, includeLeaderInParticipants, ...filter } = q;
  return defined({
    filter: defined(filter),
    page,
    size,
    sortBy,
    sortDirection,
    // DECISIONS.md: the leader is left out of participants unless asked for.
    includeLeader: includeLeaderInParticipants ?? false,
  });
}

/** GET /v1/clubs */
export function clubsHandler(deps: RestDeps): AppMiddleware {
  const request = memoByQueryString((query) => {
    const variables = clubsVariables(parseQuery(clubsQuery, query));
    return { variables, cacheKey: `clubs:${JSON.stringify(variables)}` };
  });
  return async (ctx) => {
    const { variables, cacheKey } = request(ctx.querystring, () => ctx.query);
    await respondWithOperation(ctx, deps, {
      cacheKey,
      query: CLUBS_OPERATION,
      variables,
      pick: (data: RestClubsQuery) => data.clubs,
    });
  };
}
