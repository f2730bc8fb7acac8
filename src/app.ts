import Koa from 'koa';
import type { Server } from 'node:http';
import { NotFoundError } from './errors/index.js';
import { createGraphQLServer } from './graphql/server.js';
import { ApiKeyAuthenticator } from './http/api-key.js';
import type { RequestState } from './http/context.js';
import { requestContext } from './http/context.js';
import { envelopeErrors } from './http/errors.js';
import { KeyRateLimiter } from './http/rate-limit.js';
import { SURFACE_NAMES, type AppDeps, type Surface, type SurfaceName } from './http/surface.js';
import { requireTls, trustForwardingFrom } from './http/tls.js';
import { createNeisRoutes } from './neis/routes.js';
import { ResponseCache } from './rest/v1/response-cache.js';
import { dataRoutes } from './rest/v1/router.js';

export type { AppDeps } from './http/surface.js';

export interface App {
  readonly koa: Koa<RequestState>;
  /** The Node request listener (for http.createServer or supertest-style use). */
  callback(): ReturnType<Koa['callback']>;
  /** Stops background work of every surface (the HTTP server is closed by its owner). */
  close(): Promise<void>;
}

export interface AppOptions {
  /** Which surfaces this process serves; all three by default (`campus serve --only ...`). */
  surfaces?: readonly SurfaceName[];
}

/**
 * Builds the Koa app without listening, so tests build the real thing in-process.
 * Mount order: request id and log -> TLS rule -> data API -> authorization server -> userinfo.
 */
export async function createApp(deps: AppDeps, options: AppOptions = {}): Promise<App> {
  const wanted = new Set(options.surfaces ?? SURFACE_NAMES);
  const koa = new Koa<RequestState>();
  // X-Forwarded-* is honoured only from TRUSTED_PROXIES (stripped from anyone else below).
  koa.proxy = deps.config.trustedProxies.length > 0;
  // Behind one trusted proxy the client address is the last X-Forwarded-For entry (the one the
  // proxy appended); entries further left are whatever the client chose to send.
  koa.maxIpsCount = koa.proxy ? 1 : 0;

  const surfaces: Surface[] = [];
  if (wanted.has('data')) surfaces.push(await createDataSurface(deps));
  if (wanted.has('auth') || wanted.has('userinfo')) {
    // Loaded only when served: oidc-provider is heavy and warns about Node 20 at import.
    const oauth = await import('./oauth/index.js');
    if (wanted.has('auth')) surfaces.push(await oauth.createAuthSurface(deps));
    if (wanted.has('userinfo')) surfaces.push(await oauth.createUserinfoSurface(deps));
  }

  koa.use(requestContext(deps.logger));
  if (koa.proxy) koa.use(trustForwardingFrom(deps.config.trustedProxies));
  if (deps.config.isProduction) koa.use(requireTls(deps.config.trustedProxies));
  koa.use(envelopeErrors());
  for (const surface of surfaces) koa.use(surface.middleware);
  koa.use(async () => {
    throw new NotFoundError();
  });

  return {
    koa,
    callback: () => koa.callback(),
    close: async () => {
      for (const surface of surfaces) await surface.close();
    },
  };
}

/** The data API surface: REST endpoints, /graphql and /v1/health. */
async function createDataSurface(deps: AppDeps): Promise<Surface> {
  const graphql = await createGraphQLServer(deps.logger);
  const neis = createNeisRoutes(deps);
  const restDeps = { graphql, db: deps.db, cache: new ResponseCache(), timeZone: deps.config.schoolTimeZone, now: deps.now ?? (() => new Date()) };
  return {
    middleware: dataRoutes({
      ...restDeps,
      authenticator: new ApiKeyAuthenticator(deps.db, deps.now),
      limiter: new KeyRateLimiter(deps.config.rateLimit, deps.redis),
      health: neis.health ? [neis.health] : [],
      extraRoutes: (router, guard) => neis.register(router, guard, restDeps),
    }),
    close: async () => {
      await neis.close();
      await graphql.stop();
    },
  };
}

/** Ends a listening server gracefully: stop accepting, let requests in flight finish. */
export async function closeServer(server: Server, graceMs = 10000): Promise<void> {
  const closed = new Promise<void>((done) => server.close(() => done()));
  // Keep-alive sockets become idle once their request finishes; close them as they do.
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearInterval(sweep);
  clearTimeout(timer);
}
