import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { defineModel } from './define.js';

/** Where a proposal stands: waiting for an admin, accepted (written), or refused with a reason. */
export const PROPOSAL_STATES = ['PENDING', 'ACCEPTED', 'REFUSED'] as const;
export type ProposalState = (typeof PROPOSAL_STATES)[number];

/**
 * A student's proposal of a new project (`projectId` null) or of a change to a project
 * they take part in. The proposed values are a ProjectPatch (src/data/school/operations.ts); an
 * admin accepts it (written through the one write path, src/data/school/writes.ts) or refuses it
 * with a reason, and the student sees the outcome (/console/projects).
 */
const projectProposalSchema = new Schema(
  {
    // Eight hex digits: short enough to type in `campus projects proposals accept <id>`.
    _id: { type: String, required: true },
    projectId: { type: Number, default: null },
    proposerAccountId: { type: Number, required: true },
    proposerEmail: { type: String, required: true },
    // The proposed fields, as the admin project form takes them (ProjectPatch; participants as emails).
    proposed: { type: Schema.Types.Mixed, required: true },
    // The student's words to the admin (why).
    note: { type: String, default: null },
    state: { type: String, enum: PROPOSAL_STATES, required: true },
    reason: { type: String, default: null },
    decidedAt: { type: Date, default: null },
    // Who decided: an account (id, email) or the `campus` command (CLI).
    decidedByKind: { type: String, enum: ['ACCOUNT', 'CLI', null], default: null },
    decidedById: { type: Number, default: null },
    decidedByEmail: { type: String, default: null },
    // Once accepted: the project written (its id, new for a new project) and the audit batch.
    resultProjectId: { type: Number, default: null },
    batchId: { type: String, default: null },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'project_proposals', minimize: false },
);

export type ProjectProposalDoc = InferSchemaType<typeof projectProposalSchema>;

export function projectProposalModel(connection: Connection): Model<ProjectProposalDoc> {
  return defineModel<ProjectProposalDoc>(connection, 'ProjectProposal', projectProposalSchema);
}
