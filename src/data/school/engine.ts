import { randomUUID } from 'node:crypto';
import type { Collection, Document } from 'mongodb';
import { AppError, ServiceUnavailableError } from '../../errors/index.js';
import type { Database } from '../database.js';
import { isDatabaseUnreachable, isDuplicateKey } from '../platform/errors.js';
import { Lease, describeHolder, isAbandoned, type LeaseOptions } from '../platform/lease.js';
import type { AuditBatchDoc, AuditEntryDoc } from '../models/audit.model.js';
import { dropEvents, planEvents, pruneEvents, takeSequence, writeEvents } from '../events/outbox.js';
import {
  announce,
  announcementOf,
  completedEvent,
  endAnnouncement,
  openAnnouncement,
  settleAnnouncement,
} from '../events/announcements.js';
import { SchoolState, normalizeClub, normalizeProject, normalizeStudent, rememberHighestIds } from './state.js';
import type { Actor, BatchRequest, DocOf, RecordDiff, SchoolDoc, SchoolEntity, ValueChange } from './types.js';

/*
 * How a change to school data is written (docs/school-writes.md; docs/architecture.md, "The way
 * through"): under one write lease (src/data/platform/lease.ts), planned and validated first
 * (src/data/school/writes.ts), then journaled and applied here, by commitBatch, the one write path.
 * FerretDB 1.x has no transactions, so "all or nothing" is built from a write-ahead journal: the
 * batch (status APPLYING) and its audit entries, holding each record's whole document before and
 * after, are written first; then the records (deleted and inserted in bulk); then the batch is
 * marked APPLIED and the data version moves. A write that fails is undone at once from the
 * before-images (ROLLED_BACK). A writer that died half-way leaves an APPLYING batch: whoever comes
 * next (the service at start-up or in the background, a reader, a writer) rolls it back under the
 * lease and marks it interrupted. Readers never serve a batch that has not settled (readSettled).
 * A writer that stalls past the lease's expiry and wakes after another process took it over is
 * fenced out: every write here is made only while the lease still carries this writer's token
 * (assertLeaseHeld), and the batch settles only if it still carries that token, so it commits
 * nothing and leaves its batch for the new holder to roll back.
 */

/** The `meta` document of the write lease (src/data/platform/lease.ts). */
const LOCK_ID = 'school-write-lock';
/** How long a writer waits for the lease before giving up (409). */
const LOCK_WAIT_MS = 15_000;
/** How long a reader waits for a living writer's batch to settle before answering 503. */
const SETTLE_WAIT_MS = 20_000;
/** Audit entries and records per insert. */
const CHUNK = 500;
/** Records per document of the write-ahead journal (about 1 KB each for a student's two images). */
const JOURNAL_CHUNK = 250;
/**
 * Ids per `deleteMany`. FerretDB over SQLite pushes no `$in` down to its storage, so each delete
 * reads the collection once: few large deletes cost less than many small ones.
 */
const ID_CHUNK = 2000;
/** Fields derived from others: kept in the journal, left out of the changes people read. */
const DERIVED = new Set(['_id', 'enrolledRank', 'dormitoryRank']);

/** 409: another change holds the write lock for longer than a writer waits. */
export class WriteBusyError extends AppError {
  constructor() {
    super('CONFLICT', 'Another change to school data is being written; try again in a moment.');
  }
}

/** 503: a change to school data is still being written after a reader waited for it. */
export class SchoolUnsettledError extends ServiceUnavailableError {
  constructor() {
    super('A change to school data is being written; try again in a moment.', undefined, 2);
  }
}

/**
 * 409: this writer lost its lease while it wrote (it stalled for longer than the lease lasts: a
 * long pause, a frozen container, a database away), so it stopped before its change took effect.
 * What it had written is rolled back by the lease's next holder, as after a crash
 * (docs/school-writes.md, "The write lease and its fencing token").
 */
export class WriteLeaseLostError extends AppError {
  constructor() {
    super(
      'CONFLICT',
      'The write lease was lost: this writer went longer than the lease lasts without renewing it (it stalled, or the database was away) and another process may hold it now, so the change was not committed. Try again.',
    );
  }
}

