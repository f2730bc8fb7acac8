import type { Redis } from 'ioredis';
import type { Config } from '../../config/index.js';
import { addDays } from '../../calendar.js';
import { NEIS_STALE_AFTER_MS } from '../../limits.js';
import type { Logger } from '../../logger.js';
import type { Database } from '../database.js';
import { openAnnouncement, type AnnouncementDoc } from '../events/announcements.js';
import { deliveryBacklog } from '../events/webhooks.js';
import { NEIS_DATASETS } from '../models/neis-state.model.js';
import { NeisStore } from '../neis/store.js';
import { isDuplicateKey } from '../platform/errors.js';
import { Lease } from '../platform/lease.js';
import { UPLOAD_LIFETIME_MS } from '../school/uploads.js';
import { Incidents, isClosed, isUnderWay, type IncidentDoc, type IncidentKind, type IncidentState } from './incidents.js';
import {
  availabilityOf,
  compactHistory,
  HISTORY_DAYS,
  minuteOf,
  readHistory,
  recordObservations,
  RECORDER_LEASE,
  type Observation,
  type RecordedState,
  type StatusDayDoc,
} from './status-history.js';
import { STATUS_PARTS, type StatusPart } from './status-parts.js';

/*
 * The status page's source (docs/operations.md, "The status page"): `GET /v1/status`, `/status`
 * and `campus status` all show StatusBoard.report(). Every part of the service has a check
 * (CHECKS below: what the part rests on, asked the way it asks); `campus serve` runs them every
 * minute (StatusRecorder) and records the states in the database (src/data/operations/status-history.ts),
 * where every process's minutes meet. A process keeps what it observed while the database was
 * away and records it once the database is back, so an outage shows in the history. Incidents
 * and maintenance come from staff (src/data/operations/incidents.ts); a rollover under way from
 * its announcement (src/data/events/announcements.ts); a rollover in preview from the kept upload.
 * The clock is the deps' `now`: tests move it.
 */

/** A part's state now: OFF is a part that is not running here (the NEIS sync switched off), never recorded. */
export type PartState = RecordedState | 'OFF';

/** Why a part is not up, when its check says (`detail.reason`). */
export const CHECK_REASONS = ['TIMEOUT', 'UNREACHABLE', 'SLOW'] as const;
export type CheckReason = (typeof CHECK_REASONS)[number];

