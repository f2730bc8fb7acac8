import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { defineModel } from './define.js';

/**
 * The access log (docs/decisions.md, "The access log"): every change of who may read what (a key's
 * scopes approved or refused, an app approved, disabled or enabled, a role changed, a teacher's
 * sign-up decided) and every export of personal data (who exported what, with which filter). Apart
 * from the school data's audit log (audit.model.ts), which journals record changes and can undo
 * them: these entries are only read.
 */
export const ACCESS_ACTIONS = [
  'KEY_SCOPES_APPROVED',
  'KEY_SCOPES_REFUSED',
  'APP_APPROVED',
  'APP_DISABLED',
  'APP_ENABLED',
  // An app's data scopes for its machine tokens (client_credentials), decided as a key's are.
  'APP_DATA_SCOPES_APPROVED',
  'APP_DATA_SCOPES_REFUSED',
  'ROLE_CHANGED',
  'TEACHER_APPROVED',
  'TEACHER_REFUSED',
  'DATA_EXPORTED',
  // Accounts disabled, enabled, deleted, and password resets an admin sent.
  'ACCOUNT_DISABLED',
  'ACCOUNT_ENABLED',
  'ACCOUNT_DELETED',
  'PASSWORD_RESET_SENT',
  // Passkeys added by their owner, and removed by their owner, by staff or by an operator.
  'PASSKEY_ADDED',
  'PASSKEY_REMOVED',
  // Project proposals made by students, and the admins' decisions on them.
  'PROJECT_PROPOSED',
  'PROPOSAL_ACCEPTED',
  'PROPOSAL_REFUSED',
  // Data updates asked of students at their next sign-in, and their withdrawal.
  'DATA_UPDATE_REQUESTED',
  'DATA_UPDATE_WITHDRAWN',
] as const;
export type AccessAction = (typeof ACCESS_ACTIONS)[number];

const accessAuditSchema = new Schema(
  {
    _id: { type: String, required: true },
    at: { type: Date, required: true },
    // Who: a signed-in account, the `campus` command (an operator) or a schema migration.
    actorKind: { type: String, enum: ['ACCOUNT', 'CLI', 'MIGRATION'], required: true },
    actorId: { type: Number, default: null },
    actorEmail: { type: String, default: null },
    action: { type: String, enum: ACCESS_ACTIONS, required: true },
    // What: an API key (its id), an app (its client id), an account (its id) or data (what was exported).
    targetKind: { type: String, enum: ['API_KEY', 'APP', 'ACCOUNT', 'DATA', 'PROPOSAL', 'UPDATE_REQUEST'], required: true },
    targetId: { type: String, required: true },
    // Words a person reads in the log: a key's prefix and owner, an app's name, an account's email.
    targetLabel: { type: String, required: true },
    // The change or the export's filter, as JSON-like values (before/after, scopes, format, filter).
    detail: { type: Schema.Types.Mixed, default: null },
  },
  { versionKey: false, collection: 'access_audit', minimize: false },
);
accessAuditSchema.index({ at: -1, _id: -1 });

export type AccessAuditDoc = InferSchemaType<typeof accessAuditSchema>;

export function accessAuditModel(connection: Connection): Model<AccessAuditDoc> {
  return defineModel<AccessAuditDoc>(connection, 'AccessAudit', accessAuditSchema);
}