/**
 * The fencing check before a write under the lease (src/data/platform/lease.ts, `stillHeld`): a writer that
 * lost its lease writes nothing more, and leaves what it wrote as a crash would.
 */
export async function assertLeaseHeld(lease: Lease): Promise<void> {
  if (!(await lease.stillHeld())) throw new WriteLeaseLostError();
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
 * Runs `work` holding the school write lease (one writer at a time across every instance and the
 * `campus` command), after undoing any change a dead writer left half-applied. A lease whose
 * holder died is taken over at once when it ran in this pid namespace, else after LEASE_TTL_MS.
 * `work` gets the lease to pass to commitBatch, which checks it before each write.
 */
export async function withSchoolLock<T>(db: Database, work: (lease: Lease) => Promise<T>, options: LeaseOptions = {}): Promise<T> {
  const lease = await Lease.acquire(db.client.db(), LOCK_ID, { waitMs: LOCK_WAIT_MS, ...options });
  if (!lease) throw new WriteBusyError();
  try {
    await recoverInterrupted(db, lease, 'before its own change');
    return await work(lease);
  } finally {
    await lease.release();
  }
}

/**
 * What readers call before reading school records (through readSettled): returns once no batch is
 * being written, with the batches it recovered. A batch whose writer is gone (killed, or its
 * database went away under it) is rolled back here and now, under the lease, so no reader ever
 * serves a mix of before and after; a living writer's batch is waited for (a whole school's batch
 * settles in seconds: docs/benchmarks.md, "School writes"), and past `waitMs` the reader gives up
 * with a 503. `campus serve` calls it at start-up, before it answers any request.
 */
export async function settleSchool(db: Database, waitMs = SETTLE_WAIT_MS, when = 'before a read'): Promise<string[]> {
  const deadline = Date.now() + waitMs;
  const recovered: string[] = [];
  for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
    if (!(await hasUnsettledBatch(db))) return recovered;
    const held = await Lease.read(db.client.db(), LOCK_ID);
    if (!held || isAbandoned(held)) {
      // Whoever takes the lease first recovers; the others then find nothing left to do.
      const lease = await Lease.acquire(db.client.db(), LOCK_ID, { waitMs: Math.max(0, deadline - Date.now()) });
      if (lease) {
        try {
          recovered.push(...(await recoverInterrupted(db, lease, when)));
        } catch (err) {
          // This reader stalled and lost the lease: its new holder recovers, and the loop looks again.
          if (!(err instanceof WriteLeaseLostError)) throw err;
        } finally {
          await lease.release();
        }
      }
      continue;
    }
    if (Date.now() > deadline) throw new SchoolUnsettledError();
    await new Promise((done) => setTimeout(done, pause));
  }
}

/**
 * Reads school records as one settled state: waits for (or recovers) any batch being written,
 * reads, and reads again if a batch began meanwhile (it is still APPLYING, or it settled and moved
 * the data version): FerretDB has no transactions to isolate a reader, so the journal's status
 * and the data version are the reader's proof that what it read is one state, before or after.
 */
export async function readSettled<T>(db: Database, read: () => Promise<T>, waitMs = SETTLE_WAIT_MS): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    await settleSchool(db, Math.max(0, deadline - Date.now()));
    const version = (await db.versions.readFresh()).data;
    const value = await read();
    if (!(await hasUnsettledBatch(db)) && (await db.versions.readFresh()).data === version) return value;
    if (Date.now() > deadline) throw new SchoolUnsettledError();
  }
}

/**
 * `campus serve` looks for batches whose writer died every `everyMs` (a killed `campus import`, a
 * database that went away under a writer) and rolls them back once it can, rather than leaving
 * the records half-applied until the next reader or writer comes; and for an announcement of a
 * mass change that no living writer holds (src/data/events/announcements.ts), which it closes.
 * Returns the stop function.
 */
