import { Schema, type Connection, type Model } from 'mongoose';
import { defineModel } from './define.js';

/** What the NEIS sync keeps, in the order it syncs them. */
export const NEIS_DATASETS = ['meals', 'schedules', 'timetables'] as const;
export type NeisDataset = (typeof NEIS_DATASETS)[number];

/** Dates `from`..`to` (both included) of a dataset are served from the rows of `generation`. */
export interface Segment {
  from: string;
  to: string;
  generation: string;
}

/** Rows a newer sync replaced; deleted after a grace period so that readers in flight finish. */
export interface RetiredRange extends Segment {
  dataset: NeisDataset;
  retiredAt: Date;
}

/** A generation whose rows are being written. */
export interface PendingGeneration {
  dataset: NeisDataset;
  generation: string;
}

/** One dataset's part of a sync. */
export interface DatasetReport {
  outcome: 'ok' | 'failed';
  /** Records now served for the window (0 on failure: the previous ones stay). */
  rows: number;
  /** NEIS rows skipped with a warning (e.g. an unknown meal code). */
  skippedRows: number;
  error: string | null;
}

/** What one sync did: shown by /v1/health and `campus neis sync`. */
export interface SyncReport {
  outcome: 'ok' | 'partial' | 'failed';
  trigger: string;
  from: string;
  to: string;
  startedAt: Date;
  finishedAt: Date;
  datasets: Partial<Record<NeisDataset, DatasetReport>>;
  error: string | null;
}

/**
 * The one document readers and the sync share. Readers take `segments` to choose which rows are
 * live; a sync flips a segment in one single-document update, so a reader sees either the old
 * rows or the new ones, never a mix or nothing.
 */
export interface NeisStateDoc {
  _id: string;
  /** `office/school` the segments belong to; another school starts from nothing. */
  school: string | null;
  segments: Record<NeisDataset, Segment[]>;
  retired: RetiredRange[];
  /** Generations being written and not yet live; left here only by a sync that failed half-way. */
  pending: PendingGeneration[];
  lastSync: SyncReport | null;
  lastSuccessAt: Date | null;
  /** When each dataset last synced without failing (the status page: how old its data is); absent before any did. */
  datasetSuccessAt?: Partial<Record<NeisDataset, Date>>;
}

const segmentSchema = new Schema({ from: String, to: String, generation: String }, { _id: false });
const retiredSchema = new Schema({ dataset: String, from: String, to: String, generation: String, retiredAt: Date }, { _id: false });

const neisStateSchema = new Schema(
  {
    _id: { type: String, required: true },
    school: { type: String, default: null },
    segments: {
      meals: { type: [segmentSchema], default: [] },
      schedules: { type: [segmentSchema], default: [] },
      timetables: { type: [segmentSchema], default: [] },
    },
    retired: { type: [retiredSchema], default: [] },
    pending: { type: [new Schema({ dataset: String, generation: String }, { _id: false })], default: [] },
    lastSync: { type: Schema.Types.Mixed, default: null },
    lastSuccessAt: { type: Date, default: null },
    datasetSuccessAt: { type: Schema.Types.Mixed, default: {} },
  },
  { versionKey: false, collection: 'neis_state', minimize: false },
);

export type NeisStateModel = Model<NeisStateDoc>;

/** The NEIS state model (collection neis_state, one document). */
export function neisStateModel(connection: Connection): NeisStateModel {
  return defineModel<NeisStateDoc>(connection, 'NeisState', neisStateSchema);
}

/**
 * One term of the sync lease. Taking the lease inserts term N+1: a unique `_id` insert is the
 * one write both MongoDB and FerretDB make atomic (FerretDB's findAndModify is not), so of two
 * instances racing for a free or expired lease exactly one wins. Only the holder writes its term.
 */
export interface NeisLeaseDoc {
  _id: number;
  owner: string;
  acquiredAt: Date;
  expiresAt: Date;
}

const neisLeaseSchema = new Schema(
  {
    _id: { type: Number, required: true },
    owner: { type: String, required: true },
    acquiredAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'neis_leases' },
);

export type NeisLeaseModel = Model<NeisLeaseDoc>;

/** The NEIS sync lease model (collection neis_leases, one document per term). */
export function neisLeaseModel(connection: Connection): NeisLeaseModel {
  return defineModel<NeisLeaseDoc>(connection, 'NeisLease', neisLeaseSchema);
}
