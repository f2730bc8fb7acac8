import { randomBytes } from 'node:crypto';
import type { Collection } from 'mongodb';
import { BadRequestError, ConflictError, NotFoundError } from '../../errors/index.js';
import type { Database } from '../database.js';
import type { Actor } from '../school/types.js';
import { isStatusPart, STATUS_PARTS, type StatusPart } from './status-parts.js';

/*
 * Incidents and planned maintenance, posted by staff (/admin/status, `campus status incident`)
 * and shown on the status page with their updates (docs/operations.md, "Incidents and
 * maintenance"). One document each in `status_incidents`, its updates inside it, newest last.
 * This store holds the rules (what a title, a message, a state and a window may be); the page and
 * the command show its refusals (IncidentRefusedError: a field and a code).
 */

export const INCIDENT_KINDS = ['INCIDENT', 'MAINTENANCE'] as const;
export type IncidentKind = (typeof INCIDENT_KINDS)[number];

/** The states of each kind, in their usual order; the last is final (resolved, completed). */
export const INCIDENT_STATES = {
  INCIDENT: ['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED'],
  MAINTENANCE: ['SCHEDULED', 'IN_PROGRESS', 'COMPLETED'],
} as const satisfies Record<IncidentKind, readonly string[]>;
export type IncidentState = (typeof INCIDENT_STATES)[IncidentKind][number];

export const MAX_INCIDENT_TITLE = 120;
export const MAX_INCIDENT_MESSAGE = 2000;
/** Incidents the page and the console list at most (the newest). */
const LIST_MAX = 200;

export interface IncidentUpdate {
  readonly at: Date;
  readonly state: IncidentState;
  readonly message: string;
  /** Who posted it, for staff (the public page and /v1/status leave it out). */
  readonly byKind: 'ACCOUNT' | 'CLI';
  readonly byEmail: string | null;
}

export interface IncidentDoc {
  _id: string;
  kind: IncidentKind;
  title: string;
  /** The parts it concerns (none: the service as a whole). */
  parts: StatusPart[];
  state: IncidentState;
  /** An incident: when it began; maintenance: when it is planned to begin. */
  startsAt: Date;
  /** Maintenance: when it is planned to end. */
  endsAt: Date | null;
  resolvedAt: Date | null;
  createdAt: Date;
  updates: IncidentUpdate[];
  /** Counts the writes, so that an update made from a stale read is refused rather than lost. */
  revision: number;
}

/** What a refusal is about; the page words each code (src/surfaces/web/texts/status.ts). */
export type IncidentProblem = 'TITLE' | 'MESSAGE' | 'PARTS' | 'STATE' | 'TIMES' | 'CLOSED';

/** 400: the field and the rule an input broke. */
export class IncidentRefusedError extends BadRequestError {
  constructor(
    readonly field: string,
    readonly problem: IncidentProblem,
    message: string,
  ) {
    super(message, field);
  }
}

export interface OpenIncidentInput {
  readonly kind: IncidentKind;
  readonly title: string;
  readonly message: string;
  readonly parts?: readonly string[];
  /** Default: the kind's first state. */
  readonly state?: string | undefined;
  /** Default: now. */
  readonly startsAt?: Date | undefined;
  readonly endsAt?: Date | null | undefined;
}

export interface UpdateIncidentInput {
  readonly message: string;
  /** Default: the state it is in. */
  readonly state?: string | undefined;
}

function incidents(db: Database): Collection<IncidentDoc> {
  return db.client.db().collection<IncidentDoc>('status_incidents');
}

/** The final state of a kind (resolved, completed). */
export function finalState(kind: IncidentKind): IncidentState {
  const states: readonly IncidentState[] = INCIDENT_STATES[kind];
  return states[states.length - 1] ?? 'RESOLVED';
}

/** Whether an incident is over. */
export function isClosed(doc: Pick<IncidentDoc, 'kind' | 'state'>): boolean {
  return doc.state === finalState(doc.kind);
}

/** An open notice that concerns its parts now: an incident, or maintenance in progress (not one still scheduled). */
export function isUnderWay(doc: Pick<IncidentDoc, 'kind' | 'state'>): boolean {
  return doc.kind === 'INCIDENT' || doc.state === 'IN_PROGRESS';
}

function checkTitle(title: string): string {
  const trimmed = title.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_INCIDENT_TITLE)
    throw new IncidentRefusedError('title', 'TITLE', `title: 1 to ${MAX_INCIDENT_TITLE} characters (got ${trimmed.length}).`);
  return trimmed;
}

function checkMessage(message: string, field = 'message'): string {
  const trimmed = message.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_INCIDENT_MESSAGE)
    throw new IncidentRefusedError(field, 'MESSAGE', `${field}: 1 to ${MAX_INCIDENT_MESSAGE} characters (got ${trimmed.length}).`);
  return trimmed;
}

