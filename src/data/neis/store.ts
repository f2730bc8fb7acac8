import type { Collection } from 'mongoose';
import type { Database } from '../database.js';
import { isDuplicateKey } from '../platform/errors.js';
import type { MealDoc } from '../models/meal.model.js';
import {
  NEIS_DATASETS,
  type NeisDataset,
  type NeisLeaseDoc,
  type NeisStateDoc,
  type RetiredRange,
  type Segment,
  type SyncReport,
} from '../models/neis-state.model.js';
import type { ScheduleDoc } from '../models/schedule.model.js';
import type { TimetableDoc } from '../models/timetable.model.js';
import { replaceRange, segmentsWithin } from './segments.js';

const STATE_ID = 'neis';
const CHUNK = 1000;

/** The date field of each dataset's rows. */
const DATE_FIELD: Readonly<Record<NeisDataset, string>> = {
  meals: 'mealDate',
  schedules: 'scheduleDate',
  timetables: 'timetableDate',
};

function emptyState(): NeisStateDoc {
  return {
    _id: STATE_ID,
    school: null,
    segments: { meals: [], schedules: [], timetables: [] },
    retired: [],
    pending: [],
    lastSync: null,
    lastSuccessAt: null,
  };
}

/** The sync no longer holds the lease (it expired and another instance took it): stop writing. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
  constructor() {
    super('the NEIS sync lease was lost to another instance');
  }
}

/** A held lease: its term number and owner id. */
export interface Lease {
  readonly term: number;
  readonly owner: string;
}

export type LeaseResult = { acquired: true; lease: Lease } | { acquired: false; owner: string | null; expiresAt: Date };

/** Old lease terms kept for the record; older ones are deleted when a new term starts. */
const KEPT_TERMS = 20;

/**
 * NEIS data in the database. Rows are written under a fresh generation id and become visible
 * only when one update of the state document points their date range at that generation, so
 * readers never see a range empty or half-written, and a failed sync leaves the last good rows.
 */
export class NeisStore {
  constructor(readonly db: Database) {}

  /** The shared state (segments, lease, last sync), or null before the first sync. */
  async state(): Promise<NeisStateDoc | null> {
    const doc = await this.db.models.neisState.findById(STATE_ID).lean<Partial<NeisStateDoc>>();
    return doc ? { ...emptyState(), ...doc, segments: { ...emptyState().segments, ...doc.segments } } : null;
  }

  /** Live meals of `from`..`to`, by date then breakfast, lunch, dinner. */
  async meals(from: string, to: string): Promise<MealDoc[]> {
    return this.readLive('meals', from, to, (s) =>
      this.db.models.meals
        .find({ generation: s.generation, mealDate: { $gte: s.from, $lte: s.to } })
        .sort({ mealDate: 1, mealTypeRank: 1 })
        .lean<MealDoc[]>(),
    );
  }

  /** Live calendar events of `from`..`to`, by date then NEIS's order. */
  async schedules(from: string, to: string): Promise<ScheduleDoc[]> {
    return this.readLive('schedules', from, to, (s) =>
      this.db.models.schedules
        .find({ generation: s.generation, scheduleDate: { $gte: s.from, $lte: s.to } })
        .sort({ scheduleDate: 1, seq: 1 })
        .lean<ScheduleDoc[]>(),
    );
  }

  /** Live periods of one class in `from`..`to`, by date then period. */
  async timetables(from: string, to: string, grade: number, classNum: number): Promise<TimetableDoc[]> {
    return this.timetablesOfClasses(from, to, [{ grade, classNum }]);
  }

  /**
   * Live periods of several classes in `from`..`to`, by date then period: one read per segment
   * however many classes (a request asking for many is batched into this, src/data/school/loaders.ts).
   */
  async timetablesOfClasses(from: string, to: string, classes: readonly { grade: number; classNum: number }[]): Promise<TimetableDoc[]> {
    const which = classes.length === 1 ? { ...classes[0] } : { $or: classes.map(({ grade, classNum }) => ({ grade, classNum })) };
    return this.readLive('timetables', from, to, (s) =>
      this.db.models.timetables
        .find({ generation: s.generation, ...which, timetableDate: { $gte: s.from, $lte: s.to } })
        .sort({ timetableDate: 1, period: 1, seq: 1 })
        .lean<TimetableDoc[]>(),
    );
  }

