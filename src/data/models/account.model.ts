import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { AccountRole } from '../__generated__/enums.js';
import { defineModel } from './define.js';

export type { AccountRole } from '../__generated__/enums.js';
/** Every role, in the schema's order. */
export const ACCOUNT_ROLES: readonly AccountRole[] = Object.values(AccountRole);

/**
 * Where a teacher's sign-up stands (docs/decisions.md, "Accounts and login"): it waits for an
 * admin, who approves it (the account becomes ADMIN) or rejects it (it stays a USER). Accounts
 * that did not sign up as teachers have no approval (null).
 */
export const APPROVAL_STATES = ['PENDING', 'APPROVED', 'REJECTED'] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];

const accountSchema = new Schema(
  {
    // A plain integer id: userinfo shows it as `id` (a Long, like a student id) and as `sub`.
    _id: { type: Number, required: true },
    email: { type: String, required: true, lowercase: true, trim: true },
    // argon2id (PHC string); the password itself is never stored.
    passwordHash: { type: String, required: true },
    role: { type: String, enum: ACCOUNT_ROLES, required: true },
    // A teacher's sign-up: their name and department, and the admin's decision on it.
    name: { type: String, default: null },
    department: { type: String, default: null },
    approval: { type: String, enum: [...APPROVAL_STATES, null], default: null },
    approvalDecidedAt: { type: Date, default: null },
    // The account id of the admin who decided.
    approvalDecidedBy: { type: Number, default: null },
    // A disabled account cannot sign in, and its tokens and keys stop (src/oauth/accounts.ts
    // setDisabled); when, and by which account (null: an operator at the `campus` command).
    disabledAt: { type: Date, default: null },
    disabledBy: { type: Number, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'accounts' },
);

accountSchema.index({ email: 1 }, { unique: true });
accountSchema.index({ approval: 1 });

export type AccountDoc = InferSchemaType<typeof accountSchema>;
export type AccountModel = Model<AccountDoc>;

/** Login accounts (email + password), linked to the student with the same email. */
export function accountModel(connection: Connection): AccountModel {
  return defineModel<AccountDoc>(connection, 'Account', accountSchema);
}

const accountIdClaimSchema = new Schema(
  {
    // An account id that has been given out. Claims are never deleted (not even with their
    // account), so the highest claim is the high-water mark of every id ever given: an id, the
    // `sub` of its access tokens, is never handed to another person.
    _id: { type: Number, required: true },
    claimedAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'account_id_claims' },
);

export type AccountIdClaimDoc = InferSchemaType<typeof accountIdClaimSchema>;
export type AccountIdClaimModel = Model<AccountIdClaimDoc>;

/**
 * The account id counter. Each id is claimed by inserting a document with that `_id`: an insert
 * of a duplicate key fails on every backend, while FerretDB's findAndModify is not atomic
 * under concurrent callers, so a classic `$inc` counter could hand one id out twice.
 */
export function accountIdClaimModel(connection: Connection): AccountIdClaimModel {
  return defineModel<AccountIdClaimDoc>(connection, 'AccountIdClaim', accountIdClaimSchema);
}
