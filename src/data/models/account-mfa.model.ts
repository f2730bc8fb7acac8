import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { defineModel } from './define.js';

const accountMfaSchema = new Schema(
  {
    // The account's id: one second factor per account.
    _id: { type: Number, required: true },
    // The TOTP secret (RFC 6238), sealed with AES-256-GCM under a key derived from the cookie
    // keys (src/oauth/second-factor.ts): the server must compute codes from it, so it cannot be a hash.
    secret: { type: String, required: true },
    // Until the person typed a code from their app the factor is not in use (enrolment started).
    active: { type: Boolean, required: true },
    // SHA-256 (hex) of each unused recovery code; a used one is removed.
    recoveryHashes: { type: [String], default: [] },
    // The last TOTP time step accepted: a code is good once (RFC 6238 section 5.2).
    lastStep: { type: Number, default: 0 },
    createdAt: { type: Date, required: true },
    activatedAt: { type: Date, default: null },
  },
  { versionKey: false, collection: 'account_mfa' },
);

export type AccountMfaDoc = InferSchemaType<typeof accountMfaSchema>;
export type AccountMfaModel = Model<AccountMfaDoc>;

/** Second factors of accounts (TOTP and recovery codes). */
export function accountMfaModel(connection: Connection): AccountMfaModel {
  return defineModel<AccountMfaDoc>(connection, 'AccountMfa', accountMfaSchema);
}