export function watchForInterrupted(db: Database, onRecovered: (batchIds: string[]) => void, everyMs = 5000): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    settleSchool(db, 0, 'in the background')
      .then(async (ids) => {
        if (ids.length > 0) onRecovered(ids);
        await closeLeftAnnouncement(db);
      })
      // A living writer's batch, or a database that is away: the next round looks again.
      .catch(() => {})
      .finally(() => (running = false));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * An announcement left open with no batch being written (its writer died between announcing and
 * journaling, or could not end it): closed under the lease once no living writer holds it.
 */
async function closeLeftAnnouncement(db: Database): Promise<void> {
  if (!(await openAnnouncement(db))) return;
  const held = await Lease.read(db.client.db(), LOCK_ID);
  if (held && !isAbandoned(held)) return;
  const lease = await Lease.acquire(db.client.db(), LOCK_ID, { waitMs: 0 });
  if (!lease) return;
  try {
    await recoverInterrupted(db, lease, 'in the background');
  } finally {
    await lease.release();
  }
}

/**
 * Reads what has committed without waiting for a living writer: the change feed, which serves an
 * announced batch's `school.rollover.started` while the batch is being written
 * (src/data/events/announcements.ts). Like readSettled, a batch whose writer is gone is rolled
 * back first, and the read is made again when a batch settled or rolled back meanwhile (the data
 * version moved). `below` is the first event number of the batches still being written (Infinity
 * when none is): their events may yet be rolled back, so the reader leaves out that number and
 * every one after it. It is found after the read: a batch is journaled before its events are
 * written, so a batch whose events the read saw is still APPLYING then, or it settled and moved
 * the version.
 */
export async function readCommitted<T>(
  db: Database,
  read: () => Promise<T>,
  waitMs = SETTLE_WAIT_MS,
): Promise<{ value: T; below: number }> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    await settleSchool(db, 0).catch((err: unknown) => {
      // A living writer's batch: not waited for.
      if (!(err instanceof SchoolUnsettledError)) throw err;
    });
    const version = (await db.versions.readFresh()).data;
    const value = await read();
    const writing = await batches(db)
      .find({ status: 'APPLYING' }, { projection: { eventFirst: 1 } })
      .toArray();
    // A batch journaled without events (none of commitBatch's) holds back no event.
    const below = Math.min(Infinity, ...writing.flatMap((batch) => (batch.eventFirst == null ? [] : [batch.eventFirst])));
    if ((await db.versions.readFresh()).data === version) return { value, below };
    if (Date.now() > deadline) throw new SchoolUnsettledError();
  }
}

/** True while some batch is APPLYING (being written, or left half-written by a writer that died). */
export async function hasUnsettledBatch(db: Database): Promise<boolean> {
  return (await batches(db).findOne({ status: 'APPLYING' }, { projection: { _id: 1 } })) !== null;
}

/**
 * Journals and applies a planned change; returns its batch id (null when nothing changes). Call
 * under the lock, with its lease: every write below is made only while the lease is still this
 * writer's (assertLeaseHeld), and the batch settles only if no recoverer claimed it meanwhile, so
 * a writer that stalled past the lease's expiry commits nothing (WriteLeaseLostError) and leaves
 * what it wrote as a crash would, for the lease's new holder to roll back.
 */
