import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Config } from '../config/index.js';
import type { Database } from '../data/database.js';
import { MEAL_TYPE_RANK } from '../data/models/meal.model.js';
import { NEIS_DATASETS, type DatasetReport, type NeisDataset, type SyncReport } from '../data/models/neis-state.model.js';
import { LeaseLostError, NeisStore, type Lease } from '../data/neis/store.js';
import { changedDates, fingerprints, liveFingerprints, recordNeisEvent } from '../data/neis/events.js';
import type { Logger } from '../logger.js';
import { NeisClient, NeisError, type NeisClientEvent, type NeisRow } from './client.js';
import { mapMeals, mapSchedules, mapTimetables, type Mapped } from './mappers.js';

/** Why a sync runs: shown in /v1/health next to its outcome. */
export type SyncTrigger = 'startup' | 'daily' | 'retry' | 'cli' | 'seed';

export interface SyncRequest {
  /** First and last date of the window (YYYY-MM-DD, both included). */
  readonly from: string;
  readonly to: string;
  readonly trigger: SyncTrigger;
  readonly datasets?: readonly NeisDataset[];
  /** Aborting cancels NEIS requests in flight; the data of unfinished datasets stays as it was. */
  readonly signal?: AbortSignal;
  /** Human-readable progress (the CLI prints it on stderr). */
  readonly onProgress?: (line: string) => void;
}

/** Another instance holds the lease: this run did nothing. */
export interface SyncBusy {
  readonly outcome: 'busy';
  readonly owner: string | null;
  readonly until: Date;
}

export type SyncResult = SyncReport | SyncBusy;

export interface NeisSyncOptions {
  readonly store: NeisStore;
  readonly client: NeisClient;
  readonly officeCode: string;
  readonly schoolCode: string;
  readonly logger: Logger;
  readonly now?: () => Date;
  /** How long a lease lasts without renewal (a crashed instance blocks others this long). */
  readonly leaseMs?: number;
  /** How long replaced rows stay for readers that chose them just before the switch. */
  readonly gcGraceMs?: number;
}

/** `office/school`: the identity of the data a sync writes. */
export function schoolKey(officeCode: string, schoolCode: string): string {
  return `${officeCode}/${schoolCode}`;
}

/** The sync job of the configured school against the configured NEIS address. */
export function neisSyncFromConfig(config: Config, db: Database, logger: Logger, now?: () => Date): NeisSync {
  const { baseUrl, apiKey, officeCode, schoolCode, timeoutMs } = config.neis;
  return new NeisSync({
    store: new NeisStore(db),
    client: new NeisClient({ baseUrl, apiKey, officeCode, schoolCode, timeoutMs }),
    officeCode,
    schoolCode,
    logger,
    ...(now ? { now } : {}),
  });
}

/**
 * One NEIS sync: take the lease, fetch each dataset through the client, map it, write it as a
 * new generation and switch the window over to it. A dataset that fails keeps its previous rows;
 * the outcome is recorded for /v1/health.
 */
export class NeisSync {
  private readonly now: () => Date;
  private readonly leaseMs: number;
  private readonly gcGraceMs: number;
  private readonly instance = `${hostname()}:${process.pid}`;

  constructor(private readonly options: NeisSyncOptions) {
    this.now = options.now ?? (() => new Date());
    this.leaseMs = options.leaseMs ?? 120_000;
    this.gcGraceMs = options.gcGraceMs ?? 120_000;
  }

