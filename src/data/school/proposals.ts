import { randomBytes } from 'node:crypto';
import { AccessAudit, type AccessActor } from '../accounts/access-log.js';
import type { Database } from '../database.js';
import { isDuplicateKey } from '../platform/errors.js';
import type { ProjectDoc } from '../models/project.model.js';
import type { ProjectProposalDoc, ProposalState } from '../models/project-proposal.model.js';
import type { SchoolSnapshot } from './read-model.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../../errors/index.js';
import { MAX_PENDING_PROPOSALS } from '../../limits.js';
import type { ProjectPatch } from './operations.js';
import type { Actor, Issue } from './types.js';
import { SchoolWriter, checkProject, type WriterClock } from './writes.js';

export { PROPOSAL_STATES, type ProjectProposalDoc, type ProposalState } from '../models/project-proposal.model.js';

/** The longest reason a refusal or note a proposal may carry. */
export const MAX_PROPOSAL_TEXT = 500;

/** The fields a proposal holds: the admin project form's (participants as emails or student numbers). */
export type ProposedProject = Required<
  Pick<ProjectPatch, 'name' | 'description' | 'clubId' | 'participants' | 'startYear' | 'endYear' | 'status'>
>;

/** A proposal made, or the problems that refused it (the admin form's messages: src/data/school/messages.ts). */
export type ProposalOutcome =
  { readonly ok: true; readonly proposal: ProjectProposalDoc } | { readonly ok: false; readonly issues: readonly Issue[] };

/** A proposal that is not waiting any more (accepted or refused meanwhile): 409. */
export class ProposalDecidedError extends ConflictError {}

/** The proposer has MAX_PENDING_PROPOSALS waiting already: 409, naming the cap. */
export class TooManyPendingProposalsError extends ConflictError {
  constructor() {
    super(`At most ${MAX_PENDING_PROPOSALS} proposals of an account may wait for a decision at once; wait until one is decided.`);
  }
}

/**
 * Students propose projects and changes to the projects they take part in; admins (or the operator)
 * accept or refuse them (docs/decisions.md, "Students propose projects; admins decide"). A proposal
 * is checked when made with the admin project form's rules (SchoolWriter.checkProject); an accepted
 * one is written through the one write path (SchoolWriter: lease, validation, journal, audit batch
 * with the deciding admin as actor, events, data version). The proposal and the decision are in the
 * access log, each with its actor.
 */
export class ProjectProposals {
  constructor(
    private readonly db: Database,
    private readonly clock: WriterClock,
  ) {}

  /**
   * A student's proposal: of a new project (`projectId` null; the student is among its
   * participants), or of a change to a project whose participants include the student. At most
   * MAX_PENDING_PROPOSALS of an account wait at once (TooManyPendingProposalsError).
   */
  async propose(
    proposer: { readonly accountId: number; readonly email: string },
    input: { readonly projectId: number | null; readonly proposed: ProposedProject; readonly note: string | null },
  ): Promise<ProposalOutcome> {
    const school = await this.db.school.snapshot();
    const student = school.studentByEmail(proposer.email);
    if (!student) throw new ForbiddenError('Only students propose projects: no student has the email of this account.');
    if ((await this.pendingOf(proposer.accountId)) >= MAX_PENDING_PROPOSALS) throw new TooManyPendingProposalsError();
    if (input.projectId !== null && !(school.projects.get(input.projectId)?.participantIds ?? []).includes(student._id))
      throw new NotFoundError('You take part in no project with this id.');
    const participants =
      input.projectId === null ? withStudent(input.proposed.participants ?? [], student.email) : input.proposed.participants;
    const proposed: ProposedProject = { ...input.proposed, participants };
    const issues = await checkProject(this.db, input.projectId, proposed);
    if (issues.length > 0) return { ok: false, issues };
    const doc: ProjectProposalDoc = {
      _id: '',
      projectId: input.projectId,
      proposerAccountId: proposer.accountId,
      proposerEmail: proposer.email,
      proposed,
      note: input.note,
      state: 'PENDING',
      reason: null,
      decidedAt: null,
      decidedByKind: null,
      decidedById: null,
      decidedByEmail: null,
      resultProjectId: null,
      batchId: null,
      createdAt: this.clock.now(),
    };
    const saved = await this.insert(doc);
    // Counted again once stored, so that proposals sent at once cannot pass the cap together (as
    // src/oauth/apps.ts createOwned does for apps): of those past it, each takes itself back.
    if ((await this.pendingOf(proposer.accountId)) > MAX_PENDING_PROPOSALS) {
      await this.db.models.projectProposals.deleteOne({ _id: saved._id });
      throw new TooManyPendingProposalsError();
    }
    await new AccessAudit(this.db).record(
      { kind: 'ACCOUNT', id: proposer.accountId, email: proposer.email },
      { action: 'PROJECT_PROPOSED', target: proposalTarget(saved), detail: { projectId: input.projectId, proposed } },
    );
    return { ok: true, proposal: saved };
  }

