import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { defineModel } from './define.js';

/**
 * What a code proves: the email for a sign-up, the right to set a new password, or (`sign-in`)
 * the owner of an account whose password sign-in is soft-locked (src/oauth/throttle.ts).
 */
export const EMAIL_CODE_PURPOSES = ['signup', 'reset', 'sign-in'] as const;
export type EmailCodePurpose = (typeof EMAIL_CODE_PURPOSES)[number];

const emailCodeSchema = new Schema(
  {
    // `${purpose}:${email}`: one live code per purpose and email, so a new request replaces the old.
    _id: { type: String, required: true },
    purpose: { type: String, enum: EMAIL_CODE_PURPOSES, required: true },
    email: { type: String, required: true },
    // HMAC-SHA256 (hex) of the code under a server key (src/oauth/email-codes.ts); never the code.
    codeHash: { type: String, required: true },
    // Checked on every use (FerretDB has no TTL indexes) and swept with the OAuth records.
    expiresAt: { type: Date, required: true },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'email_codes' },
);

emailCodeSchema.index({ expiresAt: 1 });
emailCodeSchema.index({ email: 1 });

export type EmailCodeDoc = InferSchemaType<typeof emailCodeSchema>;
export type EmailCodeModel = Model<EmailCodeDoc>;

/** Email verification and password-reset codes (8 digits, 5 minutes), stored hashed. */
export function emailCodeModel(connection: Connection): EmailCodeModel {
  return defineModel<EmailCodeDoc>(connection, 'EmailCode', emailCodeSchema);
}
