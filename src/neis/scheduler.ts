import { academicYearWindow, nextDailyRun, todayIn } from '../calendar.js';
import type { NeisStateDoc } from '../data/models/neis-state.model.js';
import type { NeisStore } from '../data/neis/store.js';
import { covers } from '../data/neis/segments.js';
import { NEIS_STALE_AFTER_MS } from '../limits.js';
import type { Logger } from '../logger.js';
import type { NeisSync, SyncResult, SyncTrigger } from './sync.js';

/** setTimeout's longest delay; a longer wait is split (a daily schedule never needs it). */
const MAX_TIMER_MS = 2_147_483_647;

export interface SchedulerOptions {
  readonly sync: NeisSync;
  readonly store: NeisStore;
  readonly logger: Logger;
  readonly now: () => Date;
  /** `office/school` the stored data must belong to. */
  readonly school: string;
  /** HH:MM of the daily run, in `syncTimeZone`. */
  readonly syncTime: string;
  readonly syncTimeZone: string;
  /** The school's zone: "today" and the academic year are reckoned there. */
  readonly schoolTimeZone: string;
  /** Data older than this is synced again at start-up. */
  readonly staleAfterMs?: number;
  /** After a failed run, try again this soon (or at the daily time, whichever comes first). */
  readonly retryAfterMs?: number;
}

/**
 * Why the stored data needs a sync now, or undefined when it is fresh (pure): nothing stored,
 * another school's data, nothing for today, or no successful sync within `staleAfterMs`.
 */
export function staleReason(
  state: NeisStateDoc | null,
  school: string,
  today: string,
  now: Date,
  staleAfterMs: number,
): string | undefined {
  if (!state || state.school === null) return 'no NEIS data is stored yet';
  if (state.school !== school) return `the stored NEIS data belongs to ${state.school}, not ${school}`;
  if (!covers(state.segments.meals, today) || !covers(state.segments.schedules, today)) return `no NEIS data covers today (${today})`;
  if (!state.lastSuccessAt) return 'no NEIS sync has succeeded yet';
  if (now.getTime() - new Date(state.lastSuccessAt).getTime() > staleAfterMs) return 'the last successful NEIS sync is too old';
  return undefined;
}

/**
 * The background sync: once at start-up when the data is missing or stale, then daily at the
 * configured time over the current academic year. A failed run is retried sooner. `stop()`
 * clears the timers and cancels a run in flight.
 */
export class NeisScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private next: { at: Date; trigger: SyncTrigger } | undefined;
  private stopped = false;
  private readonly controller = new AbortController();

  constructor(private readonly options: SchedulerOptions) {}

  /** Starts the start-up check in the background and schedules the daily run. */
  start(): void {
    this.running = this.startup();
  }

  /** When the next run is due, for /v1/health. */
  nextRun(): { at: Date; trigger: SyncTrigger } | undefined {
    return this.next;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.controller.abort();
    await this.running;
  }

  private async startup(): Promise<void> {
    const { store, logger, now, school, schoolTimeZone } = this.options;
    let failed = false;
    try {
      const state = await store.state();
      const reason = staleReason(state, school, todayIn(schoolTimeZone, now()), now(), this.options.staleAfterMs ?? NEIS_STALE_AFTER_MS);
      if (reason) {
        logger.info({ reason }, 'NEIS start-up sync');
        failed = isFailure(await this.runSync('startup'));
      } else {
        logger.info('NEIS data is fresh; no start-up sync');
      }
    } catch (err) {
      failed = true;
      logger.warn({ err: { message: (err as Error).message } }, 'NEIS start-up check failed');
    }
    this.schedule(failed);
  }

  private schedule(afterFailure: boolean): void {
    if (this.stopped) return;
    const { now, syncTime, syncTimeZone } = this.options;
    const current = now();
    const daily = nextDailyRun(current, syncTime, syncTimeZone);
    const retryAt = new Date(current.getTime() + (this.options.retryAfterMs ?? 3_600_000));
    this.next = afterFailure && retryAt < daily ? { at: retryAt, trigger: 'retry' } : { at: daily, trigger: 'daily' };
    const due = this.next;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, due.at.getTime() - current.getTime()));
    this.timer = setTimeout(() => {
      this.running = this.fire(due.trigger);
    }, delay);
    // The schedule alone must not keep a process (a test, a CLI command) alive.
    this.timer.unref();
  }

  private async fire(trigger: SyncTrigger): Promise<void> {
    const result = await this.runSync(trigger);
    this.schedule(isFailure(result));
  }

  private async runSync(trigger: SyncTrigger): Promise<SyncResult | undefined> {
    const { sync, logger, now, schoolTimeZone } = this.options;
    const window = academicYearWindow(todayIn(schoolTimeZone, now()));
    try {
      const result = await sync.run({ ...window, trigger, signal: this.controller.signal });
      if (result.outcome === 'busy') logger.info({ owner: result.owner }, 'NEIS sync skipped: another instance is syncing');
      return result;
    } catch (err) {
      logger.warn({ err: { message: (err as Error).message } }, 'NEIS sync could not run');
      return undefined;
    }
  }
}

function isFailure(result: SyncResult | undefined): boolean {
  return result === undefined || result.outcome === 'failed' || result.outcome === 'partial';
}