  private async readLive<T>(dataset: NeisDataset, from: string, to: string, read: (s: Segment) => Promise<T[]>): Promise<T[]> {
    const state = await this.state();
    const parts = segmentsWithin(state?.segments[dataset] ?? [], from, to);
    // Segments are disjoint and in date order, so their results concatenate in date order.
    const results = await Promise.all(parts.map(read));
    return results.flat();
  }

  /**
   * Takes the sync lease when it is free or expired: inserting the next term number decides, so
   * of several instances racing exactly one wins (a unique-key insert is atomic everywhere).
   */
  async acquireLease(owner: string, ttlMs: number, now: Date): Promise<LeaseResult> {
    const leases = this.db.models.neisLeases;
    const latest = await this.latestLease();
    if (latest && latest.expiresAt.getTime() > now.getTime()) return { acquired: false, owner: latest.owner, expiresAt: latest.expiresAt };
    const term = (latest?._id ?? 0) + 1;
    try {
      await leases.collection.insertOne({ _id: term, owner, acquiredAt: now, expiresAt: new Date(now.getTime() + ttlMs) } as never);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const winner = await this.latestLease();
      return { acquired: false, owner: winner?.owner ?? null, expiresAt: winner?.expiresAt ?? now };
    }
    await leases.deleteMany({ _id: { $lt: term - KEPT_TERMS } });
    return { acquired: true, lease: { term, owner } };
  }

  /** Extends the lease; throws LeaseLostError when a later term exists (another instance took over). */
  async renewLease(lease: Lease, ttlMs: number, now: Date): Promise<void> {
    await this.assertHolder(lease);
    await this.db.models.neisLeases.updateOne(
      { _id: lease.term, owner: lease.owner },
      { $set: { expiresAt: new Date(now.getTime() + ttlMs) } },
    );
  }

  /** Throws LeaseLostError unless `lease` is still the latest term. */
  async assertHolder(lease: Lease): Promise<void> {
    const latest = await this.latestLease();
    if (!latest || latest._id !== lease.term || latest.owner !== lease.owner) throw new LeaseLostError();
  }

  /** Frees the lease (expires it now) if it is still ours. */
  async releaseLease(lease: Lease): Promise<void> {
    await this.db.models.neisLeases.updateOne({ _id: lease.term, owner: lease.owner }, { $set: { expiresAt: new Date(0) } });
  }

  private async latestLease(): Promise<NeisLeaseDoc | null> {
    return this.db.models.neisLeases.findOne().sort({ _id: -1 }).lean<NeisLeaseDoc>();
  }

  /**
   * Inserts the rows of a new, not yet visible generation, in chunks; `afterChunk` may check the
   * lease. The generation is noted as pending first, so a sync that dies half-way leaves rows
   * the next one can find and delete without scanning.
   */
  async writeGeneration(
    dataset: NeisDataset,
    lease: Lease,
    generation: string,
    docs: readonly Record<string, unknown>[],
    afterChunk: () => Promise<void> = async () => {},
  ): Promise<void> {
    await this.assertHolder(lease);
    await this.ensureState();
    const state = await this.state();
    await this.db.models.neisState.updateOne(
      { _id: STATE_ID },
      { $set: { pending: [...(state?.pending ?? []), { dataset, generation }] } },
    );
    for (let i = 0; i < docs.length; i += CHUNK) {
      // The native driver: the rows are built by our mappers already, casting would only cost time.
      await this.collection(dataset).insertMany(docs.slice(i, i + CHUNK).map((d) => ({ ...d, generation })));
      await afterChunk();
    }
  }