  /** The school as the data API serves it now (the record a proposal is shown beside). */
  school(): Promise<SchoolSnapshot> {
    return this.db.school.snapshot();
  }

  /** Proposals, newest first: all, one state's, or one proposer's. */
  async list(filter: { readonly state?: ProposalState | null; readonly proposerAccountId?: number } = {}): Promise<ProjectProposalDoc[]> {
    const query: Record<string, unknown> = {};
    if (filter.state) query['state'] = filter.state;
    if (filter.proposerAccountId !== undefined) query['proposerAccountId'] = filter.proposerAccountId;
    return this.db.models.projectProposals.find(query).sort({ createdAt: -1, _id: -1 }).lean<ProjectProposalDoc[]>();
  }

  /** How many proposals of the account wait for a decision. */
  pendingOf(accountId: number): Promise<number> {
    return this.db.models.projectProposals.countDocuments({ proposerAccountId: accountId, state: 'PENDING' });
  }

  async get(id: string): Promise<ProjectProposalDoc> {
    const doc = /^[0-9a-f]{8}$/.test(id) ? await this.db.models.projectProposals.findOne({ _id: id }).lean<ProjectProposalDoc>() : null;
    if (!doc) throw new NotFoundError(`No proposal ${id}.`);
    return doc;
  }

  /**
   * Accepts a waiting proposal: the project is created or changed through the one write path as
   * `actor`. Refused by the rules (the school changed since), it stays waiting and the problems
   * are returned.
   */
  async accept(actor: Actor, id: string): Promise<ProposalOutcome> {
    const proposal = await this.claim(id, actor, 'ACCEPTED', null);
    const patch = proposal.proposed as ProposedProject;
    const writer = this.writer(actor);
    const outcome = proposal.projectId == null ? await writer.createProject(patch) : await writer.updateProject(proposal.projectId, patch);
    if (outcome.issues.length > 0 || outcome.id === null) {
      await this.db.models.projectProposals.updateOne({ _id: id, state: 'ACCEPTED' }, { $set: undecided() });
      return { ok: false, issues: outcome.issues };
    }
    await this.db.models.projectProposals.updateOne({ _id: id }, { $set: { resultProjectId: outcome.id, batchId: outcome.batchId } });
    const accepted = { ...proposal, resultProjectId: outcome.id, batchId: outcome.batchId };
    await new AccessAudit(this.db).record(accessActorOf(actor), {
      action: 'PROPOSAL_ACCEPTED',
      target: proposalTarget(accepted),
      detail: { projectId: outcome.id, batchId: outcome.batchId, proposer: proposal.proposerEmail },
    });
    return { ok: true, proposal: accepted };
  }

