import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database } from '../data/database.js';
import { ForbiddenError, MethodNotAllowedError } from '../errors/index.js';
import type { AppContext, AppMiddleware } from './context.js';
import { METRICS_PATH, PROBE_PATHS } from './probes.js';
import { sameSecret } from '../compare.js';
import { fromLoopbackOrProxy } from './tls.js';

/** Headers a proxy adds to what it forwards: their presence means the request came through one. */
const FORWARDED_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip'] as const;

function forwarded(ctx: AppContext): boolean {
  return FORWARDED_HEADERS.some((name) => ctx.req.headers[name] !== undefined);
}

/**
 * How paths outside any router are labelled (src/app.ts gives the authorization server's, whose
 * routes oidc-provider keeps to itself): a fixed path by itself, a path below a prefix as
 * `<prefix>/*`; anything else unrouted is `other`.
 */
export interface RouteNames {
  readonly paths: readonly string[];
  /** Longest first where they nest. */
  readonly prefixes: readonly string[];
}

/** Seconds; database operations are mostly well under a millisecond on `_id`. */
const DB_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * Default process metrics (CPU, memory, event-loop lag, GC, handles), in one registry per
 * process: they describe the process, not an app, and prom-client's collectors install
 * observers (GC, event-loop delay) that cannot be removed, so one per app would leak in tests,
 * which build many apps. Made on the first scrape.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

type HttpLabels = 'method' | 'route' | 'status';

/** What became of a password sign-in (campus_login_attempts_total). */
export type LoginOutcome = 'succeeded' | 'failed' | 'unchecked' | 'locked';

/**
 * The Prometheus metrics of one app (src/app.ts makes one per app; tests build many): HTTP
 * requests and their durations per route pattern and status, database operation durations and
 * read-model loads (from the data layer's telemetry, src/data/platform/telemetry.ts), answer-cache hits and
 * misses (src/rest/response-cache.ts), rate-limit refusals, and NEIS sync results.
 */
