import type { Collection, Document } from 'mongodb';
import { ANNOUNCED_BATCH_RECORDS } from '../../limits.js';
import type { Database } from '../database.js';
import type { AuditBatchDoc } from '../models/audit.model.js';
import type { BatchRequest, RecordDiff } from '../school/types.js';
import { events, takeSequence, writeEvents, type PlannedEvent } from './outbox.js';

/*
 * The school-year signal (docs/webhooks.md, "Rollovers and mass changes"): a rollover, and any
 * school batch of ANNOUNCED_BATCH_RECORDS records or more, is announced before it applies and
 * closed after, so that an app mirroring the school does not mistake "every student moved up a
 * grade" for "delete everyone". commitBatch (src/data/school/engine.ts), under the write lease:
 *
 * 1. writes the announcement (one `meta` document, what /v1/status and /v1/health read while it is
 *    under way) and `school.rollover.started`, a committed event of its own, and moves the `feed`
 *    version (the feed's cached answers; not `data`, on which the school's read model rests): the
 *    feed and webhooks serve it while the batch is still being written (the feed stops before a
 *    batch that has not settled, never before what committed ahead of it: readCommitted,
 *    src/data/school/engine.ts), and data readers go on reading the school as it was;
 * 2. writes the batch, whose events (each `student.updated` with the batch id) end with
 *    `school.rollover.completed` (outcome APPLIED): they commit together or not at all;
 * 3. once it settled, removes the announcement. A batch rolled back (at once, or after its writer
 *    died) is closed by `school.rollover.completed` with outcome ROLLED_BACK and zero counts,
 *    written by whoever rolled it back (settleAnnouncement, called by the recovery).
 */

const ANNOUNCEMENT_ID = 'school-announcement';

/** How many records a batch creates, updates and deletes. */
export interface ChangeCounts {
  readonly created: number;
  readonly updated: number;
  readonly deleted: number;
}

/** A batch announced in the feed, as the `meta` document keeps it while it is under way. */
export interface AnnouncementDoc {
  readonly _id: typeof ANNOUNCEMENT_ID;
  readonly batchId: string;
  /** The batch's action: ROLLOVER, or IMPORT, UNDO... for a mass change of another kind. */
  readonly kind: string;
  readonly records: number;
  readonly counts: ChangeCounts;
  /** When it was announced (the batch's time). */
  readonly at: Date;
  /** The sequence number of its `school.rollover.started`. */
  readonly startedEvent: number;
  readonly actorKind: 'ACCOUNT' | 'CLI';
  readonly actorId: number | null;
}

/** What the started and completed events say (`data`). */
interface AnnouncementData {
  readonly kind: string;
  readonly records: number;
  readonly counts: ChangeCounts;
}

/** A batch to announce, before it has a sequence number. */
export type Announcement = Omit<AnnouncementDoc, '_id' | 'startedEvent'>;

function meta(db: Database): Collection<Document & { _id: string }> {
  return db.client.db().collection<Document & { _id: string }>('meta');
}

/** Whether a batch is announced: a rollover always, another batch from ANNOUNCED_BATCH_RECORDS records. */
export function announces(request: Pick<BatchRequest, 'action' | 'changes'>): boolean {
  return request.action === 'ROLLOVER' || request.changes.length >= ANNOUNCED_BATCH_RECORDS;
}

/** The announcement of a batch, or null when it is not announced. */
export function announcementOf(request: BatchRequest, batchId: string, at: Date): Announcement | null {
  if (!announces(request)) return null;
  return {
    batchId,
    kind: request.action,
    records: request.changes.length,
    counts: countChanges(request.changes),
    at,
    actorKind: request.actor.kind,
    actorId: request.actor.kind === 'ACCOUNT' ? request.actor.accountId : null,
  };
}

