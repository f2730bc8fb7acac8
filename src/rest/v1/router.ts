import Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import type { ApolloServer } from '@apollo/server';
import { MethodNotAllowedError } from '../../errors/index.js';
import { apiKey, requireScope, type ApiKeyAuthenticator } from '../../http/api-key.js';
import type { AppMiddleware, RequestState } from '../../http/context.js';
import { healthHandler, type HealthContributor } from '../../http/health.js';
import { rateLimit, type KeyRateLimiter } from '../../http/rate-limit.js';
import { createContext, type GraphQLContext } from '../../graphql/context.js';
import { graphqlHttp } from '../../graphql/server.js';
import { clubsHandler } from './clubs.js';
import type { RestDeps } from './execute.js';
import { projectsHandler } from './projects.js';
import { studentsHandler } from './students.js';

export interface DataRoutesDeps extends RestDeps {
  readonly graphql: ApolloServer<GraphQLContext>;
  readonly authenticator: ApiKeyAuthenticator;
  readonly limiter: KeyRateLimiter;
  readonly health: readonly HealthContributor[];
  /** Extra data routes (the NEIS endpoints), registered on the same pipeline. */
  readonly extraRoutes?: (router: Router<RequestState>, guard: (scope: Parameters<typeof requireScope>[0]) => AppMiddleware[]) => void;
}

/** The data API: each endpoint is `apiKey -> rateLimit -> scope -> handler`, errors as envelopes. */
export function dataRoutes(deps: DataRoutesDeps): AppMiddleware {
  const router = new Router<RequestState>();
  // Errors become envelopes in the app-wide boundary (src/app.ts); routes only add their checks.
  const authenticated: AppMiddleware[] = [apiKey(deps.authenticator), rateLimit(deps.limiter)];
  const guard = (scope: Parameters<typeof requireScope>[0]) => [...authenticated, requireScope(scope)];

  router.get('/v1/health', healthHandler(deps.db, deps.health));
  router.get('/v1/students', ...guard('STUDENT_READ'), studentsHandler(deps));
  router.get('/v1/clubs', ...guard('CLUB_READ'), clubsHandler(deps));
  router.get('/v1/projects', ...guard('PROJECT_READ'), projectsHandler(deps));
  deps.extraRoutes?.(router, guard);

  // GraphQL for dashboards: any valid key; each root field checks its own scope.
  const graphql = graphqlHttp(deps.graphql, (ctx) =>
    createContext({ principal: ctx.state.apiKey, db: deps.db, log: ctx.state.log, timeZone: deps.timeZone, now: deps.now }),
  );
  router.get('/graphql', ...authenticated, graphql);
  router.post('/graphql', ...authenticated, bodyParser({ enableTypes: ['json'], jsonLimit: '100kb' }), graphql);

  // The router's context type adds params; our middleware does not read them.
  const routes = router.routes() as unknown as AppMiddleware;
  // A path of this router asked with a method it does not take is 405 (OPTIONS: 204), naming
  // the methods it takes; any other path goes on to the next surface. (The router's own
  // allowedMethods() checks only after the rest of the app ran, whose final 404 throws first.)
  return (ctx, next) =>
    routes(ctx, async () => {
      const matched = (ctx as unknown as { matched?: { methods: string[] }[] }).matched ?? [];
      const allowed = [...new Set(matched.flatMap((layer) => layer.methods))];
      if (allowed.length === 0) return next();
      if (ctx.method === 'OPTIONS') {
        ctx.status = 204;
        ctx.set('Allow', allowed.join(', '));
        return;
      }
      throw new MethodNotAllowedError(allowed);
    });
}