export async function commitBatch(
  db: Database,
  lease: Lease,
  request: BatchRequest,
  options: { now?: Date; highestIds?: Record<SchoolEntity, number>; onProgress?: ApplyHooks['onWritten'] } = {},
): Promise<string | null> {
  if (request.changes.length === 0) return null;
  const at = options.now ?? new Date();
  const batchId = randomUUID();
  // The change feed's events (src/data/events/outbox.ts), planned from the school as it is now
  // and numbered under this lease; their range goes into the batch so a rollback removes them.
  const school = await SchoolState.load(db);
  const planned = planEvents(
    { students: [...school.all('STUDENT')], clubs: [...school.all('CLUB')], projects: [...school.all('PROJECT')] },
    request,
    batchId,
    at,
  );
  // A rollover or a mass change is announced in the feed before it applies, and its own events
  // end with the announcement's close (src/data/events/announcements.ts).
  const announcement = announcementOf(request, batchId, at);
  if (announcement) planned.push(completedEvent(announcement));
  await assertLeaseHeld(lease);
  if (announcement) await announce(db, announcement, () => assertLeaseHeld(lease));
  const first = await takeSequence(db, planned.length);
  await journalBatch(db, request, at, { batchId, eventFirst: first, eventLast: first + planned.length - 1, lease });
  try {
    await applyDiffs(db, lease, request.changes, options.onProgress ? { onWritten: options.onProgress } : {});
    if (options.highestIds) {
      await assertLeaseHeld(lease);
      await rememberHighestIds(db, options.highestIds);
    }
    await writeEntries(db, lease, batchId, request, at, 'APPLIED');
    // The outbox: written before the batch settles, so they commit with it (the APPLIED write
    // below) or are removed with it; the feed never reads them while the batch is APPLYING.
    await assertLeaseHeld(lease);
    await writeEvents(db, planned, first);
  } catch (err) {
    // A writer that lost its lease undoes nothing: the records are the new holder's now.
    if (err instanceof WriteLeaseLostError) throw err;
    await rollBack(db, lease, batchId, request.changes, err);
    // Closed as rolled back now, or by the next recovery if the database is away.
    if (announcement) await settleAnnouncement(db, () => assertLeaseHeld(lease)).catch(() => {});
    if (isDatabaseUnreachable(err)) throw err;
    throw new WriteRolledBackError(err);
  }
  await settle(db, lease, batchId);
  // Its completed event committed with it; left behind, the background watch ends it (watchForInterrupted).
  if (announcement) await endAnnouncement(db, batchId).catch(() => {});
  await dropJournal(db, batchId, Math.ceil(request.changes.length / JOURNAL_CHUNK)).catch(() => {});
  // Events past their retention go as the feed grows, before the version moves, so no cached
  // page of the feed outlives the events it was read from.
  await pruneEvents(db, at).catch(() => {});
  await db.versions.bump('data');
  return batchId;
}

/**
 * The batch settles in one write: the moment its change takes effect. Made only while the lease
 * is this writer's, and only if the batch still carries this writer's token: a recoverer that
 * took the lease over writes its own into the batch before rolling it back (claimBatch), so a
 * writer that passed the check just before it froze still cannot mark it APPLIED.
 */
async function settle(db: Database, lease: Lease, batchId: string): Promise<void> {
  await assertLeaseHeld(lease);
  const settled = await batches(db).updateOne({ _id: batchId, status: 'APPLYING', fence: lease.token }, { $set: { status: 'APPLIED' } });
  if (settled.matchedCount === 0) throw new WriteLeaseLostError();
}

/**
 * The write-ahead step: the batch (APPLYING) and its journal, every record's before- and
 * after-image in a few documents of `school_journal` (JOURNAL_CHUNK records each), written before
 * any record is. The journal holds only unsettled batches, so it stays a handful of documents and
 * is read back by `_id` (FerretDB over SQLite filters nothing else in its storage: the audit log's
 * entries, one per record and growing with every change, took seconds to search by batch once a
 * few imports had piled up). The batch carries its writer's lease token (`fence`), and each write
 * is made only while that lease holds. Returns the batch id. (Tests journal a batch without a
 * lease, as a writer that died right after would leave it.)
 */
export async function journalBatch(
  db: Database,
  request: BatchRequest,
  at: Date,
  ids: { batchId?: string; eventFirst?: number; eventLast?: number; lease?: Lease } = {},
): Promise<string> {
  const batchId = ids.batchId ?? randomUUID();
  const actor = actorFields(request.actor);
  const chunks = Math.ceil(request.changes.length / JOURNAL_CHUNK);
  const fence = async () => {
    if (ids.lease) await assertLeaseHeld(ids.lease);
  };
  await fence();
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
    interrupted: false,
    recoveredAt: null,
    recoveredBy: null,
    journalChunks: chunks,
    eventFirst: ids.eventFirst ?? null,
    eventLast: ids.eventLast ?? null,
    fence: ids.lease?.token ?? null,
  });
  const docs: JournalChunk[] = [];
  for (let chunk = 0; chunk < chunks; chunk++) {
    const diffs = request.changes.slice(chunk * JOURNAL_CHUNK, (chunk + 1) * JOURNAL_CHUNK);
    docs.push({ _id: `${batchId}:${chunk}`, batchId, chunk, diffs: JSON.stringify(diffs) });
  }
  await fence();
  await journal(db).insertMany(docs);
  return batchId;
}

