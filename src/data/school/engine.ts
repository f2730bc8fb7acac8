import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { AnyBulkWriteOperation, Collection, Document, WithoutId } from 'mongodb';
import { AppError } from '../../errors/index.js';
import type { Database } from '../database.js';
import { isDatabaseUnreachable, isDuplicateKey } from '../errors.js';
import type { AuditBatchDoc, AuditEntryDoc } from '../models/audit.model.js';
import { normalizeClub, normalizeProject, normalizeStudent, rememberHighestIds } from './state.js';
import type { Actor, BatchRequest, DocOf, RecordDiff, SchoolDoc, SchoolEntity, ValueChange } from './types.js';

/*
 * How a change to school data is written (docs/architecture.md, "Writes and the two consoles"):
 * under one write lock, planned and validated first (src/data/school/writes.ts), then journaled
 * and applied here. FerretDB 1.x has no transactions, so "all or nothing" is built from a
 * write-ahead journal: the audit entries, holding each record's whole document before and after,
 * are written first (status APPLYING); then the records; then the entries are marked APPLIED and
 * the data version moves. A write that fails is undone at once from the before-images (ROLLED_BACK);
 * a writer that died half-way leaves an APPLYING batch, which the next writer undoes the same way
 * before it plans anything. Readers may glimpse a change while it is being written (there is no
 * isolation without transactions), never a half-written change after it settled, and the data
 * version moves at the end either way, so no cached answer outlives it.
 */

/** The `meta` document of the write lock. */
const LOCK_ID = 'school-write-lock';
/** A lock not renewed for this long belongs to a writer that died. */
const LOCK_TTL_MS = 60_000;
/** How long a writer waits for the lock before giving up (409). */
const LOCK_WAIT_MS = 15_000;
/** Journal entries per insert. */
const CHUNK = 500;
/**
 * Record writes per bulk write. FerretDB 1.24 keeps each statement of an `update` command
 * reading (its query cursor, holding a backend connection) until the whole command ends
 * (`defer closer.Close()` inside the per-statement loop of internal/handler/msg_update.go) and
 * takes one connection more to write, so N replaceOne in one bulkWrite need N + 1 pooled
 * connections at once. Past the pool it waits forever, and so does every later command on that
 * FerretDB. The pool is 100 over SQLite and 50 over PostgreSQL (FerretDB's pool_max_conns
 * default); measured: 99 answered and 100 hung over SQLite, 49 answered and 50 hung over
 * PostgreSQL (so the former 50 hung every rollover there). 20 holds at most 21 of PostgreSQL's
 * 50 and leaves the rest to concurrent requests; inserts and deletes do not hold connections.
 */
const WRITE_CHUNK = 20;
/** Fields derived from others: kept in the journal, left out of the changes people read. */
const DERIVED = new Set(['_id', 'enrolledRank', 'dormitoryRank']);

/** 409: another change holds the write lock for longer than a writer waits. */
export class WriteBusyError extends AppError {
  constructor() {
    super('CONFLICT', 'Another change to school data is being written; try again in a moment.');
  }
}

/** 409: writing failed (e.g. a record written meanwhile by another program) and everything written was undone. */
export class WriteRolledBackError extends AppError {
  constructor(cause: unknown) {
    super('CONFLICT', `The change was not applied: ${describeFailure(cause)}. Everything it had written was undone; nothing changed.`, {
      cause,
    });
  }
}

function describeFailure(err: unknown): string {
  if (isDuplicateKey(err)) return 'a record clashed with one written meanwhile (a duplicate email or id)';
  return 'the database refused one of its writes';
}

type RecordRow = Document & { _id: number };

function collection(db: Database, entity: SchoolEntity): Collection<RecordRow> {
  const model = entity === 'STUDENT' ? db.models.students : entity === 'CLUB' ? db.models.clubs : db.models.projects;
  return db.client.db().collection<RecordRow>(model.collection.collectionName);
}

function batches(db: Database): Collection<AuditBatchDoc> {
  return db.client.db().collection<AuditBatchDoc>(db.models.auditBatches.collection.collectionName);
}

/** An audit entry as the journal writes it (src/data/models/audit.model.ts). */
export type JournalEntry = Omit<AuditEntryDoc, 'changes'> & { changes: ValueChange[] };

function entries(db: Database): Collection<JournalEntry> {
  return db.client.db().collection<JournalEntry>(db.models.auditEntries.collection.collectionName);
}

/**
 * Runs `work` holding the school write lock (one writer at a time across every instance and the
 * `campus` command), after undoing any change a dead writer left half-applied.
 */