export class AppMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter<HttpLabels>({
    name: 'campus_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });
  private readonly durations = new Histogram<HttpLabels>({
    name: 'campus_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  private readonly refusals = new Counter<'route'>({
    name: 'campus_rate_limit_refusals_total',
    help: 'Requests refused by a rate limit (429), by route pattern.',
    labelNames: ['route'],
    registers: [this.registry],
  });
  private readonly cache = new Counter<'result'>({
    name: 'campus_response_cache_lookups_total',
    help: 'Lookups in the data API answer cache, by result (hit or miss).',
    labelNames: ['result'],
    registers: [this.registry],
  });
  private readonly operations = new Histogram<'collection' | 'operation' | 'outcome'>({
    name: 'campus_db_operation_duration_seconds',
    help: 'Duration of database operations made through the models, by collection, operation and outcome.',
    labelNames: ['collection', 'operation', 'outcome'],
    buckets: DB_BUCKETS,
    registers: [this.registry],
  });
  private readonly loads = new Histogram({
    name: 'campus_read_model_load_duration_seconds',
    help: "Duration of loads of the school's in-memory read model.",
    buckets: DB_BUCKETS,
    registers: [this.registry],
  });
  private readonly syncs = new Counter<'outcome' | 'trigger'>({
    name: 'campus_neis_sync_total',
    help: 'NEIS sync runs, by outcome (ok, partial, failed) and trigger.',
    labelNames: ['outcome', 'trigger'],
    registers: [this.registry],
  });
  private readonly syncDatasets = new Counter<'dataset' | 'outcome'>({
    name: 'campus_neis_sync_datasets_total',
    help: 'NEIS datasets synced, by dataset and outcome (ok, failed).',
    labelNames: ['dataset', 'outcome'],
    registers: [this.registry],
  });
  private readonly logins = new Counter<'outcome'>({
    name: 'campus_login_attempts_total',
    help: 'Password sign-ins, by outcome: succeeded, failed (both checked the password), unchecked (refused: the address spent its failures on the account), locked (the account is soft-locked).',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  private readonly unsubscribe: (() => void)[];
  private readonly paths: ReadonlySet<string>;
  private readonly prefixes: readonly string[];

  constructor(db: Database, names: RouteNames = { paths: [], prefixes: [] }) {
    this.paths = new Set([...Object.values(PROBE_PATHS), METRICS_PATH, ...names.paths]);
    this.prefixes = names.prefixes;
    const telemetry = db.telemetry;
    this.unsubscribe = [
      telemetry.onOperation((sample) =>
        this.operations.observe(
          { collection: sample.collection, operation: sample.operation, outcome: sample.failed ? 'failed' : 'ok' },
          sample.seconds,
        ),
      ),
      telemetry.onReadModelLoad((load) => this.loads.observe(load.seconds)),
      telemetry.onNeisSync((report) => {
        this.syncs.inc({ outcome: report.outcome, trigger: report.trigger });
        for (const [dataset, result] of Object.entries(report.datasets)) {
          if (result) this.syncDatasets.inc({ dataset, outcome: result.outcome });
        }
      }),
    ];
  }

  /** For the login page (src/surfaces/web/login.ts): what the throttle made of each password sign-in. */
  readonly loginAttempt = (outcome: LoginOutcome): void => {
    this.logins.inc({ outcome });
  };

  /** For the answer cache (src/rest/response-cache.ts). */
  readonly cacheLookup = (hit: boolean): void => {
    this.cache.inc({ result: hit ? 'hit' : 'miss' });
  };

  /**
   * Counts and times a request once it is answered (the request frame calls it: src/http/context.ts),
   * with the status its error envelope got, if any. Surfaces that write the response themselves
   * (oidc-provider, `ctx.respond = false`) have finished writing by then; the Node response's
   * status is read for them all.
   */
  record(ctx: AppContext, seconds: number): void {
    const labels = { method: ctx.method, route: this.routeOf(ctx), status: String(ctx.res.statusCode) };
    this.requests.inc(labels);
    this.durations.observe(labels, seconds);
    if (ctx.res.statusCode === 429) this.refusals.inc({ route: labels.route });
  }

  /**
   * GET /metrics: the app's series and the process's, in Prometheus's text format. In
   * production only from loopback or TRUSTED_PROXIES (the probes' rule, src/http/tls.ts), even
   * over TLS: the figures describe the service's traffic and are for its operators. A request
   * that came *through* a proxy (it carries a forwarded header) is anyone on the internet as far
   * as the socket can tell (its peer is the proxy), so it is served only with
   * `Authorization: Bearer <METRICS_TOKEN>`, in every mode; without METRICS_TOKEN, never.
   */
  endpoint(options: { isProduction: boolean; trustedProxies: readonly string[]; token?: string | undefined }): AppMiddleware {
    const allowed = fromLoopbackOrProxy(options.trustedProxies);
    const serve = async (ctx: AppContext): Promise<void> => {
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new MethodNotAllowedError(['GET', 'HEAD']);
      if (forwarded(ctx)) {
        const presented = /^Bearer (\S+)$/.exec(ctx.get('Authorization'))?.[1];
        if (!options.token || !sameSecret(presented, options.token)) {
          throw new ForbiddenError(
            'Metrics are not served through the proxy without Authorization: Bearer <METRICS_TOKEN>; scrape this machine directly.',
          );
        }
      } else if (options.isProduction && !allowed(ctx)) {
        throw new ForbiddenError('Metrics are served only to this machine and the trusted proxies.');
      }
      ctx.set('Cache-Control', 'no-store');
      ctx.type = this.registry.contentType;
      ctx.body = `${await this.registry.metrics()}\n${await processMetrics().metrics()}`;
    };
    // Every other request passes straight on, without an async frame of its own (docs/benchmarks.md, "A warm answer's fixed cost").
    return (ctx, next) => (ctx.path === METRICS_PATH ? serve(ctx) : next());
  }

  close(): void {
    for (const stop of this.unsubscribe) stop();
    this.registry.clear();
  }

  /**
   * The route label: the pattern the router matched (`/v1/students`, `/admin/students/:id`;
   * @koa/router leaves it on the context), a known path outside the routers, a known prefix, or
   * `other`; never the raw URL, whose variety would make a series per path ever asked.
   */
  private routeOf(ctx: AppContext): string {
    const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
    if (typeof matched === 'string') return matched;
    if (this.paths.has(ctx.path)) return ctx.path;
    const prefix = this.prefixes.find((p) => ctx.path.startsWith(`${p}/`));
    return prefix ? `${prefix}/*` : 'other';
  }
}
