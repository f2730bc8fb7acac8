import Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import compose from 'koa-compose';
import type { ApiScope } from '../data/__generated__/enums.js';
import { Gate } from '../data/platform/budget.js';
import { MethodNotAllowedError } from '../errors/index.js';
import { createContext } from '../graphql/context.js';
import { buildSchema } from '../graphql/schema.js';
import { createGraphQLServer } from '../graphql/server.js';
import { ApiKeyAuthenticator, apiKey, requireScope } from '../http/api-key.js';
import { keyOrBearer } from '../http/bearer.js';
import { AppService } from '../oauth/apps.js';
import { dataApiResource, machineTokensFor } from '../oauth/machine-tokens.js';
import { dataApiMetadata, metadataHandler, metadataPath, metadataUrl } from '../oauth/protected-resources.js';
import { loadOAuthKeys } from '../oauth/signing-keys.js';
import { timeBudget } from '../http/budget.js';
import type { AppMiddleware, RequestState } from '../http/context.js';
import { DOCS_PATH, OPENAPI_PATH, SCHEMA_PATH, docsAssets, docsPage, graphqlSdl, openApiJson } from '../http/docs.js';
import { graphqlHttp } from '../http/graphql.js';
import { healthHandler } from '../http/health.js';
import { STATUS_PATH, statusHandler } from '../http/status.js';
import { rolloverHealth } from '../data/operations/status.js';
import { FailureLimiter, KeyRateLimiter, addressRateLimit, costCharge, rateLimit } from '../http/rate-limit.js';
import { UsageRecorder } from '../http/usage.js';
import { startNeisBackground } from '../neis/background.js';
import { ENDPOINTS, endpointScopes, isPublic, pathPattern } from '../rest/endpoints.js';
import { endpointSteps, type RestDeps } from '../rest/handler.js';
import { buildOpenApiDocument } from '../rest/openapi.js';
import { ResponseCache } from '../rest/response-cache.js';
import type { Surface, SurfaceDeps } from './types.js';

/** The body a GraphQL document may have. */
const GRAPHQL_BODY_LIMIT = '100kb';

/**
 * The data API: every row of the endpoint table (src/rest/endpoints.ts), POST/GET /graphql,
 * GET /v1/health, GET /v1/status (the status page's report), and the API reference, which needs no key (GET /v1/openapi.json, built from
 * the same rows, GET /graphql/schema.graphql, the executed schema as SDL for graphql-codegen, and
 * the page GET /docs). A data request goes
 * `timeBudget -> apiKey (and its usage count) -> notModified -> rateLimit -> scope -> handler`
 * (notModified answers a conditional request whose answer the caller holds, without spending the
 * rate limit: src/rest/handler.ts); errors become envelopes in the app-wide boundary, the request
 * frame (src/http/context.ts). Health has no budget: it is the probe that must answer while
 * others are slow.
 */
export async function createDataSurface(deps: SurfaceDeps): Promise<Surface> {
  const { config, db } = deps;
  const now = deps.now ?? (() => new Date());
  const limits = config.dataLimits;
  // One schema object: Apollo executes it, and the OpenAPI document and the SDL are printed from it.
  const schema = buildSchema();
  const graphql = await createGraphQLServer(deps.logger, schema);
  const neis = startNeisBackground({ config, db, logger: deps.logger, now });
  const rest: RestDeps = {
    graphql,
    db,
    cache: new ResponseCache(undefined, deps.metrics?.cacheLookup),
    timeZone: config.schoolTimeZone,
    now,
  };
  const limiter = new KeyRateLimiter(config.rateLimit, deps.redis, config.rateLimitAggregates);
  const usage = new UsageRecorder(db, { timeZone: config.schoolTimeZone, logger: deps.logger, now }).start();
  // One instance of each step for every route: they hold the process's database slots, key
  // cache and failure counts.
  const budget = timeBudget({
    timeMs: limits.timeBudgetMs,
    maxDbOperations: limits.maxDbOperations,
    // Data requests share these database slots; logins, userinfo and health never wait for them.
    databaseGate: new Gate('The database', limits.dbConcurrency),
  });
  // An API key, or an app's machine token read as a key with its scopes (src/oauth/machine-tokens.ts).
  const resource = dataApiResource(config.urls.base);
  const apps = new AppService(db, { isProduction: config.isProduction, policy: config.policy });
  const machineTokens = machineTokensFor(config, await loadOAuthKeys(config, db), apps, db, now);
  const credentials = keyOrBearer(new ApiKeyAuthenticator(db, config.policy, deps.now), machineTokens, metadataUrl(resource));
  const door: AppMiddleware[] = [
    budget,
    // Per-key (and per-app), per-day counts for the developer console (in memory; written every few seconds).
    apiKey(credentials, {
      failures: new FailureLimiter(limits.apiKeyFailures, deps.redis),
      usage,
    }),
  ];
  const limited = rateLimit(limiter);

  const routes = new Routes();
  // Health says whether a rollover is being applied (src/data/events/announcements.ts).
  routes.get('/v1/health', healthHandler(db, [neis.health, () => rolloverHealth(db)]));
  // Where machine tokens come from (RFC 9728); every 401 of the door names it.
  routes.get(metadataPath(resource), metadataHandler(dataApiMetadata(config)));
  routes.get(OPENAPI_PATH, openApiJson(buildOpenApiDocument(ENDPOINTS, schema)));
  routes.get(SCHEMA_PATH, graphqlSdl(schema));
  // The pages live with the authorization server (AUTH_URL), which may be another address.
  const pages = config.urls.auth === config.urls.base ? '' : config.urls.auth;
  routes.get(DOCS_PATH, docsPage({ home: `${pages}/`, console: `${pages}/console`, admin: `${pages}/admin` }));
  for (const asset of docsAssets()) routes.get(asset.path, asset.handler);
  // The endpoints without a key spend a budget per client address instead of a key's (docs/decisions.md, "Projects without a key").
  const addressLimited = addressRateLimit(limiter, limits.publicRequests);
  // The status page's report (src/http/status.ts): no key, limited per address like the public projects.
  routes.get(STATUS_PATH, addressLimited, statusHandler(deps.status));
  for (const endpoint of ENDPOINTS) {
    const steps = endpointSteps(endpoint, rest);
    if (isPublic(endpoint)) routes.get(endpoint.path, budget, steps.notModified, addressLimited, steps.serve);
    else routes.get(endpoint.path, ...door, steps.notModified, limited, requireScope(...scopesOf(endpoint)), steps.serve);
  }
  // GraphQL for dashboards: any valid key; each root field checks its own scope; a document
  // pays for its cost and waits for one of the process's execution slots.
  const graphqlHandler = graphqlHttp(graphql, {
    context: (ctx, admit) =>
      createContext({ principal: ctx.state.apiKey, db, log: ctx.state.log, timeZone: config.schoolTimeZone, now, admit }),
    admit: costCharge(limiter, limits.graphqlCostPerPoint),
    gate: new Gate('The GraphQL endpoint', limits.graphqlConcurrency, limits.graphqlQueue),
  });
  routes.get('/graphql', ...door, limited, graphqlHandler);
  routes.post('/graphql', ...door, limited, bodyParser({ enableTypes: ['json'], jsonLimit: GRAPHQL_BODY_LIMIT }), graphqlHandler);

  return {
    middleware: routes.middleware(),
    close: async () => {
      await neis.close();
      await usage.close();
      await graphql.stop();
    },
  };
}