/** What a batch's diffs do: a record without a before-image is created, one without an after-image deleted. */
export function countChanges(changes: readonly RecordDiff[]): ChangeCounts {
  let created = 0;
  let deleted = 0;
  for (const diff of changes) {
    if (diff.before === null) created += 1;
    else if (diff.after === null) deleted += 1;
  }
  return { created, updated: changes.length - created - deleted, deleted };
}

function eventOf(
  announcement: Announcement,
  type: 'school.rollover.started' | 'school.rollover.completed',
  data: AnnouncementData & { outcome?: string },
): PlannedEvent {
  return {
    type,
    at: announcement.at,
    actorKind: announcement.actorKind,
    actorId: announcement.actorId,
    batchId: announcement.batchId,
    data: JSON.stringify(data),
  };
}

/** The `school.rollover.completed` of a batch that applied: the last of the batch's own events. */
export function completedEvent(announcement: Announcement): PlannedEvent {
  const { kind, records, counts } = announcement;
  return eventOf(announcement, 'school.rollover.completed', { kind, outcome: 'APPLIED', records, counts });
}

/**
 * Announces a batch before it is journaled: the `meta` document, then `school.rollover.started`
 * (numbered now, before the batch's events), then a new `feed` version so that cached pages of the
 * feed show it. Call under the school write lease; `fence` checks it before each write.
 */
export async function announce(db: Database, announcement: Announcement, fence: () => Promise<void>): Promise<void> {
  await fence();
  const startedEvent = await takeSequence(db, 1);
  const doc: AnnouncementDoc = { _id: ANNOUNCEMENT_ID, ...announcement, startedEvent };
  await fence();
  await meta(db).replaceOne({ _id: ANNOUNCEMENT_ID }, doc, { upsert: true });
  const { kind, records, counts } = announcement;
  await fence();
  await writeEvents(db, [eventOf(announcement, 'school.rollover.started', { kind, records, counts })], startedEvent);
  // The feed's cached answers move; the school's read model does not (it would wait for the batch).
  await db.versions.bump('feed');
}

/** The batch announced and not yet closed, if any (what /v1/status and /v1/health call a rollover under way). */
export async function openAnnouncement(db: Database): Promise<AnnouncementDoc | null> {
  return (await meta(db).findOne({ _id: ANNOUNCEMENT_ID })) as AnnouncementDoc | null;
}

/** Ends the announcement of a batch that settled APPLIED (its completed event committed with it). */
export async function endAnnouncement(db: Database, batchId: string): Promise<void> {
  await meta(db).deleteOne({ _id: ANNOUNCEMENT_ID, batchId });
}

/**
 * Closes an announcement whose batch is not being written any more, under the write lease: after
 * its own writer rolled it back, or by whoever recovers after a writer died. A batch that applied
 * has its completed event already; one that was rolled back, or never journaled, gets
 * `school.rollover.completed` with outcome ROLLED_BACK, if its started event was written (an app
 * that never heard of it has nothing to close). A batch still APPLYING is left to the recovery.
 */
export async function settleAnnouncement(db: Database, fence: () => Promise<void>): Promise<void> {
  const open = await openAnnouncement(db);
  if (!open) return;
  const batches = db.client.db().collection<AuditBatchDoc>(db.models.auditBatches.collection.collectionName);
  const batch = await batches.findOne({ _id: open.batchId }, { projection: { status: 1 } });
  if (batch?.status === 'APPLYING') return;
  if (batch?.status !== 'APPLIED' && (await events(db).findOne({ _id: open.startedEvent }, { projection: { _id: 1 } }))) {
    await fence();
    const first = await takeSequence(db, 1);
    const closed = eventOf(open, 'school.rollover.completed', {
      kind: open.kind,
      outcome: 'ROLLED_BACK',
      records: 0,
      counts: { created: 0, updated: 0, deleted: 0 },
    });
    await fence();
    await writeEvents(db, [closed], first);
  }
  await fence();
  await meta(db).deleteOne({ _id: ANNOUNCEMENT_ID, batchId: open.batchId });
  await db.versions.bump('feed');
}