export async function withSchoolLock<T>(db: Database, work: () => Promise<T>, waitMs = LOCK_WAIT_MS): Promise<T> {
  const meta = db.client.db().collection<{ _id: string; owner: string; expiresAt: Date }>('meta');
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const deadline = Date.now() + waitMs;
  for (let pause = 20; !(await takeLock(meta, owner)); pause = Math.min(pause * 2, 500)) {
    if (Date.now() > deadline) throw new WriteBusyError();
    await new Promise((done) => setTimeout(done, pause));
  }
  const heartbeat = setInterval(() => {
    void meta.updateOne({ _id: LOCK_ID, owner }, { $set: { expiresAt: new Date(Date.now() + LOCK_TTL_MS) } }).catch(() => {});
  }, LOCK_TTL_MS / 3);
  try {
    await recoverInterrupted(db);
    return await work();
  } finally {
    clearInterval(heartbeat);
    await meta.deleteOne({ _id: LOCK_ID, owner }).catch(() => {});
  }
}

/** Inserting a fixed id succeeds for one writer only; a lock past its expiry is removed first. */
async function takeLock(meta: Collection<{ _id: string; owner: string; expiresAt: Date }>, owner: string): Promise<boolean> {
  try {
    await meta.insertOne({ _id: LOCK_ID, owner, expiresAt: new Date(Date.now() + LOCK_TTL_MS) });
    return true;
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  const held = await meta.findOne({ _id: LOCK_ID });
  if (held && held.expiresAt.getTime() < Date.now()) await meta.deleteOne({ _id: LOCK_ID, owner: held.owner, expiresAt: held.expiresAt });
  return false;
}

/** Journals and applies a planned change; returns its batch id (null when nothing changes). Call under the lock. */
export async function commitBatch(
  db: Database,
  request: BatchRequest,
  options: { now?: Date; highestIds?: Record<SchoolEntity, number> } = {},
): Promise<string | null> {
  if (request.changes.length === 0) return null;
  const batchId = await journalBatch(db, request, options.now ?? new Date());
  try {
    await applyDiffs(db, request.changes);
    if (options.highestIds) await rememberHighestIds(db, options.highestIds);
  } catch (err) {
    await rollBack(db, batchId, request.changes, err);
    if (isDatabaseUnreachable(err)) throw err;
    throw new WriteRolledBackError(err);
  }
  await entries(db).updateMany({ batchId }, { $set: { status: 'APPLIED' } });
  await batches(db).updateOne({ _id: batchId }, { $set: { status: 'APPLIED' } });
  await db.versions.bump('data');
  return batchId;
}

/**
 * The write-ahead step: the batch (APPLYING) and one entry per record with its before- and
 * after-image, written before any record is. Returns the batch id.
 */
export async function journalBatch(db: Database, request: BatchRequest, at: Date): Promise<string> {
  const batchId = randomUUID();
  const actor = actorFields(request.actor);
  await batches(db).insertOne({
    _id: batchId,
    at,
    ...actor,
    action: request.action,
    summary: request.summary,
    source: request.source ?? null,
    status: 'APPLYING',
    records: request.changes.length,
    error: null,
    undoneBy: null,
    undoes: request.undoes ?? null,
  });
  const journal = request.changes.map((diff, seq) => journalEntry(batchId, seq, at, actor, request.action, diff));
  for (let i = 0; i < journal.length; i += CHUNK) await entries(db).insertMany(journal.slice(i, i + CHUNK));
  return batchId;
}

/** Writes each record's after-image (inserting, replacing, deleting), in bulk per kind. */
async function applyDiffs(db: Database, diffs: readonly RecordDiff[]): Promise<void> {
  for (const entity of ['STUDENT', 'CLUB', 'PROJECT'] as const) {
    const ops: AnyBulkWriteOperation<RecordRow>[] = diffs
      .filter((d) => d.entity === entity)
      .map((d) => {
        if (d.after === null) return { deleteOne: { filter: { _id: d.id } } } satisfies AnyBulkWriteOperation<RecordRow>;
        if (d.before === null) return { insertOne: { document: { ...d.after } } } satisfies AnyBulkWriteOperation<RecordRow>;
        return { replaceOne: { filter: { _id: d.id }, replacement: withoutId(d.after) } } satisfies AnyBulkWriteOperation<RecordRow>;
      });
    for (let i = 0; i < ops.length; i += WRITE_CHUNK) {
      await collection(db, entity).bulkWrite(ops.slice(i, i + WRITE_CHUNK), { ordered: true });
    }
  }
}

/** Puts back each record's before-image, newest step first; writing an image already in place is harmless. */
async function restoreBefore(db: Database, diffs: readonly RecordDiff[]): Promise<void> {
  for (const d of [...diffs].reverse()) {
    const records = collection(db, d.entity);
    if (d.before === null) await records.deleteOne({ _id: d.id });
    else await records.replaceOne({ _id: d.id }, withoutId(d.before), { upsert: true });
  }
}

async function rollBack(db: Database, batchId: string, diffs: readonly RecordDiff[], cause: unknown): Promise<void> {
  try {
    await restoreBefore(db, diffs);
    const error = cause instanceof Error ? cause.message.slice(0, 500) : String(cause);
    await entries(db).updateMany({ batchId }, { $set: { status: 'ROLLED_BACK' } });
    await batches(db).updateOne({ _id: batchId }, { $set: { status: 'ROLLED_BACK', error } });
  } finally {
    // Whatever readers saw while it was written is stale now.
    await db.versions.bump('data').catch(() => {});
  }
}

/** Undoes every batch a dead writer left APPLYING, from its journal. Runs under the lock. */
export async function recoverInterrupted(db: Database): Promise<number> {
  const stuck = await batches(db).find({ status: 'APPLYING' }).toArray();
  for (const batch of stuck) {
    const journal = await entries(db).find({ batchId: batch._id }).sort({ seq: 1 }).toArray();
    await rollBack(db, batch._id, journal.map(diffOfEntry), new Error('interrupted before it finished; undone from its journal'));
  }
  return stuck.length;
}

/** The record change an audit entry journals. */
export function diffOfEntry(entry: Pick<AuditEntryDoc, 'entity' | 'recordId' | 'before' | 'after'>): RecordDiff {
  return {
    entity: entry.entity,
    id: entry.recordId,
    before: normalizeDoc(entry.entity, entry.before),
    after: normalizeDoc(entry.entity, entry.after),
  };
}

/** A journaled document (stored as it was written) in the shape of its model, or null. */
export function normalizeDoc(entity: SchoolEntity, doc: unknown): SchoolDoc | null {
  if (doc === null || doc === undefined || typeof doc !== 'object') return null;
  if (entity === 'STUDENT') return normalizeStudent(doc as DocOf['STUDENT']);
  if (entity === 'CLUB') return normalizeClub(doc as DocOf['CLUB']);
  return normalizeProject(doc as DocOf['PROJECT']);
}

function withoutId(doc: SchoolDoc): WithoutId<RecordRow> {
  // A replacement must not carry _id (the filter names the record).
  const { _id: _ignored, ...rest } = doc;
  return rest;
}

function actorFields(actor: Actor): Pick<AuditBatchDoc, 'actorKind' | 'actorId' | 'actorEmail'> {
  return actor.kind === 'CLI'
    ? { actorKind: 'CLI', actorId: null, actorEmail: null }
    : { actorKind: 'ACCOUNT', actorId: actor.accountId, actorEmail: actor.email };
}

function journalEntry(
  batchId: string,
  seq: number,
  at: Date,
  actor: Pick<AuditBatchDoc, 'actorKind' | 'actorId' | 'actorEmail'>,
  action: AuditEntryDoc['action'],
  diff: RecordDiff,
): JournalEntry {
  return {
    _id: `${batchId}:${String(seq).padStart(6, '0')}`,
    batchId,
    seq,
    at,
    ...actor,
    action,
    entity: diff.entity,
    recordId: diff.id,
    label: recordLabel(diff.after ?? diff.before),
    operation: diff.before === null ? 'CREATE' : diff.after === null ? 'DELETE' : 'UPDATE',
    before: diff.before,
    after: diff.after,
    changes: fieldChanges(diff.before, diff.after),
    status: 'APPLYING',
  };
}

/** A record's name as the log shows it. */
export function recordLabel(doc: SchoolDoc | null): string {
  return doc ? doc.name : '';
}

/** The fields people would call changed (derived ones left out), in the record's field order. */
export function fieldChanges(before: object | null, after: object | null): ValueChange[] {
  const b = (before ?? {}) as Record<string, unknown>;
  const a = (after ?? {}) as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((f) => !DERIVED.has(f));
  return fields
    .filter((f) => JSON.stringify(b[f] ?? null) !== JSON.stringify(a[f] ?? null))
    .map((field) => ({ field, before: b[field] ?? null, after: a[field] ?? null }));
}