  /**
   * Makes `segment` live for `dataset`: one update of the state document, made only while the
   * lease is ours. The replaced rows are retired (deleted later), and cached answers dropped.
   */
  async activate(dataset: NeisDataset, lease: Lease, segment: Segment, school: string, now: Date): Promise<void> {
    await this.assertHolder(lease);
    await this.ensureState();
    const state = await this.state();
    const sameSchool = state?.school === school;
    const { segments, retired } = replaceRange(sameSchool ? state.segments[dataset] : [], segment);
    const retiredNow: RetiredRange[] = retired.map((r) => ({ ...r, dataset, retiredAt: now }));
    const set: Record<string, unknown> = { school, [`segments.${dataset}`]: segments };
    if (state && !sameSchool) {
      // Another school's rows must not show through: retire all of them.
      for (const d of NEIS_DATASETS) {
        retiredNow.push(...state.segments[d].map((s) => ({ ...s, dataset: d, retiredAt: now })));
        if (d !== dataset) set[`segments.${d}`] = [];
      }
    }
    set['retired'] = [...(state?.retired ?? []), ...retiredNow];
    set['pending'] = (state?.pending ?? []).filter((p) => p.generation !== segment.generation);
    await this.db.models.neisState.updateOne({ _id: STATE_ID }, { $set: set });
    await this.db.versions.bump('data');
  }

  /**
   * Deletes retired rows older than `graceMs` (readers that picked the old generation have long
   * finished) and the rows of pending generations that never went live (a sync that failed or
   * lost its lease half-way). Only the lease holder calls this, when no write of its own is
   * pending. Each delete names its generation: FerretDB scans for anything else.
   */
  async collectGarbage(lease: Lease, now: Date, graceMs: number): Promise<number> {
    await this.assertHolder(lease);
    const state = await this.state();
    if (!state) return 0;
    const isDue = (r: RetiredRange) => now.getTime() - new Date(r.retiredAt).getTime() >= graceMs;
    const due = state.retired.filter(isDue);
    if (due.length === 0 && state.pending.length === 0) return 0;
    let deleted = 0;
    for (const r of due) {
      const res = await this.collection(r.dataset).deleteMany({
        generation: r.generation,
        [DATE_FIELD[r.dataset]]: { $gte: r.from, $lte: r.to },
      });
      deleted += res.deletedCount;
    }
    for (const p of state.pending) {
      const res = await this.collection(p.dataset).deleteMany({ generation: p.generation });
      deleted += res.deletedCount;
    }
    await this.db.models.neisState.updateOne({ _id: STATE_ID }, { $set: { retired: state.retired.filter((r) => !isDue(r)), pending: [] } });
    return deleted;
  }

  /**
   * Records a sync's outcome for /v1/health (a fully successful one also moves lastSuccessAt, and
   * each dataset that synced its own datasetSuccessAt, for the status page) and tells the
   * process's telemetry (the metrics count sync results).
   */
  async recordSync(report: SyncReport): Promise<void> {
    await this.ensureState();
    const set: Record<string, unknown> = { lastSync: report };
    if (report.outcome === 'ok') set['lastSuccessAt'] = report.finishedAt;
    const synced = NEIS_DATASETS.filter((dataset) => report.datasets[dataset]?.outcome === 'ok');
    if (synced.length > 0) {
      const before = (await this.state())?.datasetSuccessAt ?? {};
      set['datasetSuccessAt'] = { ...before, ...Object.fromEntries(synced.map((dataset) => [dataset, report.finishedAt])) };
    }
    await this.db.models.neisState.updateOne({ _id: STATE_ID }, { $set: set });
    this.db.telemetry.neisSync(report);
  }

  private collection(dataset: NeisDataset): Collection {
    const models = this.db.models;
    const byDataset = { meals: models.meals, schedules: models.schedules, timetables: models.timetables };
    return byDataset[dataset].collection;
  }

  /**
   * Creates the state document once; a concurrent creator winning the race is fine. A plain
   * insert, because FerretDB drops null and empty-array fields of an upsert's $setOnInsert.
   */
  private async ensureState(): Promise<void> {
    try {
      await this.db.models.neisState.collection.insertOne(emptyState() as never);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }
}