/**
 * The audit entries of a batch, one per record with its before- and after-image (what the audit
 * log lists and undo reads), written once the records are: APPLIED, or ROLLED_BACK when the batch
 * was undone. A writer that dies while writing them leaves some behind: they are put right by
 * `_id` (the only filter FerretDB over SQLite serves without reading the whole log). Each write
 * is made only while `lease` holds.
 */
async function writeEntries(
  db: Database,
  lease: Lease,
  batchId: string,
  request: Pick<BatchRequest, 'actor' | 'action' | 'changes'>,
  at: Date,
  status: 'APPLIED' | 'ROLLED_BACK',
): Promise<void> {
  const actor = actorFields(request.actor);
  const all = request.changes.map((diff, seq) => ({ ...journalEntry(batchId, seq, at, actor, request.action, diff), status }));
  for (let i = 0; i < all.length; i += CHUNK) {
    const chunk = all.slice(i, i + CHUNK);
    try {
      await assertLeaseHeld(lease);
      await entries(db).insertMany(chunk, { ordered: false });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      // Entries an earlier attempt wrote: say what became of them.
      for (const entry of chunk) {
        await assertLeaseHeld(lease);
        await entries(db).updateOne({ _id: entry._id }, { $set: { status } });
      }
    }
  }
}

/**
 * One document of a batch's write-ahead journal. Its diffs are one JSON text: FerretDB encodes and
 * decodes a document field by field, and a text of 250 records costs it a fraction of 250 records'
 * nested fields (docs/benchmarks.md, "School writes").
 */
interface JournalChunk {
  _id: string;
  batchId: string;
  chunk: number;
  diffs: string;
}

/** Removes a settled batch's journal, by `_id` (see journalBatch). */
async function dropJournal(db: Database, batchId: string, chunks: number): Promise<void> {
  for (let chunk = 0; chunk < chunks; chunk++) await journal(db).deleteOne({ _id: `${batchId}:${chunk}` });
}

function journal(db: Database): Collection<JournalChunk> {
  return db.client.db().collection<JournalChunk>(db.models.schoolJournal.collection.collectionName);
}

/**
 * Writes each record's after-image, per kind in two commands' worth of round trips: every record
 * the batch replaces or removes is deleted (one `deleteMany` by id), then every after-image is
 * inserted (`insertMany`). FerretDB 1.24 over SQLite reads, rewrites and re-indexes the whole
 * document for each update by `_id`, one statement at a time, so 1,000 `replaceOne` cost far more
 * than one delete and one insert of 1,000 (bench/school.ts; docs/benchmarks.md, "School writes").
 * Between the two, the batch's records are briefly absent: readers never see that, since they do
 * not read a batch that has not settled (settleSchool), and a writer that dies there leaves a
 * journal that puts every record back. Each delete and insert is made only while `lease` holds: a
 * writer that froze half-way and lost it writes no record more.
 */
async function applyDiffs(db: Database, lease: Lease, diffs: readonly RecordDiff[], hooks: ApplyHooks = {}): Promise<void> {
  await replaceRecords(db, lease, diffs, (d) => d.after, { ...hooks, pausable: true });
}

/** Puts back each record's before-image (writing an image already in place is harmless, so recovery may run twice). */
async function restoreBefore(db: Database, lease: Lease, diffs: readonly RecordDiff[]): Promise<void> {
  await replaceRecords(db, lease, diffs, (d) => d.before);
}

/** What a writer is told while it writes (progress) and, in tests, where it pauses (CAMPUS_TEST_PAUSE_AFTER). */
export interface ApplyHooks {
  readonly onWritten?: (written: number, total: number) => void;
}