  /** Runs one sync unless another instance is running one (then answers `busy`). */
  async run(request: SyncRequest): Promise<SyncResult> {
    const { store, logger } = this.options;
    const owner = `${this.instance}:${randomBytes(4).toString('hex')}`;
    const startedAt = this.now();
    const taken = await store.acquireLease(owner, this.leaseMs, startedAt);
    if (!taken.acquired) {
      request.onProgress?.(`another NEIS sync is running (${taken.owner ?? 'unknown'}); nothing to do`);
      return { outcome: 'busy', owner: taken.owner, until: taken.expiresAt };
    }
    const { lease } = taken;

    const heartbeat = this.keepLease(lease, request.signal);
    const datasets: Partial<Record<NeisDataset, DatasetReport>> = {};
    let error: string | null = null;
    try {
      await store.collectGarbage(lease, this.now(), this.gcGraceMs);
      for (const dataset of request.datasets ?? NEIS_DATASETS) {
        datasets[dataset] = await this.syncDataset(dataset, lease, request, heartbeat);
      }
      // Rows replaced long enough ago go now; the ones just replaced wait for the next sync.
      await store.collectGarbage(lease, this.now(), this.gcGraceMs);
    } catch (err) {
      error = describeError(err);
      logger.error({ err: errorForLog(err) }, 'NEIS sync stopped');
    } finally {
      heartbeat.stop();
      await store.releaseLease(lease).catch(() => {});
    }

    const report = summarise(request, startedAt, this.now(), datasets, error);
    await store
      .recordSync(report)
      .catch((err: Error) => logger.warn({ err: { message: err.message } }, 'could not record the NEIS sync outcome'));
    const log = report.outcome === 'ok' ? logger.info.bind(logger) : logger.warn.bind(logger);
    log(
      { neisSync: { ...report, startedAt: report.startedAt.toISOString(), finishedAt: report.finishedAt.toISOString() } },
      `NEIS sync ${report.outcome}`,
    );
    return report;
  }

  private async syncDataset(dataset: NeisDataset, lease: Lease, request: SyncRequest, heartbeat: Heartbeat): Promise<DatasetReport> {
    const { store, logger } = this.options;
    const progress = request.onProgress ?? (() => {});
    try {
      progress(`${dataset}: fetching ${request.from}..${request.to} from NEIS`);
      const rows = await this.fetch(dataset, request.from, request.to, {
        signal: heartbeat.signal,
        onEvent: (event) => progress(describeEvent(dataset, event)),
      });
      const mapped = mapDataset(dataset, rows);
      for (const warning of mapped.warnings) logger.warn({ dataset, warning }, 'NEIS row skipped');
      const generation = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
      const docs = toDocs(dataset, mapped.records);
      await store.writeGeneration(dataset, lease, generation, docs, async () => heartbeat.check());
      heartbeat.check();
      // The change feed names the dates whose rows differ from what was served (src/data/neis/events.ts);
      // the demo seed's data is loaded without events, as the demo school is (docs/data-api.md, "GET /v1/changes").
      const emits = request.trigger !== 'seed';
      const before = emits ? await liveFingerprints(store.db, dataset, request.from, request.to) : new Map<string, string>();
      await store.activate(dataset, lease, { from: request.from, to: request.to, generation }, this.school(), this.now());
      if (emits) {
        const dates = changedDates(before, fingerprints(dataset, docs));
        await recordNeisEvent(store.db, dataset, { dates, from: request.from, to: request.to }, this.now()).catch((err: Error) =>
          logger.warn({ dataset, err: { message: err.message } }, 'could not write the NEIS change event'),
        );
      }
      const skipped = mapped.warnings.length > 0 ? `, ${mapped.warnings.length} rows skipped` : '';
      progress(`${dataset}: ${mapped.records.length} records now served for ${request.from}..${request.to}${skipped}`);
      return { outcome: 'ok', rows: mapped.records.length, skippedRows: mapped.warnings.length, error: null };
    } catch (err) {
      // A lost lease ends the whole run: another instance is writing now.
      if (err instanceof LeaseLostError || heartbeat.lost) throw err instanceof LeaseLostError ? err : new LeaseLostError();
      const message = describeError(err);
      logger.warn({ dataset, err: errorForLog(err) }, 'NEIS dataset sync failed; the previous data stays');
      progress(`${dataset}: failed (${message}); the previous data stays`);
      return { outcome: 'failed', rows: 0, skippedRows: 0, error: message };
    }
  }

