import type { Redis } from 'ioredis';
import type { Database } from '../data/database.js';
import { MethodNotAllowedError } from '../errors/index.js';
import type { AppContext, AppMiddleware } from './context.js';
import type { DrainState } from './drain.js';
import { errorEnvelope, successEnvelope } from './envelope.js';

/** The probe paths; src/http/tls.ts lets them through over plain HTTP from loopback and TRUSTED_PROXIES. */
export const PROBE_PATHS = { live: '/livez', ready: '/readyz' } as const;

/**
 * Prometheus's scrape path (src/http/metrics.ts). Declared here with the probes, whose TLS
 * exception it shares (src/http/tls.ts), so that tls.ts need not import the metrics module.
 */
export const METRICS_PATH = '/metrics';

/** A check that takes longer than this counts as down: a probe must answer within its own timeout. */
export const PROBE_CHECK_TIMEOUT_MS = 2000;

type CheckState = 'UP' | 'DOWN';

export interface ProbeDeps {
  readonly db: Database;
  /** Checked only when configured (REDIS_URL). */
  readonly redis?: Redis | undefined;
  /** Set by `campus serve` (src/main.ts): a process that is stopping is not ready, whatever it reaches. */
  readonly drain?: DrainState | undefined;
}

/**
 * Liveness and readiness for load balancers and orchestrators, answered by every process
 * whatever surfaces it serves (src/app.ts mounts them ahead of the surfaces):
 * - `GET /livez`: the process answers (200); nothing is checked, so a database outage never
 *   gets a healthy process restarted.
 * - `GET /readyz`: the database answers a ping and, when REDIS_URL is set, Redis does (200);
 *   otherwise 503, so traffic goes elsewhere until they return. From SIGTERM on, 503 at once
 *   without a check (src/http/drain.ts), while the process goes on serving for its drain.
 * No key, `Cache-Control: no-store`, and nothing about the data: no counts, versions or sync
 * state (/v1/health keeps those, under the TLS rule like any data path).
 */
export function probes(deps: ProbeDeps): AppMiddleware {
  const answer = async (ctx: AppContext): Promise<void> => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new MethodNotAllowedError(['GET', 'HEAD']);
    ctx.set('Cache-Control', 'no-store');
    if (ctx.path === PROBE_PATHS.live) {
      ctx.body = successEnvelope({ process: 'UP' });
      return;
    }
    if (deps.drain?.draining) {
      ctx.status = 503;
      ctx.body = errorEnvelope(503, 'Not ready: this process is stopping.');
      return;
    }
    const checks = await readiness(deps);
    if (Object.values(checks).every((state) => state === 'UP')) {
      ctx.body = successEnvelope(checks);
    } else {
      ctx.status = 503;
      ctx.set('Retry-After', '5');
      ctx.body = errorEnvelope(503, `Not ready: ${downList(checks)} unreachable.`);
    }
  };
  // Every other request passes straight on, without an async frame of its own (docs/benchmarks.md, "A warm answer's fixed cost").
  return (ctx, next) => (ctx.path === PROBE_PATHS.live || ctx.path === PROBE_PATHS.ready ? answer(ctx) : next());
}

async function readiness(deps: ProbeDeps): Promise<Record<string, CheckState>> {
  const [database, redis] = await Promise.all([
    check(() => deps.db.ping()),
    deps.redis ? check(async () => void (await deps.redis?.ping())) : undefined,
  ]);
  return { database, ...(redis ? { redis } : {}) };
}

/** UP when `probe` resolves within PROBE_CHECK_TIMEOUT_MS. */
async function check(probe: () => Promise<void>): Promise<CheckState> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckState>((done) => {
    timer = setTimeout(() => done('DOWN'), PROBE_CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      probe().then(
        (): CheckState => 'UP',
        (): CheckState => 'DOWN',
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function downList(checks: Record<string, CheckState>): string {
  const names = Object.entries(checks)
    .filter(([, state]) => state === 'DOWN')
    .map(([name]) => (name === 'database' ? 'the database' : 'Redis'));
  return `${names.join(' and ')} ${names.length > 1 ? 'are' : 'is'}`;
}
