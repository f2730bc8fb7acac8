import { z } from 'zod';
import { LIMITS } from '../../graphql/args.js';
import { PROJECT_STATUSES } from '../../data/models/project.model.js';
import type { AppMiddleware } from '../../http/context.js';
import type { RestProjectsQuery, RestProjectsQueryVariables } from './__generated__/operations.js';
import { respondWithOperation, type RestDeps } from './execute.js';
import { PROJECTS_OPERATION } from './operations/projects.js';
import { defined, enumParam, intParam, memoByQueryString, parseQuery, textParam } from './params.js';

/** Every query parameter of GET /v1/projects (spec + DECISIONS.md); unknown ones are ignored. */
export const projectsQuery = z.object({
  projectId: intParam(LIMITS.id).optional(),
  projectName: textParam().optional(),
  clubId: intParam(LIMITS.id).optional(),
  status: enumParam(PROJECT_STATUSES).optional(),
  page: intParam(LIMITS.page).optional(),
  size: intParam(LIMITS.size).optional(),
  sortBy: enumParam(['ID', 'NAME']).optional(),
  sortDirection: enumParam(['ASC', 'DESC']).optional(),
});

export function projectsVariables(q: z.output<typeof projectsQuery>): RestProjectsQueryVariables {
  const { page, size, sortBy, sortDirection, ...filter } = q;
  return defined({ filter: defined(filter), page, size, sortBy, sortDirection });
}

/** GET /v1/projects */
export function projectsHandler(deps: RestDeps): AppMiddleware {
  const request = memoByQueryString((query) => {
    const variables = projectsVariables(parseQuery(projectsQuery, query));
    return { variables, cacheKey: `projects:${JSON.stringify(variables)}` };
  });
  return async (ctx) => {
    const { variables, cacheKey } = request(ctx.querystring, () => ctx.query);
    await respondWithOperation(ctx, deps, {
      cacheKey,
      query: PROJECTS_OPERATION,
      variables,
      pick: (data: RestProjectsQuery) => data.projects,
    });
  };
}