  /** Refuses a waiting proposal with a reason the student reads. */
  async refuse(actor: Actor, id: string, reason: string): Promise<ProjectProposalDoc> {
    const refused = await this.claim(id, actor, 'REFUSED', reason);
    await new AccessAudit(this.db).record(accessActorOf(actor), {
      action: 'PROPOSAL_REFUSED',
      target: proposalTarget(refused),
      detail: { reason, proposer: refused.proposerEmail },
    });
    return refused;
  }

  /** Marks a waiting proposal decided (only one decision wins); 409 when it was decided already. */
  private async claim(id: string, actor: Actor, state: 'ACCEPTED' | 'REFUSED', reason: string | null): Promise<ProjectProposalDoc> {
    const proposal = await this.get(id);
    const decided = {
      state,
      reason,
      decidedAt: this.clock.now(),
      decidedByKind: actor.kind,
      decidedById: actor.kind === 'ACCOUNT' ? actor.accountId : null,
      decidedByEmail: actor.kind === 'ACCOUNT' ? actor.email : null,
    };
    const result = await this.db.models.projectProposals.updateOne({ _id: id, state: 'PENDING' }, { $set: decided });
    if (result.matchedCount !== 1)
      throw new ProposalDecidedError(`Proposal ${id} is not waiting: it was ${proposal.state.toLowerCase()} already.`);
    return { ...proposal, ...decided };
  }

  private writer(actor: Actor): SchoolWriter {
    return new SchoolWriter(this.db, actor, this.clock);
  }

  /** Inserts under a fresh short id (another draw on the rare clash). */
  private async insert(doc: ProjectProposalDoc): Promise<ProjectProposalDoc> {
    for (let attempt = 0; ; attempt++) {
      const saved = { ...doc, _id: randomBytes(4).toString('hex') };
      try {
        await this.db.models.projectProposals.create(saved);
        return saved;
      } catch (err) {
        if (!isDuplicateKey(err) || attempt >= 5) throw err;
      }
    }
  }
}

/** The project form's fields of a project as it stands (participants by email), as text. */
export function projectFormValues(project: ProjectDoc, school: SchoolSnapshot): Record<keyof ProposedProject, string> {
  return {
    name: project.name,
    description: project.description ?? '',
    clubId: textOf(project.clubId),
    participants: (project.participantIds ?? []).map((id) => school.students.get(id)?.email ?? String(id)).join('\n'),
    startYear: textOf(project.startYear),
    status: project.status ?? 'ACTIVE',
    endYear: textOf(project.endYear),
  };
}

/** A proposal's fields as text, in the same form. */
export function proposedFormValues(proposed: unknown): Record<keyof ProposedProject, string> {
  const p = proposed as Partial<ProposedProject>;
  return {
    name: p.name ?? '',
    description: p.description ?? '',
    clubId: textOf(p.clubId),
    participants: (p.participants ?? []).join('\n'),
    startYear: textOf(p.startYear),
    status: p.status ?? 'ACTIVE',
    endYear: textOf(p.endYear),
  };
}

function textOf(value: string | number | null | undefined): string {
  return value == null ? '' : String(value);
}

/** The participant list with the student in it (a new project's proposer takes part in it). */
function withStudent(participants: readonly string[], email: string): string[] {
  const list = participants.map((p) => p.trim()).filter(Boolean);
  return list.some((p) => p.toLowerCase() === email.toLowerCase()) ? list : [email, ...list];
}

function undecided() {
  return { state: 'PENDING', reason: null, decidedAt: null, decidedByKind: null, decidedById: null, decidedByEmail: null };
}

function proposalTarget(p: ProjectProposalDoc) {
  const name = (p.proposed as Partial<ProposedProject>).name ?? '';
  return { kind: 'PROPOSAL' as const, id: p._id, label: `${p.projectId == null ? 'new' : `#${p.projectId}`} ${name}`.trim() };
}

function accessActorOf(actor: Actor): AccessActor {
  return actor.kind === 'ACCOUNT' ? { kind: 'ACCOUNT', id: actor.accountId, email: actor.email } : { kind: 'CLI' };
}