/** An endpoint's scopes as requireScope takes them: one, then any others that admit too. */
function scopesOf(endpoint: (typeof ENDPOINTS)[number]): [ApiScope, ...ApiScope[]] {
  const [first, ...others] = endpointScopes(endpoint);
  if (!first) throw new Error(`${endpoint.path} names no scope`);
  return [first, ...others];
}

/**
 * The router of the data surface and the methods each of its paths takes. A path of ours asked
 * with another method is 405 naming the methods it takes (OPTIONS: 204); any other path goes on
 * to the next surface.
 */
class Routes {
  private readonly router = new Router<RequestState>();
  private readonly methods = new Map<string, string[]>();
  /** The steps of each path without parameters, by method: what the router would run for it. */
  private readonly exact = new Map<string, Map<string, AppMiddleware>>();

  /** `path` may name parameters as the endpoint table does (`/v1/public/projects/{id}`). */
  get(path: string, ...middleware: AppMiddleware[]): void {
    // Composed once here rather than by the router on every request (docs/benchmarks.md, "A warm answer's fixed cost").
    const steps = compose(middleware);
    this.router.get(path.replace(/\{(\w+)\}/g, ':$1'), steps);
    this.allow(path, steps, 'HEAD', 'GET');
  }

  post(path: string, ...middleware: AppMiddleware[]): void {
    const steps = compose(middleware);
    this.router.post(path, steps);
    this.allow(path, steps, 'POST');
  }

  middleware(): AppMiddleware {
    const methods = this.methods;
    // Paths with parameters are matched by pattern (a parameter is one path segment).
    const patterns = [...methods.entries()]
      .filter(([path]) => path.includes('{'))
      .map(([path, allowed]) => ({ pattern: pathPattern(path), allowed }));
    const methodsOf = (path: string) => methods.get(path) ?? patterns.find((p) => p.pattern.test(path))?.allowed;
    const dispatch = this.router.routes();
    // The router's middleware types its context with the params it adds; ours is the same Koa context.
    const routed: AppMiddleware = (ctx, next) => dispatch(ctx as Parameters<typeof dispatch>[0], next);
    const methodRules: AppMiddleware = (ctx, next) => {
      const allowed = methodsOf(ctx.path.length > 1 ? ctx.path.replace(/\/$/, '') : ctx.path);
      if (!allowed || allowed.includes(ctx.method)) return routed(ctx, next);
      if (ctx.method !== 'OPTIONS') throw new MethodNotAllowedError(allowed);
      ctx.status = 204;
      ctx.set('Allow', allowed.join(', '));
      return Promise.resolve();
    };
    const exact = this.exact;
    // A path of ours asked as written with a method it takes (the usual request) runs its steps
    // from the table: the router would match the same one route, but only after testing every
    // route's pattern and composing the match anew, on every request (docs/benchmarks.md, "A warm
    // answer's fixed cost"). Anything else (a parameter, a trailing slash, other letter case, another
    // method) goes through the method rules and the router.
    return (ctx, next) => {
      const steps = exact.get(ctx.path)?.get(ctx.method);
      if (!steps) return methodRules(ctx, next);
      // The route label of the metrics (src/http/metrics.ts), as the router sets it.
      (ctx as { _matchedRoute?: string })._matchedRoute = ctx.path;
      return steps(ctx, next);
    };
  }

  private allow(path: string, steps: AppMiddleware, ...methods: string[]): void {
    this.methods.set(path, [...(this.methods.get(path) ?? []), ...methods]);
    if (path.includes('{')) return;
    const byMethod = this.exact.get(path) ?? new Map<string, AppMiddleware>();
    for (const method of methods) byMethod.set(method, steps);
    this.exact.set(path, byMethod);
  }
}
