import type { Collection } from 'mongoose';
import type { Database } from './database.js';
import type { MealDoc } from './models/meal.model.js';
import {
  NEIS_DATASETS,
  type NeisDataset,
  type NeisStateDoc,
  type RetiredRange,
  type Segment,
  type SyncReport,
} from './models/neis-state.model.js';
import type { ScheduleDoc } from './models/schedule.model.js';
import type { TimetableDoc } from './models/timetable.model.js';
import { replaceRange, segmentsWithin } from './neis-segments.js';

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
    lease: { owner: null, expiresAt: new Date(0) },
    segments: { meals: [], schedules: [], timetables: [] },
    retired: [],
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

export type LeaseResult = { acquired: true } | { acquired: false; owner: string | null; expiresAt: Date };

/**
 * NEIS data in the database. Rows are written under a fresh generation id and become visible
 * only when one update of the state document points their date range at that generation, so
 * readers never see a range empty or half-written, and a failed sync leaves the last good rows.
 */
export class NeisStore {
  constructor(private readonly db: Database) {}

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
    return this.readLive('timetables', from, to, (s) =>
      this.db.models.timetables
        .find({ generation: s.generation, grade, classNum, timetableDate: { $gte: s.from, $lte: s.to } })
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

  /** Takes the sync lease when it is free or expired (one atomic update decides). */
  async acquireLease(owner: string, ttlMs: number, now: Date): Promise<LeaseResult> {
    await this.ensureState();
    const taken = await this.db.models.neisState
      .findOneAndUpdate(
        { _id: STATE_ID, 'lease.expiresAt': { $lte: now } },
        { $set: { lease: { owner, expiresAt: new Date(now.getTime() + ttlMs) } } },
        { new: true },
      )
      .lean<NeisStateDoc>();
    if (taken) return { acquired: true };
    const current = await this.state();
    return { acquired: false, owner: current?.lease.owner ?? null, expiresAt: current?.lease.expiresAt ?? now };
  }

  /** Extends the lease; throws LeaseLostError when another owner holds it now. */
  async renewLease(owner: string, ttlMs: number, now: Date): Promise<void> {
    const res = await this.db.models.neisState.updateOne(
      { _id: STATE_ID, 'lease.owner': owner },
      { $set: { 'lease.expiresAt': new Date(now.getTime() + ttlMs) } },
    );
    if (res.matchedCount === 0) throw new LeaseLostError();
  }

  /** Frees the lease if `owner` still holds it. */
  async releaseLease(owner: string): Promise<void> {
    await this.db.models.neisState.updateOne(
      { _id: STATE_ID, 'lease.owner': owner },
      { $set: { lease: { owner: null, expiresAt: new Date(0) } } },
    );
  }

  /** Inserts rows of a not-yet-visible generation, in chunks; `afterChunk` may renew the lease. */
  async writeGeneration(
    dataset: NeisDataset,
    docs: readonly Record<string, unknown>[],
    afterChunk: () => Promise<void> = async () => {},
  ): Promise<void> {
    for (let i = 0; i < docs.length; i += CHUNK) {
      // The native driver: the rows are built by our mappers already, casting would only cost time.
      await this.collection(dataset).insertMany(docs.slice(i, i + CHUNK).map((d) => ({ ...d })));
      await afterChunk();
    }
  }

  /**
   * Makes `segment` live for `dataset`: one update of the state document, conditional on still
   * holding the lease. The replaced rows are retired (deleted later), and cached answers dropped.
   */
  async activate(dataset: NeisDataset, owner: string, segment: Segment, school: string, now: Date): Promise<void> {
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
    const res = await this.db.models.neisState.updateOne({ _id: STATE_ID, 'lease.owner': owner }, { $set: set });
    if (res.matchedCount === 0) throw new LeaseLostError();
    await this.db.versions.bump('data');
  }

  /**
   * Deletes retired rows older than `graceMs` (readers that picked the old generation have long
   * finished) and orphans: rows of generations nothing refers to, left by a sync that failed or
   * lost its lease half-way. Only the lease holder calls this.
   */
  async collectGarbage(owner: string, now: Date, graceMs: number): Promise<number> {
    const state = await this.state();
    if (!state) return 0;
    const isDue = (r: RetiredRange) => now.getTime() - new Date(r.retiredAt).getTime() >= graceMs;
    const due = state.retired.filter(isDue);
    const keep = state.retired.filter((r) => !isDue(r));
    let deleted = 0;
    for (const r of due) {
      const res = await this.collection(r.dataset).deleteMany({
        generation: r.generation,
        [DATE_FIELD[r.dataset]]: { $gte: r.from, $lte: r.to },
      });
      deleted += res.deletedCount;
    }
    for (const dataset of NEIS_DATASETS) {
      const referenced = [...state.segments[dataset], ...keep.filter((r) => r.dataset === dataset)].map((s) => s.generation);
      const res = await this.collection(dataset).deleteMany({ generation: { $nin: [...new Set(referenced)] } });
      deleted += res.deletedCount;
    }
    if (due.length > 0) {
      const res = await this.db.models.neisState.updateOne({ _id: STATE_ID, 'lease.owner': owner }, { $set: { retired: keep } });
      if (res.matchedCount === 0) throw new LeaseLostError();
    }
    return deleted;
  }

  /** Records a sync's outcome for /v1/health; a fully successful one also moves lastSuccessAt. */
  async recordSync(report: SyncReport): Promise<void> {
    await this.ensureState();
    const set: Record<string, unknown> = { lastSync: report };
    if (report.outcome === 'ok') set['lastSuccessAt'] = report.finishedAt;
    await this.db.models.neisState.updateOne({ _id: STATE_ID }, { $set: set });
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
      if ((err as { code?: unknown }).code !== 11000) throw err;
    }
  }
}
