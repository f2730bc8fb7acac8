import type { Collection, Document } from 'mongodb';
import type { Database } from '../database.js';
import { viewOf, type EventType, type Subscriber } from './types.js';
import { deleteMatching } from '../platform/delete-matching.js';
import { isEnrolledRole, type StudentDoc } from '../models/student.model.js';
import type { ClubDoc } from '../models/club.model.js';
import type { ProjectDoc } from '../models/project.model.js';
import { clubSummary, participantSummary } from '../school/shapes.js';
import { studentRecord } from '../school/student-record.js';
import type { AuditAction, BatchRequest, SchoolDoc, SchoolEntity } from '../school/types.js';

/*
 * The change feed's outbox (docs/school-writes.md, "Events"). Every batch commitBatch
 * writes (src/data/school/engine.ts) carries its events: one per student, club or project whose
 * REST shape changed (every record the batch writes, and the clubs and projects whose participant
 * summaries or club summary it changed), plus one `batch.completed` for an import, rollover or
 * undo. They are planned before the journal, numbered under the write lease, written before the
 * batch settles, and deleted when the batch is rolled back (at once or by recovery), so an event
 * exists exactly when its change committed. The feed (GET /v1/changes) reads them through
 * readSettled: it never serves the events of a batch that is still APPLYING.
 */

/** How long events are kept at least (docs/data-api.md, "GET /v1/changes"); a cursor older than that is 410. */
export const EVENT_RETENTION_DAYS = 30;
const RETENTION_MS = EVENT_RETENTION_DAYS * 24 * 60 * 60 * 1000;
/** The `meta` document holding the last sequence number given to an event. */
const SEQUENCE_ID = 'event-sequence';
/** The `meta` document holding the highest sequence number pruned (events up to it are gone). */
const PRUNED_ID = 'event-pruned';
/** The actions that write one `batch.completed` event, with their kind. */
const BATCH_KINDS: Partial<Record<AuditAction, string>> = { IMPORT: 'IMPORT', ROLLOVER: 'ROLLOVER', UNDO: 'UNDO' };

/** An event as stored: `_id` is its sequence number (commit order); `data` is JSON text, as the journal's diffs are. */
export interface EventDoc {
  _id: number;
  /** A row of src/data/events/types.ts (read back as text: a type no row names is shown to nobody). */
  type: string;
  at: Date;
  actorKind: 'ACCOUNT' | 'CLI';
  actorId: number | null;
  batchId: string | null;
  data: string;
}

/** Who made a change, as a subscriber sees it: the account's id only for operators (presentEvent, below). */
export type ChangeActor =
  { readonly kind: 'ACCOUNT'; readonly accountId: number | null } | { readonly kind: 'CLI'; readonly accountId: null };

/** An event as the feed answers it and a webhook receives it (presentEvent, below). */
export interface ChangeEvent {
  readonly id: string;
  readonly type: string;
  readonly time: string;
  readonly actor: ChangeActor;
  readonly batchId: string | null;
  readonly data: unknown;
}

/** The `data` of a `batch.completed` (its summary names records and files: src/data/events/types.ts says who sees it). */
interface BatchCompletedData {
  readonly kind: string;
  readonly summary: string;
  readonly records: number;
  readonly counts: { readonly created: number; readonly updated: number; readonly deleted: number };
}

/** The family of each kind of record's events (`student.updated`, ...). */
const FAMILY = { STUDENT: 'student', CLUB: 'club', PROJECT: 'project' } as const satisfies Record<SchoolEntity, string>;

export function events(db: Database): Collection<EventDoc> {
  return db.client.db().collection<EventDoc>('school_events');
}

function meta(db: Database): Collection<Document & { _id: string }> {
  return db.client.db().collection<Document & { _id: string }>('meta');
}

/** The school in memory, as REST shows it: the records by id and each club's members. */
class Shapes {
  private readonly members = new Map<number, StudentDoc[]>();
  constructor(
    readonly students: Map<number, StudentDoc>,
    readonly clubs: Map<number, ClubDoc>,
    readonly projects: Map<number, ProjectDoc>,
  ) {
    for (const student of [...students.values()].sort((a, b) => a._id - b._id)) {
      // A student in the same club twice (major and autonomous) is one member (src/data/school/read-model.ts).
      for (const clubId of new Set([student.majorClubId, student.autonomousClubId])) {
        if (clubId == null) continue;
        const list = this.members.get(clubId);
        if (list) list.push(student);
        else this.members.set(clubId, [student]);
      }
    }
  }

  /** GET /v1/students's shape of a student (the one builder: src/data/school/student-record.ts). */
  student(s: StudentDoc): unknown {
    return studentRecord(s, this.clubs);
  }