/** One part's check: its state and what it found (numbers and dates; no data of the school). */
export interface PartCheck {
  readonly part: StatusPart;
  readonly state: PartState;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** The checks of one minute. */
export interface Checked {
  readonly at: Date;
  readonly parts: readonly PartCheck[];
}

/** What the board needs of the configuration. */
export interface StatusConfig {
  readonly schoolTimeZone: string;
  readonly neis: Pick<Config['neis'], 'syncEnabled' | 'apiKey'>;
}

export interface StatusBoardDeps {
  readonly db: Database;
  /** Checked only when configured (REDIS_URL). */
  readonly redis?: Redis | undefined;
  readonly config: StatusConfig;
  readonly now: () => Date;
  readonly logger?: Logger | undefined;
}

/** A check that takes longer than this counts as down (the probes' limit too: src/http/probes.ts). */
const CHECK_TIMEOUT_MS = 2000;
/** A check that answers, but slower than this, counts as degraded. */
const SLOW_MS = 1000;
/** The minute checks are this old at most before a report checks again (a process without the recorder). */
const CHECKS_FRESH_MS = 90_000;
/** What was read from the database (history, incidents) is read again when older than this. */
const STORED_FRESH_MS = 10_000;
/** How long a report waits for that read before it shows what it read last. */
const STORED_WAIT_MS = 1500;
/** Minutes kept while the database is away (a day), recorded once it is back. */
const MAX_PENDING = 1440;
/** Webhook events waiting longer than this make delivery degraded. */
const DELIVERY_LATE_MS = 10 * 60_000;
/** Past incidents the report lists (the newest, from the last HISTORY_DAYS days). */
const PAST_INCIDENTS = 20;

type Outcome = { readonly state: PartState; readonly detail?: Record<string, unknown> & { readonly reason?: CheckReason } } | null;
type Check = (deps: StatusBoardDeps) => Promise<Outcome>;

/** The `meta` document each minute's sign-in check writes: sign-in and tokens write their records. */
const WRITE_PROBE_ID = 'status:write-probe';

/**
 * Each part's check, asked the way the part asks: null when the part does not run here (Redis
 * without REDIS_URL). A check that throws is DOWN; one that answers slowly, DEGRADED.
 */
const CHECKS: Readonly<Record<StatusPart, Check>> = {
  // The data API reads the school at the current data version (src/data/school/read-model.ts):
  // a change its writer left unsettled holds it up past the check's time, as it holds up requests.
  'data-api': async ({ db }) => {
    await db.versions.readFresh();
    await db.school.snapshot();
    return { state: 'UP' };
  },
  // A sign-in and a token exchange write their records (src/oauth/adapter.ts) and read them back.
  'sign-in': async ({ db, now }) => {
    await db.client
      .db()
      .collection<{ _id: string; at: Date }>('meta')
      .updateOne({ _id: WRITE_PROBE_ID }, { $set: { at: now() } }, { upsert: true })
      .catch((err: unknown) => {
        // Two processes' first probes race to create it: the loser finds it made.
        if (!isDuplicateKey(err)) throw err;
      });
    await db.models.oauthRecords.findById(WRITE_PROBE_ID).lean();
    return { state: 'UP' };
  },
  // Userinfo checks a token's grant (the OAuth version and records) and reads the account's student.
  userinfo: async ({ db }) => {
    await db.versions.readFresh();
    await db.models.oauthRecords.findById(WRITE_PROBE_ID).lean();
    await db.school.snapshot();
    return { state: 'UP' };
  },
  database: async ({ db }) => {
    await db.ping();
    return { state: 'UP' };
  },
  redis: async ({ redis }) => {
    if (!redis) return null;
    await redis.ping();
    return { state: 'UP' };
  },
  neis: checkNeis,
  webhooks: async ({ db, now }) => {
    const backlog = await deliveryBacklog(db);
    const waited = backlog.oldestPendingAt ? now().getTime() - backlog.oldestPendingAt.getTime() : 0;
    return {
      state: waited > DELIVERY_LATE_MS ? 'DEGRADED' : 'UP',
      detail: {
        backlog: backlog.backlog,
        oldestPendingAt: backlog.oldestPendingAt?.toISOString() ?? null,
        oldestPendingSeconds: backlog.oldestPendingAt ? Math.max(0, Math.round(waited / 1000)) : null,
        retrying: backlog.retrying,
        failing: backlog.failing,
      },
    };
  },
};

/** Each dataset: when it last synced, how old its data is; degraded when older than NEIS_STALE_AFTER_MS. OFF when the sync does not run. */
async function checkNeis({ db, config, now }: StatusBoardDeps): Promise<Outcome> {
  const state = await new NeisStore(db).state();
  const at = now().getTime();
  const datasets = Object.fromEntries(
    NEIS_DATASETS.map((dataset) => {
      const success = state?.datasetSuccessAt?.[dataset] ?? state?.lastSuccessAt ?? null;
      const ageMs = success ? Math.max(0, at - new Date(success).getTime()) : null;
      return [
        dataset,
        {
          state: ageMs !== null && ageMs <= NEIS_STALE_AFTER_MS ? 'UP' : 'DEGRADED',
          lastSuccessAt: success ? new Date(success).toISOString() : null,
          ageSeconds: ageMs === null ? null : Math.round(ageMs / 1000),
          lastOutcome: state?.lastSync?.datasets[dataset]?.outcome ?? null,
        },
      ];
    }),
  );
  const running = config.neis.syncEnabled && Boolean(config.neis.apiKey);
  const stale = Object.values(datasets).some((d) => d.state !== 'UP');
  return { state: !running ? 'OFF' : stale ? 'DEGRADED' : 'UP', detail: { sync: running ? 'ON' : 'OFF', datasets } };
}

/** Runs one check within CHECK_TIMEOUT_MS: its outcome, DEGRADED when slow, DOWN when it fails or times out. */
async function runCheck(part: StatusPart, deps: StatusBoardDeps): Promise<PartCheck | null> {
  const started = performance.now();
  const failed = (reason: CheckReason): PartCheck => ({
    part,
    state: 'DOWN',
    detail: { reason, latencyMs: Math.round(performance.now() - started) },
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'TIMEOUT'>((done) => {
    timer = setTimeout(() => done('TIMEOUT'), CHECK_TIMEOUT_MS);
  });
  try {
    const outcome = await Promise.race([CHECKS[part](deps), timeout]);
    const latencyMs = Math.round(performance.now() - started);
    if (outcome === 'TIMEOUT') return failed('TIMEOUT');
    if (outcome === null) return null;
    const slow = outcome.state === 'UP' && latencyMs > SLOW_MS;
    const reason: CheckReason | undefined = slow ? 'SLOW' : undefined;
    return { part, state: slow ? 'DEGRADED' : outcome.state, detail: { ...(reason ? { reason } : {}), ...outcome.detail, latencyMs } };
  } catch {
    // The cause stays out of the public report: it may name hosts.
    return failed('UNREACHABLE');
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// The report

/** A day of a part's history: how available it was (null: nothing recorded) and its minutes. */
export interface DayAvailability {
  readonly date: string;
  readonly availability: number | null;
  readonly up: number;
  readonly degraded: number;
  readonly down: number;
}

export interface PartReport extends PartCheck {
  readonly checkedAt: string;
  /** Over the last HISTORY_DAYS days: the share of recorded minutes it was not down, and each recorded day. */
  readonly availability: { readonly days90: number | null; readonly days: readonly DayAvailability[] };
  /** Open incidents and maintenance in progress that name it. */
  readonly incidents: readonly string[];
}

/** An incident as the public sees it (who posted it is for staff only). */
export interface PublicIncident {
  readonly id: string;
  readonly kind: IncidentKind;
  readonly title: string;
  readonly parts: readonly StatusPart[];
  readonly state: IncidentState;
  readonly startsAt: string;
  readonly endsAt: string | null;
  readonly resolvedAt: string | null;
  readonly updates: readonly { readonly at: string; readonly state: IncidentState; readonly message: string }[];
}

/** A rollover: the one being applied now (announced in the feed), and one previewed in the admin console, planned. */
export interface RolloverReport {
  readonly underWay: { readonly batchId: string; readonly kind: string; readonly records: number; readonly since: string } | null;
  /** A rollover previewed and not yet applied: planned maintenance until its preview expires. */
  readonly planned: { readonly previewedAt: string; readonly until: string } | null;
}

export interface StatusReport {
  /** The worst state of the parts (OFF aside). */
  readonly state: RecordedState;
  readonly checkedAt: string;
  /** When the history and incidents were read (older than the checks while the database is away); null: never. */
  readonly historyAsOf: string | null;
  readonly rollover: RolloverReport;
  readonly parts: readonly PartReport[];
  /** Open incidents, and maintenance in progress or planned, oldest first. */
  readonly current: readonly PublicIncident[];
  /** Incidents and maintenance that ended in the last HISTORY_DAYS days, newest first (at most PAST_INCIDENTS). */
  readonly past: readonly PublicIncident[];
}

/** What the report reads from the database, remembered for STORED_FRESH_MS. */
interface Stored {
  readonly asOf: Date;
  readonly days: readonly StatusDayDoc[];
  readonly incidents: readonly IncidentDoc[];
  readonly announcement: AnnouncementDoc | null;
  readonly previewedAt: Date | null;
}

const SEVERITY: Readonly<Record<RecordedState, number>> = { UP: 0, DEGRADED: 1, DOWN: 2 };

/** The worst of some states (OFF counts for nothing). */
export function worstState(states: readonly PartState[]): RecordedState {
  return states.reduce<RecordedState>((worst, state) => (state !== 'OFF' && SEVERITY[state] > SEVERITY[worst] ? state : worst), 'UP');
}

function publicIncident(doc: IncidentDoc): PublicIncident {
  return {
    id: doc._id,
    kind: doc.kind,
    title: doc.title,
    parts: doc.parts,
    state: doc.state,
    startsAt: doc.startsAt.toISOString(),
    endsAt: doc.endsAt?.toISOString() ?? null,
    resolvedAt: doc.resolvedAt?.toISOString() ?? null,
    updates: doc.updates.map(({ at, state, message }) => ({ at: at.toISOString(), state, message })),
  };
}

/**
 * The status of the service, as one process sees it: the checks of each part (the last minute's,
 * or now), their recorded history, staff's incidents and maintenance, and the school-year rollover.
 * `record()` is the minute's work of `campus serve` (StatusRecorder); `report()` is what every
 * surface shows. Shared by the app's surfaces (src/app.ts builds one unless given one).
 */
export class StatusBoard {
  readonly incidents: Incidents;
  private latest: Checked | undefined;
  private checking: Promise<Checked> | undefined;
  private pending: Observation[] = [];
  private stored: Stored | undefined;
  /** Set when what was read is known to be out of date (a minute recorded, an incident posted here). */
  private storedStale = false;
  private reading: Promise<Stored> | undefined;
  private compactedOn: string | undefined;

  constructor(private readonly deps: StatusBoardDeps) {
    this.incidents = new Incidents(deps.db, deps.now);
  }

  /** Checks every part now (one run at a time; callers meanwhile share it) and keeps the result as the latest. */
  check(): Promise<Checked> {
    this.checking ??= (async () => {
      const at = this.deps.now();
      const parts = (await Promise.all(STATUS_PARTS.map((part) => runCheck(part, this.deps)))).filter((p): p is PartCheck => p !== null);
      const checked = { at, parts };
      this.latest = checked;
      return checked;
    })().finally(() => (this.checking = undefined));
    return this.checking;
  }

  /**
   * The minute's work: check every part, and record the states (with any minutes kept while the
   * database was away) under the recorder's lease; past the day's first record, compact the history.
   * A database that is away keeps the minutes here for the next time.
   */
  async record(): Promise<Checked> {
    const checked = await this.check();
    const states = Object.fromEntries(checked.parts.flatMap(({ part, state }) => (state === 'OFF' ? [] : [[part, state]])));
    const { day, minute } = minuteOf(checked.at, this.deps.config.schoolTimeZone);
    const sameMinute = (o: Observation) => {
      const m = minuteOf(o.at, this.deps.config.schoolTimeZone);
      return m.day === day && m.minute === minute;
    };
    this.pending = [...this.pending.filter((o) => !sameMinute(o)), { at: checked.at, states }].slice(-MAX_PENDING);
    await this.flush(day).catch((err: unknown) =>
      this.deps.logger?.debug({ err: { message: err instanceof Error ? err.message : String(err) } }, 'status: minutes kept for later'),
    );
    return checked;
  }

  /** Minutes observed and not yet recorded (while the database is away). */
  get unrecorded(): number {
    return this.pending.length;
  }

  private async flush(today: string): Promise<void> {
    const { db, config } = this.deps;
    const lease = await Lease.acquire(db.client.db(), RECORDER_LEASE, { waitMs: 5000 });
    if (!lease) return;
    try {
      const fence = async () => {
        if (!(await lease.stillHeld())) throw new Error('the status recorder lease was lost');
      };
      const batch = this.pending;
      await recordObservations(db, batch, config.schoolTimeZone, fence);
      this.pending = this.pending.filter((o) => !batch.includes(o));
      if (this.compactedOn !== today) {
        await compactHistory(db, today, fence);
        this.compactedOn = today;
      }
    } finally {
      await lease.release();
    }
    // The next report reads the history with this minute in it.
    this.storedStale = true;
  }

  /** Forgets what was read from the database (an incident was just posted here), so the next report reads it again. */
  forget(): void {
    this.storedStale = true;
  }

  /** What /v1/status, /status and `campus status` show. */
  async report(): Promise<StatusReport> {
    const now = this.deps.now();
    const fresh = this.latest && now.getTime() - this.latest.at.getTime() < CHECKS_FRESH_MS;
    const checked = fresh && this.latest ? this.latest : await this.check();
    const stored = await this.storedView(now, checked);
    return this.assemble(now, checked, stored);
  }

  /** The stored part of the report: read again when stale, waiting for it at most STORED_WAIT_MS (else the last one read). */
  private async storedView(now: Date, checked: Checked): Promise<Stored | undefined> {
    const last = this.stored;
    if (last && !this.storedStale && now.getTime() - last.asOf.getTime() < STORED_FRESH_MS) return last;
    // Reading a database the minute's check found away would only wait for it to time out.
    if (last && checked.parts.some((p) => p.part === 'database' && p.state === 'DOWN')) return last;
    this.reading ??= this.readStored(now).finally(() => (this.reading = undefined));
    this.storedStale = false;
    const reading = this.reading.then(
      (stored) => (this.stored = stored),
      () => last,
    );
    if (!last) return reading;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<Stored>((done) => {
      timer = setTimeout(() => done(last), STORED_WAIT_MS);
    });
    try {
      return await Promise.race([reading, waited]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async readStored(now: Date): Promise<Stored> {
    const { db, config } = this.deps;
    const today = minuteOf(now, config.schoolTimeZone).day;
    const [days, incidents, announcement, previews] = await Promise.all([
      readHistory(db, addDays(today, -(HISTORY_DAYS - 1))),
      this.incidents.list(),
      openAnnouncement(db),
      db.models.schoolUploads
        .find({ kind: 'ROLLOVER', createdAt: { $gt: new Date(now.getTime() - UPLOAD_LIFETIME_MS) } }, { createdAt: 1 })
        .lean<{ createdAt: Date }[]>(),
    ]);
    const previewedAt = previews.reduce<Date | null>((latest, p) => (!latest || p.createdAt > latest ? p.createdAt : latest), null);
    return { asOf: now, days, incidents, announcement, previewedAt };
  }

  private assemble(now: Date, checked: Checked, stored: Stored | undefined): StatusReport {
    const today = minuteOf(now, this.deps.config.schoolTimeZone).day;
    const since = addDays(today, -(HISTORY_DAYS - 1));
    const incidents = stored?.incidents ?? [];
    const current = incidents.filter((doc) => !isClosed(doc)).sort((a, b) => a.startsAt.getTime() - b.startsAt.getTime());
    const timeZone = this.deps.config.schoolTimeZone;
    const past = incidents
      .filter((doc) => isClosed(doc) && doc.resolvedAt && minuteOf(doc.resolvedAt, timeZone).day >= since)
      .slice(0, PAST_INCIDENTS);
    const concerning = (part: StatusPart) => current.filter((doc) => doc.parts.includes(part) && isUnderWay(doc)).map((doc) => doc._id);
    const parts = checked.parts.map((check): PartReport => {
      const days = (stored?.days ?? []).flatMap((doc) => {
        const record = doc.parts[check.part];
        const availability = availabilityOf(record);
        return record && availability !== null
          ? [{ date: doc._id, availability, up: record.up, degraded: record.degraded, down: record.down }]
          : [];
      });
      const total = days.reduce((sum, d) => ({ up: sum.up + d.up, degraded: sum.degraded + d.degraded, down: sum.down + d.down }), {
        up: 0,
        degraded: 0,
        down: 0,
      });
      return {
        ...check,
        checkedAt: checked.at.toISOString(),
        availability: { days90: availabilityOf(total), days },
        incidents: concerning(check.part),
      };
    });
    const announcement = stored?.announcement ?? null;
    const previewedAt = stored?.previewedAt ?? null;
    return {
      state: worstState(checked.parts.map((p) => p.state)),
      checkedAt: checked.at.toISOString(),
      historyAsOf: stored?.asOf.toISOString() ?? null,
      rollover: {
        underWay: announcement && {
          batchId: announcement.batchId,
          kind: announcement.kind,
          records: announcement.records,
          since: announcement.at.toISOString(),
        },
        planned: previewedAt && {
          previewedAt: previewedAt.toISOString(),
          until: new Date(previewedAt.getTime() + UPLOAD_LIFETIME_MS).toISOString(),
        },
      },
      parts,
      current: current.map(publicIncident),
      past: past.map(publicIncident),
    };
  }
}

/** The `rollover` section of GET /v1/health: whether a rollover (or another announced mass change) is being applied now. */
export async function rolloverHealth(db: Database): Promise<Record<string, unknown>> {
  const open = await openAnnouncement(db);
  return {
    rollover: open
      ? { underWay: true, batchId: open.batchId, kind: open.kind, records: open.records, since: open.at.toISOString() }
      : { underWay: false },
  };
}

/**
 * The minute's work of `campus serve` (src/main.ts): StatusBoard.record() once at start and then
 * every `everyMs`, one run at a time. Stopped with the app (src/app.ts).
 */
export class StatusRecorder {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly board: StatusBoard,
    private readonly everyMs = 60_000,
  ) {}

  start(): this {
    const tick = () => {
      this.running ??= this.board.record().finally(() => (this.running = undefined));
    };
    tick();
    this.timer = setInterval(tick, this.everyMs);
    this.timer.unref();
    return this;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => {});
  }
}
