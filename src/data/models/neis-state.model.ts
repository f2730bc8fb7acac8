import { Schema, type Connection, type Model } from 'mongoose';
import { defineModel } from './define.js';

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
 * rows or the new ones, never a mix or nothing. `lease` lets one instance sync at a time.
 */
export interface NeisStateDoc {
  _id: string;
  /** `office/school` the segments belong to; another school starts from nothing. */
  school: string | null;
  lease: { owner: string | null; expiresAt: Date };
  segments: Record<NeisDataset, Segment[]>;
  retired: RetiredRange[];
  lastSync: SyncReport | null;
  lastSuccessAt: Date | null;
}

const segmentSchema = new Schema({ from: String, to: String, generation: String }, { _id: false });
const retiredSchema = new Schema(
  { dataset: String, from: String, to: String, generation: String, retiredAt: Date },
  { _id: false },
);

const neisStateSchema = new Schema(
  {
    _id: { type: String, required: true },
    school: { type: String, default: null },
    lease: {
      owner: { type: String, default: null },
      expiresAt: { type: Date, default: () => new Date(0) },
    },
    segments: {
      meals: { type: [segmentSchema], default: [] },
      schedules: { type: [segmentSchema], default: [] },
      timetables: { type: [segmentSchema], default: [] },
    },
    retired: { type: [retiredSchema], default: [] },
    lastSync: { type: Schema.Types.Mixed, default: null },
    lastSuccessAt: { type: Date, default: null },
  },
  { versionKey: false, collection: 'neis_state', minimize: false },
);

export type NeisStateModel = Model<NeisStateDoc>;

export function neisStateModel(connection: Connection): NeisStateModel {
  return defineModel<NeisStateDoc>(connection, 'NeisState', neisStateSchema);
}