  /** GET /v1/clubs's shape (leader apart from participants, students as participant summaries: src/graphql/resolvers/club.ts). */
  club(c: ClubDoc): unknown {
    const leaderDoc = c.leaderId == null ? undefined : this.students.get(c.leaderId);
    const leader = leaderDoc && isEnrolledRole(leaderDoc.role) ? leaderDoc : null;
    const participants = (this.members.get(c._id) ?? []).filter((m) => !(m._id === c.leaderId && isEnrolledRole(m.role)));
    return {
      id: c._id,
      name: c.name,
      type: c.type,
      leader: leader ? participantSummary(leader) : null,
      participants: participants.map(participantSummary),
      foundedYear: c.foundedYear ?? null,
      status: c.status ?? 'ACTIVE',
      abolishedYear: c.abolishedYear ?? null,
    };
  }

  /** GET /v1/projects's shape (src/graphql/resolvers/project.ts). */
  project(p: ProjectDoc): unknown {
    const ids = [...(p.participantIds ?? [])].sort((a, b) => a - b);
    return {
      id: p._id,
      name: p.name,
      description: p.description,
      club: clubSummary(p.clubId ?? null, this.clubs),
      participants: ids.flatMap((id) => {
        const s = this.students.get(id);
        return s ? [participantSummary(s)] : [];
      }),
      startYear: p.startYear ?? null,
      endYear: p.endYear ?? null,
      status: p.status ?? 'ACTIVE',
    };
  }

  shape(entity: SchoolEntity, id: number): unknown {
    if (entity === 'STUDENT') {
      const s = this.students.get(id);
      return s ? this.student(s) : null;
    }
    if (entity === 'CLUB') {
      const c = this.clubs.get(id);
      return c ? this.club(c) : null;
    }
    const p = this.projects.get(id);
    return p ? this.project(p) : null;
  }

  ids(entity: SchoolEntity): Iterable<number> {
    return (entity === 'STUDENT' ? this.students : entity === 'CLUB' ? this.clubs : this.projects).keys();
  }
}

/** The participant summary REST shows of a student inside a club or project (src/graphql/field-scopes.ts). */

const ENTITIES: readonly SchoolEntity[] = ['STUDENT', 'CLUB', 'PROJECT'];

/** An event planned before its batch is journaled; numbered once the sequence is taken. */
export type PlannedEvent = Omit<EventDoc, '_id' | 'type'> & { readonly type: EventType };

/**
 * The events of a batch: one per record whose REST shape the batch changes (each record it writes
 * always has one; a club or project whose members' summaries changed has one too, so an app that
 * mirrors clubs with CLUB_READ alone sees membership changes), in kind and id order, then
 * `batch.completed` for an import, rollover or undo. `before` is the school as loaded under the
 * lease, before the batch.
 */
export function planEvents(
  before: { students: StudentDoc[]; clubs: ClubDoc[]; projects: ProjectDoc[] },
  request: BatchRequest,
  batchId: string,
  at: Date,
): PlannedEvent[] {
  const was = new Shapes(
    new Map(before.students.map((d) => [d._id, d])),
    new Map(before.clubs.map((d) => [d._id, d])),
    new Map(before.projects.map((d) => [d._id, d])),
  );
  const next = { STUDENT: new Map(was.students), CLUB: new Map(was.clubs), PROJECT: new Map(was.projects) };
  const written = new Set<string>();
  for (const diff of request.changes) {
    written.add(`${diff.entity}:${diff.id}`);
    const map = next[diff.entity] as Map<number, SchoolDoc>;
    if (diff.after) map.set(diff.id, diff.after);
    else map.delete(diff.id);
  }
  const now = new Shapes(next.STUDENT, next.CLUB, next.PROJECT);
  const actorKind = request.actor.kind;
  const actorId = request.actor.kind === 'ACCOUNT' ? request.actor.accountId : null;
  const planned: PlannedEvent[] = [];
  const counts = { created: 0, updated: 0, deleted: 0 };
  for (const entity of ENTITIES) {
    const ids = [...new Set([...was.ids(entity), ...now.ids(entity)])].sort((a, b) => a - b);
    for (const id of ids) {
      const b = was.shape(entity, id);
      const a = now.shape(entity, id);
      const isWritten = written.has(`${entity}:${id}`);
      if (!isWritten && JSON.stringify(b) === JSON.stringify(a)) continue;
      if (b === null && a === null) continue;
      const operation = b === null ? 'created' : a === null ? 'deleted' : 'updated';
      if (isWritten) counts[operation] += 1;
      planned.push({
        type: `${FAMILY[entity]}.${operation}`,
        at,
        actorKind,
        actorId,
        batchId,
        data: JSON.stringify({ before: b, after: a }),
      });
    }
  }
  const kind = BATCH_KINDS[request.action];
  if (kind) {
    planned.push({
      type: 'batch.completed',
      at,
      actorKind,
      actorId,
      batchId,
      data: JSON.stringify({ kind, summary: request.summary, records: request.changes.length, counts } satisfies BatchCompletedData),
    });
  }
  return planned;
}

