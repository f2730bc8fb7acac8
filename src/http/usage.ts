import { writeUsage, type UsageCounts } from '../data/keys/usage.js';
import type { Database } from '../data/database.js';
import { toAppError } from '../data/platform/errors.js';
import type { Logger } from '../logger.js';

/** How often gathered counts are written (the console's chart is at most this much behind). */
export const USAGE_FLUSH_INTERVAL_MS = 5000;
/** (key, day) pairs held while the database cannot take them; past this, new pairs are dropped (and logged). */
const MAX_PENDING_PAIRS = 100_000;

/**
 * The per-key, per-day request counters of the developer console (requests, 4xx, 429). A request
 * only adds to a map in memory, so the data API's answers never wait for the database; every
 * few seconds the sums are written with `$inc` upserts (src/data/keys/usage.ts). The day is
 * the school's (SCHOOL_TIMEZONE), like every date of the service.
 */
export class UsageRecorder {
  private counts = new Map<string, { keyId: string; day: string; counts: UsageCounts }>();
  private lastUsed = new Map<string, Date>();
  private readonly formatDay: Intl.DateTimeFormat;
  private dayCache = { day: '', validUntilMs: 0 };
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private droppedWarned = false;

  constructor(
    private readonly db: Database,
    private readonly options: { timeZone: string; logger: Logger; now?: () => Date; flushIntervalMs?: number },
  ) {
    this.formatDay = new Intl.DateTimeFormat('en-CA', { timeZone: options.timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  }

  /** Starts the periodic flush (the timer does not keep the process alive). */
  start(): this {
    this.timer ??= setInterval(() => void this.flush(), this.options.flushIntervalMs ?? USAGE_FLUSH_INTERVAL_MS);
    this.timer.unref();
    return this;
  }

  /** Counts one answer to `keyId` with HTTP `status`. Synchronous: no I/O. */
  record(keyId: string, status: number): void {
    const now = this.options.now?.() ?? new Date();
    const day = this.dayOf(now);
    const pair = `${keyId} ${day}`;
    let entry = this.counts.get(pair);
    if (!entry) {
      if (this.counts.size >= MAX_PENDING_PAIRS) return this.warnDropped();
      entry = { keyId, day, counts: { requests: 0, clientErrors: 0, throttled: 0 } };
      this.counts.set(pair, entry);
    }
    entry.counts.requests++;
    if (status >= 400 && status < 500) entry.counts.clientErrors++;
    if (status === 429) entry.counts.throttled++;
    this.lastUsed.set(keyId, now);
  }

  /**
   * Writes what was gathered since the last flush. A failed write puts its counts back, to be
   * written with the next flush; concurrent callers share one flush.
   */
  flush(): Promise<void> {
    this.flushing ??= this.writePending().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async writePending(): Promise<void> {
    if (this.counts.size === 0 && this.lastUsed.size === 0) return;
    const batch = { counts: this.counts, lastUsed: this.lastUsed };
    this.counts = new Map();
    this.lastUsed = new Map();
    try {
      await writeUsage(this.db, batch);
      this.droppedWarned = false;
    } catch (err) {
      this.restore(batch);
      this.options.logger.warn(
        { err: { message: err instanceof Error ? err.message : String(err) } },
        'could not write API key usage; will retry',
      );
    }
  }

  private restore(batch: { counts: Map<string, { keyId: string; day: string; counts: UsageCounts }>; lastUsed: Map<string, Date> }): void {
    for (const [pair, old] of batch.counts) {
      const entry = this.counts.get(pair);
      if (!entry) {
        if (this.counts.size < MAX_PENDING_PAIRS) this.counts.set(pair, old);
        continue;
      }
      entry.counts.requests += old.counts.requests;
      entry.counts.clientErrors += old.counts.clientErrors;
      entry.counts.throttled += old.counts.throttled;
    }
    for (const [keyId, at] of batch.lastUsed) if (!this.lastUsed.has(keyId)) this.lastUsed.set(keyId, at);
  }

  /** The school day of `now`, formatted at most once a second (Intl formatting is the costly part). */
  private dayOf(now: Date): string {
    const ms = now.getTime();
    if (ms >= this.dayCache.validUntilMs || ms < this.dayCache.validUntilMs - 1000) {
      this.dayCache = { day: this.formatDay.format(now), validUntilMs: ms - (ms % 1000) + 1000 };
    }
    return this.dayCache.day;
  }

  private warnDropped(): void {
    if (this.droppedWarned) return;
    this.droppedWarned = true;
    this.options.logger.warn({ pending: MAX_PENDING_PAIRS }, 'API key usage not counted: too many unwritten counters');
  }
}

/** The status an error will be answered with (Koa's http-errors carry their own). */
export function statusOf(err: unknown): number {
  if (err instanceof Error && 'status' in err && typeof err.status === 'number' && err.status >= 400 && err.status < 600) return err.status;
  return toAppError(err).status;
}
