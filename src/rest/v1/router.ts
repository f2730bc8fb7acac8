import Router from '@koa/router';
import type { Next } from 'koa';
import bodyParser from 'koa-bodyparser';
import compose from 'koa-compose';
import type { ApolloServer } from '@apollo/server';
import { MethodNotAllowedError } from '../../errors/index.js';
import { apiKey, requireScope, type ApiKeyAuthenticator } from '../../http/api-key.js';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
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

  return dispatch(router);
}

/** Most (method, path) pairs whose composed chain is kept; beyond that, chains are built per request. */
const MAX_CACHED_CHAINS = 256;

/**
 * Serves the router's routes, composing each matched route's middleware once per (method, path)
 * rather than on every request as the router's own dispatch does: these routes take no path
 * parameters, so what a (method, path) runs never changes. The router stays the one place that
 * defines and matches routes. A path it knows asked with a method it does not take is 405
 * (OPTIONS: 204), naming the methods it takes; any other path goes on to the next surface.
 */
function dispatch(router: Router<RequestState>): AppMiddleware {
  for (const layer of router.stack) {
    if (layer.paramNames.length > 0) throw new Error(`data routes take no path parameters (${String(layer.path)})`);
  }
  const chains = new Map<string, AppMiddleware>();
  return (ctx, next) => {
    const key = `${ctx.method} ${ctx.path}`;
    let chain = chains.get(key);
    if (!chain) {
      const match = router.match(ctx.path, ctx.method);
      if (!match.route) return notThisMethod(ctx, next, match.path);
      chain = compose(match.pathAndMethod.flatMap((layer) => layer.stack as AppMiddleware[]));
      if (chains.size < MAX_CACHED_CHAINS) chains.set(key, chain);
    }
    return chain(ctx, next);
  };
}

/** No route takes this method: 405 (or 204 to OPTIONS) when the path is ours, else the next surface. */
function notThisMethod(ctx: AppContext, next: Next, layers: readonly { methods: string[] }[]): Promise<void> {
  const allowed = [...new Set(layers.flatMap((layer) => layer.methods))];
  if (allowed.length === 0) return next();
  if (ctx.method !== 'OPTIONS') throw new MethodNotAllowedError(allowed);
  ctx.status = 204;
  ctx.set('Allow', allowed.join(', '));
  return Promise.resolve();
}
