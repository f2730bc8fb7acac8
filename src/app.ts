import Koa from 'koa';
import type { Server } from 'node:http';
import { NotFoundError } from './errors/index.js';
import { requestFrame, type RequestState } from './http/context.js';
import { AppMetrics } from './http/metrics.js';
import { OAUTH_PATHS } from './oauth/constants.js';
import type { DrainState } from './http/drain.js';
import { probes } from './http/probes.js';
import { requireTls, trustForwardingFrom } from './http/tls.js';
import { createAuthSurface } from './surfaces/auth.js';
import { createDataSurface } from './surfaces/data.js';
import { createUserinfoSurface } from './surfaces/userinfo.js';
import { SURFACE_NAMES, type AppDeps, type PageRoute, type Surface, type SurfaceDeps, type SurfaceName } from './surfaces/types.js';
import { StatusBoard, StatusRecorder } from './data/operations/status.js';

export type { AppDeps } from './surfaces/types.js';

export interface App {
  readonly koa: Koa<RequestState>;
  /** The Node request listener (for http.createServer or supertest-style use). */
  callback(): ReturnType<Koa['callback']>;
  /** Stops background work of every surface (the HTTP server is closed by its owner). */
  close(): Promise<void>;
  /** Every page route of the app with the rule that guards it (tests walk them). */
  readonly pages: readonly PageRoute[];
}

export interface AppOptions {
  /** Which surfaces this process serves; all three by default (`campus serve --only ...`). */
  surfaces?: readonly SurfaceName[];
  /** Whether the process is stopping (`campus serve`: src/http/drain.ts); `/readyz` reads it. */
  drain?: DrainState;
  /** Record the status page's checks every minute (`campus serve`: StatusRecorder), until the app closes. */
  recordStatus?: boolean;
}

/**
 * Builds the Koa app without listening, so tests build the real thing in-process.
 * Mount order: request id and log -> request metrics -> error boundaries (JSON, then the pages'
 * HTML) -> TLS rule (which lets
 * the probes and /metrics through over plain HTTP from loopback and TRUSTED_PROXIES) -> probes
 * (/livez, /readyz) and /metrics (every process answers them, whatever it serves) -> data API
 * -> authorization server -> userinfo -> 404.
 */
export async function createApp(appDeps: AppDeps, options: AppOptions = {}): Promise<App> {
  const wanted = new Set(options.surfaces ?? SURFACE_NAMES);
  // One registry per app: tests build many apps in one process (src/http/metrics.ts).
  const metrics = new AppMetrics(appDeps.db, {
    // oidc-provider routes its paths itself; they are named here for the route label.
    paths: Object.values(OAUTH_PATHS).filter((path) => path !== OAUTH_PATHS.interaction),
    prefixes: [OAUTH_PATHS.interaction, '/v1/oauth'],
  });
  // One status board for every surface: the page, /v1/status and /v1/health show the same checks.
  const status =
    appDeps.status ??
    new StatusBoard({
      db: appDeps.db,
      redis: appDeps.redis,
      config: appDeps.config,
      now: appDeps.now ?? (() => new Date()),
      logger: appDeps.logger,
    });
  const deps: SurfaceDeps = { ...appDeps, metrics, status };
  const koa = new Koa<RequestState>();
  // X-Forwarded-* is honoured only from TRUSTED_PROXIES (stripped from anyone else below).
  koa.proxy = deps.config.trustedProxies.length > 0;
  // Behind one trusted proxy the client address is the last X-Forwarded-For entry (the one the
  // proxy appended); entries further left are whatever the client chose to send.
  koa.maxIpsCount = koa.proxy ? 1 : 0;

  const surfaces: Surface[] = [];
  if (wanted.has('data')) surfaces.push(await createDataSurface(deps));
  // Every page people see lives with the authorization server: the same origin as the login pages.
  // (Imported statically: only `campus serve` loads this module, and one module graph means one
  // AppError class for every boundary, under tsx in the tests as in dist/.)
  if (wanted.has('auth')) surfaces.push(await createAuthSurface(deps));
  if (wanted.has('userinfo')) surfaces.push(await createUserinfoSurface(deps));

  koa.use(requestFrame({ logger: deps.logger, meter: metrics }));
  if (koa.proxy) koa.use(trustForwardingFrom(deps.config.trustedProxies));
  // Errors of requests for pages become pages (the web layer); the rest reach the envelope above.
  for (const surface of surfaces) if (surface.boundary) koa.use(surface.boundary);
  if (deps.config.isProduction) koa.use(requireTls(deps.config.trustedProxies));
  koa.use(probes({ db: deps.db, redis: deps.redis, drain: options.drain }));
  koa.use(
    metrics.endpoint({
      isProduction: deps.config.isProduction,
      trustedProxies: deps.config.trustedProxies,
      token: deps.config.metricsToken,
    }),
  );
  for (const surface of surfaces) koa.use(surface.middleware);
  koa.use(async () => {
    throw new NotFoundError();
  });
  const recorder = options.recordStatus ? new StatusRecorder(status).start() : undefined;

  return {
    koa,
    callback: () => koa.callback(),
    pages: surfaces.flatMap((surface) => surface.pages ?? []),
    close: async () => {
      await recorder?.stop();
      for (const surface of surfaces) await surface.close();
      metrics.close();
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
