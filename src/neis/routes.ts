import type Router from '@koa/router';
import type { ApiScope } from '../data/api-keys.js';
import type { NeisStateDoc } from '../data/models/neis-state.model.js';
import { NeisStore } from '../data/neis.js';
import type { AppMiddleware, RequestState } from '../http/context.js';
import type { HealthContributor } from '../http/health.js';
import type { AppDeps } from '../http/surface.js';
import type { RestDeps } from '../rest/v1/execute.js';
import { mealsHandler, schedulesHandler, timetablesHandler } from '../rest/v1/neis.js';
import { NeisScheduler } from './scheduler.js';
import { neisSyncFromConfig, schoolKey } from './sync.js';

/** The NEIS part of the data surface: its routes, its health section and its background sync. */
export interface NeisRoutes {
  register(router: Router<RequestState>, guard: (scope: ApiScope) => AppMiddleware[], rest: RestDeps): void;
  health?: HealthContributor;
  close(): Promise<void>;
}

/**
 * GET /v1/neis/{meals,schedules,timetables} on the shared pipeline (API key -> rate limit ->
 * NEIS_READ), the `neis` section of /v1/health, and the background sync when enabled.
 */
export function createNeisRoutes(deps: AppDeps): NeisRoutes {
  const now = deps.now ?? (() => new Date());
  const store = new NeisStore(deps.db);
  const scheduler = startScheduler(deps, store, now);
  return {
    register(router, guard, rest) {
      router.get('/v1/neis/meals', ...guard('NEIS_READ'), mealsHandler(rest));
      router.get('/v1/neis/schedules', ...guard('NEIS_READ'), schedulesHandler(rest));
      router.get('/v1/neis/timetables', ...guard('NEIS_READ'), timetablesHandler(rest));
    },
    health: async () => ({ neis: describeSync(await store.state(), scheduler) }),
    close: async () => {
      await scheduler?.stop();
    },
  };
}

function startScheduler(deps: AppDeps, store: NeisStore, now: () => Date): NeisScheduler | undefined {
  const { neis, schoolTimeZone } = deps.config;
  if (!neis.syncEnabled) return undefined;
  if (!neis.apiKey) {
    // Without a key NEIS serves only sample rows; a sync would replace good data with them.
    deps.logger.warn('NEIS_API_KEY is not set: the background NEIS sync is off (`campus neis sync` still runs by hand)');
    return undefined;
  }
  const scheduler = new NeisScheduler({
    sync: neisSyncFromConfig(deps.config, deps.db, deps.logger, deps.now),
    store,
    logger: deps.logger,
    now,
    school: schoolKey(neis.officeCode, neis.schoolCode),
    syncTime: neis.syncTime,
    syncTimeZone: neis.syncTimeZone,
    schoolTimeZone,
  });
  scheduler.start();
  return scheduler;
}

/** The `neis` section of /v1/health: the last sync, what is served, and the next scheduled run. */
export function describeSync(state: NeisStateDoc | null, scheduler: NeisScheduler | undefined): Record<string, unknown> {
  const last = state?.lastSync ?? null;
  const next = scheduler?.nextRun();
  return {
    lastSync: last && {
      time: new Date(last.finishedAt).toISOString(),
      outcome: last.outcome,
      ...(last.error ? { error: last.error } : {}),
      trigger: last.trigger,
      window: { from: last.from, to: last.to },
      datasets: last.datasets,
    },
    lastSuccessAt: state?.lastSuccessAt ? new Date(state.lastSuccessAt).toISOString() : null,
    served: state
      ? Object.fromEntries(Object.entries(state.segments).map(([dataset, segments]) => [dataset, segments.map(({ from, to }) => ({ from, to }))]))
      : {},
    scheduler: scheduler ? { enabled: true, nextRunAt: next?.at.toISOString() ?? null, nextTrigger: next?.trigger ?? null } : { enabled: false },
  };
}
