import { randomBytes } from 'node:crypto';
import { BadRequestError, NotFoundError } from '../../errors/index.js';
import { AccessAudit } from '../accounts/access-log.js';
import type { AccountStore } from '../accounts/store.js';
import type { Database } from '../database.js';
import { RememberedLookups } from '../platform/remembered.js';
import { cacheTarget } from '../platform/versions.js';
import { isEnrolledRole, type StudentDoc } from '../models/student.model.js';
import type { UpdateRequestDoc } from '../models/update-request.model.js';
import { isStudentField, STUDENT_SELF_FIELDS, writeOwnFields, type OwnChange, type StudentSelfField } from './student-fields.js';
import type { Lang } from './labels.js';
import type { WriterClock } from './writes.js';

export type { UpdateRequestDoc } from '../models/update-request.model.js';

/** The longest message an admin may give a request (shown on the sign-in page). */
export const MAX_REQUEST_MESSAGE = 500;
/** Students one request may ask (the whole school of the demo is 216 enrolled). */
export const MAX_REQUEST_TARGETS = 2000;

/** Whom a request asks: students named one by one (emails or four-digit student numbers), a grade or class, or a search. */
export type TargetSelection =
  | { readonly kind: 'list'; readonly refs: readonly string[] }
  | { readonly kind: 'class'; readonly grade: number; readonly classNum: number | null }
  | { readonly kind: 'search'; readonly query: string };

/** Who asks or withdraws: an admin's account, or an operator at the command line. */
export type RequestActor = { readonly kind: 'ACCOUNT'; readonly id: number; readonly email: string } | { readonly kind: 'CLI' };

/** A request as the console and the command show it. */
export interface UpdateRequestSummary {
  readonly id: string;
  readonly fields: readonly StudentSelfField[];
  readonly message: string | null;
  readonly status: 'OPEN' | 'WITHDRAWN';
  readonly createdAt: string;
  readonly createdBy: string | null;
  readonly withdrawnAt: string | null;
  readonly answered: number;
  readonly asked: number;
  readonly students: readonly {
    readonly studentId: number;
    readonly email: string;
    readonly name: string;
    readonly studentNumber: number | null;
    readonly answeredAt: string | null;
  }[];
}

/** A request that cannot be made as given (no such student, no field, a long message): 400 with the reason. */
export class UpdateRequestError extends BadRequestError {}

/** What the sign-in page asks a student: the fields of every open request of theirs, and their messages. */
export interface PendingUpdate {
  readonly requestIds: readonly string[];
  readonly fields: readonly StudentSelfField[];
  readonly messages: readonly string[];
}

/**
 * Data updates asked at sign-in (docs/decisions.md, "Data updates at sign-in"): admins ask chosen
 * students to confirm or correct chosen fields; the authorization server asks each of them at their
 * next sign-in (src/oauth/provider.ts) and their answer is written through the one write path with
 * the student as the actor (src/data/school/student-fields.ts); a withdrawn request asks no more.
 */
/** An open request as a sign-in asks it. */
type OpenRequest = Pick<UpdateRequestDoc, '_id' | 'fields' | 'message' | 'pendingEmails'>;
/** What every change of the open requests names (src/data/platform/versions.ts). */
const OPEN_REQUESTS = cacheTarget.record('update-requests:open');
const rememberedOpen = new WeakMap<Database, RememberedLookups<'open', OpenRequest[]>>();

