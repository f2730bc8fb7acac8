import { randomUUID } from 'node:crypto';
import { toAppError } from '../platform/errors.js';
import { outsideRequestBudget } from '../platform/budget.js';
import type { Database } from '../database.js';
import { isAbandoned } from '../platform/lease.js';
import { thisProcess } from '../platform/process-identity.js';
import type { SchoolJobDoc } from '../models/audit.model.js';
import type { PreviewResult } from './types.js';

/*
 * Imports and rollovers applied from the admin console run as jobs of the service process: the
 * request that starts one answers at once, and the job's page (/admin/jobs/<id>) shows its
 * progress and then its outcome, so no request is held while a school is written (docs/school-writes.md). The
 * job's state lives in the database (`school_jobs`), so any instance can show it; a job whose
 * process died shows as interrupted, and its batch is rolled back like any other
 * (docs/school-writes.md). Jobs are kept for a day.
 */

export type SchoolJobState = 'RUNNING' | 'DONE' | 'FAILED' | 'INTERRUPTED';

export interface SchoolJob {
  readonly id: string;
  readonly kind: 'IMPORT' | 'ROLLOVER';
  readonly state: SchoolJobState;
  readonly written: number;
  readonly total: number;
  readonly result: PreviewResult | null;
  readonly error: string | null;
}

const KEEP_MS = 24 * 60 * 60 * 1000;
/** Progress is written at most this often (each write is a database round trip). */
const PROGRESS_EVERY_MS = 250;
/** A running job's process renews `updatedAt` this often, so another machine can tell it died. */
const HEARTBEAT_MS = 5000;

/**
 * Starts `apply` as a job of this process and returns the job at once. `apply` hears progress
 * through its argument; what it answers (or throws) is the job's outcome.
 */
export async function startJob(
  db: Database,
  input: { kind: 'IMPORT' | 'ROLLOVER'; accountId: number | null; now: Date },
  apply: (onProgress: (written: number, total: number) => void) => Promise<PreviewResult>,
): Promise<SchoolJob> {
  const jobs = db.models.schoolJobs;
  await jobs.deleteMany({ startedAt: { $lt: new Date(input.now.getTime() - KEEP_MS) } });
  const id = randomUUID();
  await jobs.create({
    _id: id,
    kind: input.kind,
    accountId: input.accountId,
    state: 'RUNNING',
    ...thisProcess(),
    startedAt: input.now,
    updatedAt: new Date(),
  });
  let lastWrite = 0;
  const heartbeat = setInterval(() => {
    void jobs.updateOne({ _id: id }, { $set: { updatedAt: new Date() } }).catch(() => {});
  }, HEARTBEAT_MS);
  heartbeat.unref();
  const onProgress = (written: number, total: number) => {
    const now = Date.now();
    if (written < total && now - lastWrite < PROGRESS_EVERY_MS) return;
    lastWrite = now;
    void jobs.updateOne({ _id: id }, { $set: { written, total, updatedAt: new Date(now) } }).catch(() => {});
  };
  // Not awaited: the job outlives the request that started it, and no request's time budget binds it.
  void outsideRequestBudget(() => apply(onProgress))
    .then(
      (result) => ({ state: 'DONE' as const, result: JSON.stringify(result), error: null }),
      (err: unknown) => ({ state: 'FAILED' as const, result: null, error: toAppError(err).message }),
    )
    .then(async (outcome) => {
      clearInterval(heartbeat);
      await jobs.updateOne({ _id: id }, { $set: { ...outcome, updatedAt: new Date() } });
    })
    .catch(() => {
      // The database is away: the job stays RUNNING with a process that no longer renews it,
      // and reads as interrupted once its heartbeat is old.
    });
  return { id, kind: input.kind, state: 'RUNNING', written: 0, total: 0, result: null, error: null };
}

/** The job, if it exists and belongs to this account. */
export async function findJob(db: Database, id: string, accountId: number | null): Promise<SchoolJob | null> {
  const doc = await db.models.schoolJobs.findById(id).lean<SchoolJobDoc>();
  if (!doc || doc.accountId !== accountId) return null;
  // Its process is gone from this pid namespace, or it stopped renewing its heartbeat (another machine or container).
  const gone =
    doc.state === 'RUNNING' &&
    isAbandoned({
      pid: doc.pid,
      pidSpace: doc.pidSpace ?? null,
      pidStart: doc.pidStart ?? null,
      expiresAt: new Date(doc.updatedAt.getTime() + 3 * HEARTBEAT_MS),
    });
  return {
    id: doc._id,
    kind: doc.kind,
    state: gone ? 'INTERRUPTED' : doc.state,
    written: doc.written,
    total: doc.total,
    result: doc.result ? (JSON.parse(doc.result) as PreviewResult) : null,
    error: doc.error ?? null,
  };
}
