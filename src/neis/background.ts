import type { Config } from '../config/index.js';
import type { Database } from '../data/database.js';
import type { NeisStateDoc } from '../data/models/neis-state.model.js';
import { NeisStore } from '../data/neis/store.js';
import type { Logger } from '../logger.js';
import { NeisScheduler } from './scheduler.js';
import { neisSyncFromConfig, schoolKey } from './sync.js';

/** What a serving process runs for NEIS: the background sync, and its section of /v1/health. */
export interface NeisBackground {
  /** The `neis` section of GET /v1/health. */
  health(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export interface NeisBackgroundDeps {
  readonly config: Config;
  readonly db: Database;
  readonly logger: Logger;
  readonly now?: () => Date;
}

/** Starts the daily sync (when enabled and keyed) and reports it; requests never wait for NEIS. */
export function startNeisBackground(deps: NeisBackgroundDeps): NeisBackground {
  const store = new NeisStore(deps.db);
  const scheduler = startScheduler(deps, store);
  return {
    health: async () => ({ neis: describeSync(await store.state(), scheduler) }),
    close: async () => {
      await scheduler?.stop();
    },
  };
}

function startScheduler(deps: NeisBackgroundDeps, store: NeisStore): NeisScheduler | undefined {
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
    now: deps.now ?? (() => new Date()),
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
      ? Object.fromEntries(
          Object.entries(state.segments).map(([dataset, segments]) => [dataset, segments.map(({ from, to }) => ({ from, to }))]),
        )
      : {},
    scheduler: scheduler
      ? { enabled: true, nextRunAt: next?.at.toISOString() ?? null, nextTrigger: next?.trigger ?? null }
      : { enabled: false },
  };
}