/**
 * Takes `count` sequence numbers; returns the first. Call under the school write lease only: FerretDB
 * 1.24 has no transactions and loses concurrent `$inc`s (src/data/platform/versions.ts explains why), so a
 * counter is safe only with one writer, and the lease (src/data/platform/lease.ts, via withSchoolLock in
 * src/data/school/engine.ts) makes every event writer that one. The counter lives apart from the
 * events, so numbers are never reused, even once old events are pruned or a batch is rolled back.
 */
export async function takeSequence(db: Database, count: number): Promise<number> {
  const doc = await meta(db).findOne({ _id: SEQUENCE_ID });
  const last = Number(doc?.['last'] ?? 0);
  await meta(db).updateOne({ _id: SEQUENCE_ID }, { $set: { last: last + count } }, { upsert: true });
  return last + 1;
}

/** Writes a batch's events, numbered from `first` (commit order). */
export async function writeEvents(db: Database, planned: readonly PlannedEvent[], first: number): Promise<void> {
  const docs = planned.map((event, i) => ({ _id: first + i, ...event }));
  for (let i = 0; i < docs.length; i += 500) {
    await events(db)
      .insertMany(docs.slice(i, i + 500), { ordered: false })
      .catch((err: unknown) => {
        // Written by an earlier attempt of the same batch: the same events.
        if (!(err instanceof Error && /E11000|duplicate/i.test(err.message))) throw err;
      });
  }
}

/** Removes the events of a batch that did not commit (its range was recorded in the batch). */
export async function dropEvents(
  db: Database,
  range: { first: number | null | undefined; last: number | null | undefined },
): Promise<void> {
  if (range.first == null || range.last == null || range.last < range.first) return;
  await deleteMatching(events(db), { _id: { $gte: range.first, $lte: range.last } });
}

/** The highest sequence number pruned (0: none). */
export async function prunedThrough(db: Database): Promise<number> {
  const doc = await meta(db).findOne({ _id: PRUNED_ID });
  return Number(doc?.['through'] ?? 0);
}

/** The last sequence number given (0: none). */
export async function lastSequence(db: Database): Promise<number> {
  const doc = await meta(db).findOne({ _id: SEQUENCE_ID });
  return Number(doc?.['last'] ?? 0);
}

/**
 * Deletes the events older than EVENT_RETENTION_DAYS, oldest first. The pruned mark moves before
 * the events go, so a reader finds either the events or the mark (and answers 410), never a gap.
 */
export async function pruneEvents(db: Database, now: Date = new Date()): Promise<number> {
  const cutoff = now.getTime() - RETENTION_MS;
  // Almost always the oldest event is younger than that: one document read, nothing to do.
  const oldest = await events(db)
    .find({}, { projection: { _id: 1, at: 1 } })
    .sort({ _id: 1 })
    .limit(1)
    .next();
  if (!oldest || oldest.at.getTime() >= cutoff) return 0;
  let through = 0;
  for (;;) {
    const old = await events(db)
      .find({ _id: { $gt: through } }, { projection: { _id: 1, at: 1 } })
      .sort({ _id: 1 })
      .limit(1000)
      .toArray();
    const expired = old.filter((e) => e.at.getTime() < cutoff);
    through = expired.at(-1)?._id ?? through;
    if (expired.length < old.length || old.length < 1000) break;
  }
  if (through === 0) return 0;
  if (through > (await prunedThrough(db))) await meta(db).updateOne({ _id: PRUNED_ID }, { $set: { through } }, { upsert: true });
  return deleteMatching(events(db), { _id: { $lte: through } });
}

/**
 * The one presenter of an event for a subscriber (the feed, src/data/events/feed.ts, and webhook
 * delivery, src/events/delivery.ts, alike): null when the subscriber does not receive it; else
 * the event with `data` whole or in the lesser form its type's row declares (viewOf,
 * src/data/events/types.ts), and `actor.accountId` only for an operator (null otherwise: the field
 * is always there).
 */
export function presentEvent(doc: EventDoc, subscriber: Subscriber): ChangeEvent | null {
  const view = viewOf(doc.type, subscriber.scopes);
  if (view === null) return null;
  const data = JSON.parse(doc.data) as unknown;
  return {
    id: String(doc._id),
    type: doc.type,
    time: doc.at.toISOString(),
    actor: actorOf(doc, subscriber.operator),
    batchId: doc.batchId,
    data: view === 'WHOLE' ? data : keepOnly(data, view.keeps),
  };
}

function actorOf(doc: EventDoc, operator: boolean): ChangeActor {
  if (doc.actorKind === 'CLI') return { kind: 'CLI', accountId: null };
  return { kind: 'ACCOUNT', accountId: operator ? doc.actorId : null };
}

/** `data` with every field but `keeps` null; anything but an object is withheld whole. */
function keepOnly(data: unknown, keeps: readonly string[]): unknown {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  return Object.fromEntries(Object.entries(data).map(([field, value]) => [field, keeps.includes(field) ? (value as unknown) : null]));
}