function checkParts(parts: readonly string[]): StatusPart[] {
  const unknown = parts.filter((part) => !isStatusPart(part));
  if (unknown.length > 0)
    throw new IncidentRefusedError('parts', 'PARTS', `parts: unknown ${unknown.join(', ')}; use ${STATUS_PARTS.join(', ')}.`);
  return STATUS_PARTS.filter((part) => parts.includes(part));
}

/** A state of the kind that is not final (updates move between these; resolving ends it). */
function checkState(kind: IncidentKind, state: string): IncidentState {
  const open = INCIDENT_STATES[kind].slice(0, -1) as readonly string[];
  if (!open.includes(state))
    throw new IncidentRefusedError('state', 'STATE', `state: one of ${open.join(', ')} for ${kind.toLowerCase()} (got '${state}').`);
  return state as IncidentState;
}

function checkTimes(startsAt: Date, endsAt: Date | null): void {
  if (Number.isNaN(startsAt.getTime())) throw new IncidentRefusedError('startsAt', 'TIMES', 'startsAt: not a date and time.');
  if (endsAt && Number.isNaN(endsAt.getTime())) throw new IncidentRefusedError('endsAt', 'TIMES', 'endsAt: not a date and time.');
  if (endsAt && endsAt.getTime() <= startsAt.getTime())
    throw new IncidentRefusedError('endsAt', 'TIMES', 'endsAt: must be after startsAt.');
}

function authorOf(actor: Actor): Pick<IncidentUpdate, 'byKind' | 'byEmail'> {
  return actor.kind === 'ACCOUNT' ? { byKind: 'ACCOUNT', byEmail: actor.email } : { byKind: 'CLI', byEmail: null };
}

export class Incidents {
  constructor(
    private readonly db: Database,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Posts an incident or planned maintenance with its first message. */
  async open(input: OpenIncidentInput, actor: Actor): Promise<IncidentDoc> {
    const title = checkTitle(input.title);
    const message = checkMessage(input.message);
    const parts = checkParts(input.parts ?? []);
    const state = checkState(input.kind, input.state ?? INCIDENT_STATES[input.kind][0]);
    const now = this.now();
    const startsAt = input.startsAt ?? now;
    const endsAt = input.kind === 'MAINTENANCE' ? (input.endsAt ?? null) : null;
    checkTimes(startsAt, endsAt);
    const doc: IncidentDoc = {
      _id: randomBytes(4).toString('hex'),
      kind: input.kind,
      title,
      parts,
      state,
      startsAt,
      endsAt,
      resolvedAt: null,
      createdAt: now,
      updates: [{ at: now, state, message, ...authorOf(actor) }],
      revision: 1,
    };
    await incidents(this.db).insertOne(doc);
    return doc;
  }

  /** Posts an update, moving it to another open state if asked. */
  async update(id: string, input: UpdateIncidentInput, actor: Actor): Promise<IncidentDoc> {
    const doc = await this.get(id);
    const message = checkMessage(input.message);
    const state = checkState(doc.kind, input.state ?? doc.state);
    return this.append(doc, { at: this.now(), state, message, ...authorOf(actor) });
  }

  /** Ends it (resolved, or completed for maintenance), with a closing message. */
  async resolve(id: string, input: { readonly message: string }, actor: Actor): Promise<IncidentDoc> {
    const doc = await this.get(id);
    const message = checkMessage(input.message);
    return this.append(doc, { at: this.now(), state: finalState(doc.kind), message, ...authorOf(actor) });
  }

  /** The incident `id`; 404 when there is none. */
  async get(id: string): Promise<IncidentDoc> {
    const doc = /^[0-9a-f]{8}$/.test(id) ? await incidents(this.db).findOne({ _id: id }) : null;
    if (!doc) throw new NotFoundError(`No incident ${id}.`);
    return doc;
  }

  /** Every incident and maintenance, open ones first, then the newest (at most LIST_MAX). */
  async list(): Promise<IncidentDoc[]> {
    const all = await incidents(this.db).find({}).sort({ createdAt: -1 }).limit(LIST_MAX).toArray();
    return [...all.filter((doc) => !isClosed(doc)), ...all.filter(isClosed)];
  }

  private async append(doc: IncidentDoc, update: IncidentUpdate): Promise<IncidentDoc> {
    if (isClosed(doc)) throw new IncidentClosedError(doc);
    const closing = update.state === finalState(doc.kind);
    const next: IncidentDoc = {
      ...doc,
      state: update.state,
      resolvedAt: closing ? update.at : null,
      updates: [...doc.updates, update],
      revision: doc.revision + 1,
    };
    const { matchedCount } = await incidents(this.db).replaceOne({ _id: doc._id, revision: doc.revision }, next);
    if (matchedCount === 0) throw new ConflictError(`Incident ${doc._id} changed meanwhile; read it again and retry.`);
    return next;
  }
}

/** 409: an incident that is over takes no more updates. */
export class IncidentClosedError extends ConflictError {
  constructor(doc: Pick<IncidentDoc, '_id' | 'state'>) {
    super(`Incident ${doc._id} is ${doc.state.toLowerCase()}: it takes no more updates.`);
  }
}