async function replaceRecords(
  db: Database,
  lease: Lease,
  diffs: readonly RecordDiff[],
  image: (d: RecordDiff) => SchoolDoc | null,
  hooks: ApplyHooks & { pausable?: boolean } = {},
): Promise<void> {
  const total = diffs.length;
  const pauseAt = hooks.pausable ? testPausePoint() : null;
  let written = 0;
  if (pauseAt === 0) await pauseForTests(0);
  for (const entity of ['STUDENT', 'CLUB', 'PROJECT'] as const) {
    const mine = diffs.filter((d) => d.entity === entity);
    if (mine.length === 0) continue;
    const records = collection(db, entity);
    const ids = mine.map((d) => d.id);
    for (let i = 0; i < ids.length; i += ID_CHUNK) {
      await assertLeaseHeld(lease);
      await records.deleteMany({ _id: { $in: ids.slice(i, i + ID_CHUNK) } });
    }
    const docs = mine.map(image).filter((doc): doc is SchoolDoc => doc !== null);
    for (let i = 0; i < docs.length;) {
      // A chunk ends where a test asked the writer to pause, so the pause falls on that record.
      const end = pauseAt !== null && pauseAt > written && pauseAt < written + CHUNK ? i + pauseAt - written : i + CHUNK;
      const chunk = docs.slice(i, end);
      i += chunk.length;
      await assertLeaseHeld(lease);
      await records.insertMany(
        chunk.map((doc) => ({ ...doc })),
        { ordered: true },
      );
      written += chunk.length;
      hooks.onWritten?.(written, total);
      if (written === pauseAt) await pauseForTests(written);
    }
  }
}

/**
 * The crash tests' hook (test/school-records/crash.integration.test.ts): CAMPUS_TEST_PAUSE_AFTER=N makes a
 * writer stop once N after-images are written (0: right after its deletes), print so on stderr,
 * and wait there until it gets SIGUSR2 (a test kills it meanwhile, or its database). Ignored when
 * NODE_ENV is production.
 */
function testPausePoint(): number | null {
  const value = process.env['CAMPUS_TEST_PAUSE_AFTER'];
  if (value === undefined || value === '' || process.env['NODE_ENV'] === 'production') return null;
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 ? n : null;
}

async function pauseForTests(written: number): Promise<void> {
  const resumed = new Promise<void>((done) => process.once('SIGUSR2', () => done()));
  process.stderr.write(`CAMPUS_TEST_PAUSE_AFTER: paused after ${written} records (pid ${process.pid})\n`);
  await resumed;
}

/**
 * Undoes a batch from its before-images, under `lease` (its own writer's, or a recoverer's that
 * claimed the batch first): each write is made only while the lease holds, and the batch settles
 * as ROLLED_BACK only if it still carries that lease's token, so of two processes that each
 * believe they hold the lease, the one that lost it changes nothing.
 */
async function rollBack(
  db: Database,
  lease: Lease,
  batchId: string,
  diffs: readonly RecordDiff[],
  cause: unknown,
  interruption: Pick<AuditBatchDoc, 'interrupted' | 'recoveredAt' | 'recoveredBy'> | null = null,
): Promise<void> {
  try {
    await restoreBefore(db, lease, diffs);
    const batch = await batches(db).findOne({ _id: batchId });
    if (batch) {
      const actor: Actor =
        batch.actorKind === 'CLI' ? { kind: 'CLI' } : { kind: 'ACCOUNT', accountId: batch.actorId ?? 0, email: batch.actorEmail ?? '' };
      await writeEntries(db, lease, batchId, { actor, action: batch.action, changes: diffs }, batch.at, 'ROLLED_BACK');
    }
    // Its events go before it settles: no event exists for a change that did not commit.
    if (batch) {
      await assertLeaseHeld(lease);
      await dropEvents(db, { first: batch.eventFirst, last: batch.eventLast });
    }
    const error = cause instanceof Error ? cause.message.slice(0, 500) : String(cause);
    // The batch settles last: until then a reader finds it APPLYING and recovers or waits.
    await assertLeaseHeld(lease);
    const settled = await batches(db).updateOne(
      { _id: batchId, fence: lease.token },
      { $set: { status: 'ROLLED_BACK', error, ...(interruption ?? {}) } },
    );
    if (settled.matchedCount === 0) throw new WriteLeaseLostError();
    await dropJournal(db, batchId, batch?.journalChunks ?? 0);
  } finally {
    // Whatever readers saw while it was written is stale now.
    await db.versions.bump('data').catch(() => {});
  }
}