  private fetch(dataset: NeisDataset, from: string, to: string, options: Parameters<NeisClient['meals']>[2]): Promise<NeisRow[]> {
    const { client } = this.options;
    if (dataset === 'meals') return client.meals(from, to, options);
    if (dataset === 'schedules') return client.schedules(from, to, options);
    return client.timetables(from, to, options);
  }

  private school(): string {
    return schoolKey(this.options.officeCode, this.options.schoolCode);
  }

  /** Renews the lease every third of its life; when that fails, aborts the run's requests. */
  private keepLease(lease: Lease, outer: AbortSignal | undefined): Heartbeat {
    const controller = new AbortController();
    const signal = outer ? AbortSignal.any([outer, controller.signal]) : controller.signal;
    let lost = false;
    const timer = setInterval(
      () => {
        this.options.store.renewLease(lease, this.leaseMs, this.now()).catch((err: unknown) => {
          if (!(err instanceof LeaseLostError)) return; // a database hiccup: try again next beat
          lost = true;
          controller.abort();
        });
      },
      Math.max(1000, Math.floor(this.leaseMs / 3)),
    );
    timer.unref();
    return {
      signal,
      get lost() {
        return lost;
      },
      check() {
        if (lost) throw new LeaseLostError();
      },
      stop: () => clearInterval(timer),
    };
  }
}

interface Heartbeat {
  readonly signal: AbortSignal;
  readonly lost: boolean;
  check(): void;
  stop(): void;
}

function mapDataset(dataset: NeisDataset, rows: readonly NeisRow[]): Mapped<object> {
  if (dataset === 'meals') return mapMeals(rows);
  if (dataset === 'schedules') return mapSchedules(rows);
  return mapTimetables(rows);
}

/** Stored rows: the record plus its sort keys (the store adds the generation). */
function toDocs(dataset: NeisDataset, records: readonly object[]): Record<string, unknown>[] {
  return records.map((record, seq) => {
    const doc: Record<string, unknown> = { ...record };
    if (dataset === 'meals') doc['mealTypeRank'] = MEAL_TYPE_RANK[(record as { mealType: keyof typeof MEAL_TYPE_RANK }).mealType];
    else doc['seq'] = seq;
    return doc;
  });
}

function summarise(
  request: SyncRequest,
  startedAt: Date,
  finishedAt: Date,
  datasets: Partial<Record<NeisDataset, DatasetReport>>,
  stopped: string | null,
): SyncReport {
  const wanted = request.datasets ?? NEIS_DATASETS;
  const reports = wanted.map((d) => datasets[d]);
  const ok = reports.filter((r) => r?.outcome === 'ok').length;
  const outcome = stopped === null && ok === wanted.length ? 'ok' : ok === 0 ? 'failed' : 'partial';
  const errors = wanted.flatMap((d) => {
    const e = datasets[d]?.error;
    return e ? [`${d}: ${e}`] : [];
  });
  if (stopped) errors.push(stopped);
  return {
    outcome,
    trigger: request.trigger,
    from: request.from,
    to: request.to,
    startedAt,
    finishedAt,
    datasets,
    error: errors.length > 0 ? errors.join('; ') : null,
  };
}

/** A message safe for /v1/health (no credentials, no database addresses). */
function describeError(err: unknown): string {
  if (err instanceof NeisError || err instanceof LeaseLostError) return err.message;
  return 'a database error while storing the rows (see the log)';
}

function errorForLog(err: unknown): Record<string, unknown> {
  if (err instanceof NeisError) return { name: err.name, code: err.code, message: err.message };
  if (err instanceof Error) return { name: err.name, message: err.message };
  return { message: String(err) };
}

function describeEvent(dataset: NeisDataset, event: NeisClientEvent): string {
  if (event.type === 'page') return `${dataset}: page ${event.page}/${event.pages} (${event.rows}/${event.total} rows)`;
  return `${dataset}: page ${event.page} failed (${event.error}); retry ${event.attempt} in ${event.delayMs} ms`;
}