export class UpdateRequests {
  constructor(
    private readonly db: Database,
    private readonly accounts: AccountStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private get model() {
    return this.db.models.updateRequests;
  }

  /** Asks the chosen enrolled students to check `fields`. */
  async create(input: {
    readonly selection: TargetSelection;
    readonly fields: readonly string[];
    readonly message?: string | null;
    readonly actor: RequestActor;
  }): Promise<UpdateRequestSummary> {
    const fields = [...new Set(input.fields.map((f) => f.trim()).filter(Boolean))];
    const unknown = fields.filter((f) => !isStudentField(f));
    if (unknown.length > 0)
      throw new UpdateRequestError(`Unknown field ${unknown.join(', ')}: choose from ${STUDENT_SELF_FIELDS.join(', ')}.`);
    if (fields.length === 0) throw new UpdateRequestError(`Choose at least one field: ${STUDENT_SELF_FIELDS.join(', ')}.`);
    const message = input.message?.trim() || null;
    if (message && [...message].length > MAX_REQUEST_MESSAGE)
      throw new UpdateRequestError(`The message may have at most ${MAX_REQUEST_MESSAGE} characters.`);
    const students = await this.resolve(input.selection);
    if (students.length === 0) throw new UpdateRequestError('No enrolled student matches; nobody would be asked.');
    if (students.length > MAX_REQUEST_TARGETS) throw new UpdateRequestError(`At most ${MAX_REQUEST_TARGETS} students per request.`);
    const doc: UpdateRequestDoc = {
      _id: `ur_${randomBytes(8).toString('base64url')}`,
      fields: fields as StudentSelfField[],
      message,
      status: 'OPEN',
      createdAt: this.now(),
      createdById: input.actor.kind === 'ACCOUNT' ? input.actor.id : null,
      createdByEmail: input.actor.kind === 'ACCOUNT' ? input.actor.email : null,
      withdrawnAt: null,
      withdrawnByEmail: null,
      targets: students.map((s) => ({
        studentId: s._id,
        email: s.email.toLowerCase(),
        name: s.name,
        studentNumber: s.studentNumber ?? null,
        answeredAt: null,
        batchId: null,
      })),
      pendingEmails: students.map((s) => s.email.toLowerCase()),
    };
    await this.model.insertMany([doc]);
    await this.openChanged();
    await this.recordAccess(input.actor, 'DATA_UPDATE_REQUESTED', doc, { fields: doc.fields, students: doc.targets.length });
    return summarize(doc);
  }

  /** Every request, newest first. */
  async list(): Promise<UpdateRequestSummary[]> {
    const docs = await this.model.find({}).sort({ createdAt: -1 }).lean<UpdateRequestDoc[]>();
    return docs.map(summarize);
  }

  async get(id: string): Promise<UpdateRequestSummary> {
    const doc = await this.model.findOne({ _id: id }).lean<UpdateRequestDoc>();
    if (!doc) throw new NotFoundError(`No data update request has the id ${id}.`);
    return summarize(doc);
  }

  /** Withdraws an open request: nobody is asked any more (answers already given stay). */
  async withdraw(id: string, actor: RequestActor): Promise<UpdateRequestSummary> {
    const result = await this.model.updateOne(
      { _id: id, status: 'OPEN' },
      { $set: { status: 'WITHDRAWN', withdrawnAt: this.now(), withdrawnByEmail: actor.kind === 'ACCOUNT' ? actor.email : null } },
    );
    if (result.matchedCount === 0) return this.get(id);
    await this.openChanged();
    const withdrawn = await this.get(id);
    await this.recordAccess(actor, 'DATA_UPDATE_WITHDRAWN', { _id: id, fields: withdrawn.fields }, null);
    return withdrawn;
  }

  /** The access log's entry for making or withdrawing a request (who asked whom, /admin/audit). */
  private async recordAccess(
    actor: RequestActor,
    action: 'DATA_UPDATE_REQUESTED' | 'DATA_UPDATE_WITHDRAWN',
    request: { readonly _id: string; readonly fields: readonly string[] },
    detail: Record<string, unknown> | null,
  ): Promise<void> {
    await new AccessAudit(this.db).record(actor, {
      action,
      target: { kind: 'UPDATE_REQUEST', id: request._id, label: request.fields.join(', ') },
      detail,
      at: this.now(),
    });
  }

  /**
   * What the account's next sign-in must ask: the open requests naming its email and not yet
   * answered by it (undefined: nothing), from the open requests this process remembers.
   */
  async pendingForAccount(accountId: number): Promise<PendingUpdate | undefined> {
    const account = (await this.accounts.known(accountId))?.doc;
    if (!account) return undefined;
    // A student no longer enrolled (or no longer a student) is not held at the door by a form
    // they could not complete: enrolment fields are refused for them (src/data/school/operations.ts).
    const student = (await this.db.school.snapshot()).studentByEmail(account.email);
    if (!student || !isEnrolledRole(student.role)) return undefined;
    const email = account.email.toLowerCase();
    const docs = (await this.open()).filter((request) => request.pendingEmails.includes(email));
    if (docs.length === 0) return undefined;
    const fields = STUDENT_SELF_FIELDS.filter((f) => docs.some((d) => d.fields.includes(f)));
    return { requestIds: docs.map((d) => d._id), fields, messages: docs.flatMap((d) => (d.message ? [d.message] : [])) };
  }

  /**
   * The student's answer: the fields written through the one write path with the student's
   * account as the actor, and every open request of theirs marked answered (refused: nothing is).
   */
  async answer(input: {
    readonly accountId: number;
    readonly values: Readonly<Record<string, string>>;
    readonly lang: Lang;
    readonly clock: WriterClock;
  }): Promise<OwnChange> {
    const account = await this.accounts.findById(input.accountId);
    const pending = account ? await this.pendingForAccount(account._id) : undefined;
    const student = account ? (await this.db.school.snapshot()).studentByEmail(account.email) : undefined;
    if (!account || !pending || !student) return { ok: true, batchId: null };
    const outcome = await writeOwnFields(this.db, {
      account: { id: account._id, email: account.email },
      studentId: student._id,
      fields: pending.fields,
      values: input.values,
      lang: input.lang,
      clock: input.clock,
    });
    if (outcome.ok) await this.markAnswered(pending.requestIds, account.email.toLowerCase(), outcome.batchId);
    return outcome;
  }

  private async markAnswered(requestIds: readonly string[], email: string, batchId: string | null): Promise<void> {
    const at = this.now();
    for (const id of requestIds) {
      const doc = await this.model.findOne({ _id: id }).lean<UpdateRequestDoc>();
      if (!doc) continue;
      const targets = doc.targets.map((target) =>
        target.email === email && !target.answeredAt ? { ...target, answeredAt: at, batchId } : target,
      );
      await this.model.updateOne({ _id: id }, { $set: { targets }, $pull: { pendingEmails: email } });
    }
    await this.openChanged();
  }

  /**
   * The open requests, remembered per process until one is made, withdrawn or answered (every
   * such write names them: openChanged): every sign-in asks them, and reads none.
   */
  private async open(): Promise<readonly OpenRequest[]> {
    let lookups = rememberedOpen.get(this.db);
    if (!lookups) {
      const model = this.model;
      lookups = new RememberedLookups(
        this.db.versions,
        'oauth',
        1,
        async () =>
          model.find({ status: 'OPEN' }, { fields: 1, message: 1, pendingEmails: 1 }).sort({ createdAt: 1 }).lean<OpenRequest[]>(),
        () => [OPEN_REQUESTS],
      );
      rememberedOpen.set(this.db, lookups);
    }
    return (await lookups.get('open')) ?? [];
  }

  private async openChanged(): Promise<void> {
    await this.db.versions.bump('oauth', [OPEN_REQUESTS]);
  }

  /** The enrolled students a selection names; a name in a list that matches nobody is refused, naming it. */
  private async resolve(selection: TargetSelection): Promise<StudentDoc[]> {
    const school = await this.db.school.snapshot();
    const enrolled = school.students.all.filter((s) => isEnrolledRole(s.role));
    if (selection.kind === 'class')
      return enrolled.filter((s) => s.grade === selection.grade && (selection.classNum === null || s.classNum === selection.classNum));
    if (selection.kind === 'search') {
      const q = selection.query.trim().toLowerCase();
      if (!q) throw new UpdateRequestError('Give a search: a name, an email or a student number.');
      return enrolled.filter(
        (s) => s.name.toLowerCase().includes(q) || s.email.toLowerCase().includes(q) || String(s.studentNumber ?? '') === q,
      );
    }
    const found = new Map<number, StudentDoc>();
    const missing: string[] = [];
    for (const ref of selection.refs.map((r) => r.trim()).filter(Boolean)) {
      const student = /^\d{4}$/.test(ref)
        ? enrolled.find((s) => String(s.studentNumber) === ref)
        : enrolled.find((s) => s.email.toLowerCase() === ref.toLowerCase());
      if (student) found.set(student._id, student);
      else missing.push(ref);
    }
    if (missing.length > 0)
      throw new UpdateRequestError(`No enrolled student is ${missing.join(', ')} (name students by email or four-digit student number).`);
    return [...found.values()];
  }
}

/** Emails or student numbers separated by commas, spaces or lines. */
export function splitRefs(text: string): string[] {
  return text.split(/[\s,;]+/).filter(Boolean);
}

function summarize(doc: UpdateRequestDoc): UpdateRequestSummary {
  const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);
  return {
    id: doc._id,
    fields: doc.fields.filter(isStudentField),
    message: doc.message ?? null,
    status: doc.status,
    createdAt: new Date(doc.createdAt).toISOString(),
    createdBy: doc.createdByEmail ?? null,
    withdrawnAt: iso(doc.withdrawnAt),
    answered: doc.targets.filter((t) => t.answeredAt).length,
    asked: doc.targets.length,
    students: doc.targets.map((t) => ({
      studentId: t.studentId,
      email: t.email,
      name: t.name,
      studentNumber: t.studentNumber ?? null,
      answeredAt: iso(t.answeredAt),
    })),
  };
}