/**
 * A recoverer marks a batch as its own before undoing it: the batch's `fence` becomes the
 * recoverer's lease token, so its first writer, should it wake up from a stall, can no longer
 * settle it (settle). False when the batch settled meanwhile (its writer finished just now).
 */
async function claimBatch(db: Database, lease: Lease, batchId: string): Promise<boolean> {
  await assertLeaseHeld(lease);
  const claimed = await batches(db).updateOne({ _id: batchId, status: 'APPLYING' }, { $set: { fence: lease.token } });
  return claimed.matchedCount === 1;
}

/**
 * Rolls back every batch a dead writer left APPLYING, from its journal's before-images, and says
 * so in its batch: interrupted, rolled back, when and by which process. Rolling back (rather than
 * finishing the batches whose after-images were all written) keeps one rule: a batch applies
 * whole under its writer or not at all (docs/school-writes.md). A writer that is not dead but
 * stalled past its lease's expiry finds, when it wakes, that it no longer holds the lease and
 * that its batch is claimed: it writes nothing more. Runs under the lease; returns the ids of the
 * batches it rolled back.
 */
export async function recoverInterrupted(db: Database, lease: Lease, when: string): Promise<string[]> {
  const stuck = await batches(db).find({ status: 'APPLYING' }).toArray();
  const recovered: string[] = [];
  for (const batch of stuck) {
    if (!(await claimBatch(db, lease, batch._id))) continue;
    const diffs = await journaledDiffs(db, batch);
    await rollBack(db, lease, batch._id, diffs, new Error('interrupted: its writer stopped before it finished'), {
      interrupted: true,
      recoveredAt: new Date(),
      recoveredBy: `${processName()} ${when} (${describeHolder(lease.doc)})`,
    });
    recovered.push(batch._id);
  }
  // An announcement its writer left open: closed as rolled back, or ended if its batch applied.
  await settleAnnouncement(db, () => assertLeaseHeld(lease));
  // Journals of batches that settled just before their writer stopped (none, almost always).
  await assertLeaseHeld(lease);
  await journal(db).deleteMany({});
  return recovered;
}

/** A batch's record changes, from its journal (or, for a batch journaled before `school_journal` existed, from its audit entries). */
async function journaledDiffs(db: Database, batch: AuditBatchDoc): Promise<RecordDiff[]> {
  if (!batch.journalChunks) {
    return (await entries(db).find({ batchId: batch._id }).sort({ seq: 1 }).toArray()).map(diffOfEntry);
  }
  const ids = Array.from({ length: batch.journalChunks }, (_, chunk) => `${batch._id}:${chunk}`);
  const chunks: (JournalChunk | null)[] = [];
  for (const id of ids) chunks.push(await journal(db).findOne({ _id: id }));
  return chunks
    .filter((c): c is JournalChunk => c !== null)
    .sort((x, y) => x.chunk - y.chunk)
    .flatMap((c) =>
      (JSON.parse(c.diffs) as RecordDiff[]).map((d) => ({
        ...d,
        before: normalizeDoc(d.entity, d.before),
        after: normalizeDoc(d.entity, d.after),
      })),
    );
}

/** The command this process runs, as the audit log names a recoverer: `campus serve`, `campus import`. */
function processName(): string {
  const command = process.argv.slice(2).find((arg) => !arg.startsWith('-'));
  return /campus(\.js)?$/.test(process.argv[1] ?? '') && command ? `campus ${command}` : 'campus';
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
    // What the entry is once its batch settles. Until then its batch (APPLYING) is what counts, and
    // the audit log leaves the entries of an unsettled batch out (src/data/school/audit.ts). Marking
    // entries after the fact cost FerretDB time that grew with the log, since it filters nothing but
    // _id in its storage (docs/benchmarks.md, "School writes"); a rollback still marks its entries.
    status: 'APPLIED',
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
