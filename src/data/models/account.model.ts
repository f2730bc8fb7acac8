import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { defineModel } from './define.js';

export const ACCOUNT_ROLES = ['USER', 'ADMIN', 'ROOT'] as const;
export type AccountRole = (typeof ACCOUNT_ROLES)[number];

const accountSchema = new Schema(
  {
    // A plain integer id: userinfo shows it as `id` (a Long, like a student id) and as `sub`.
    _id: { type: Number, required: true },
    email: { type: String, required: true, lowercase: true, trim: true },
    // argon2id (PHC string); the password itself is never stored.
    passwordHash: { type: String, required: true },
    role: { type: String, enum: ACCOUNT_ROLES, required: true },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'accounts' },
);

accountSchema.index({ email: 1 }, { unique: true });

export type AccountDoc = InferSchemaType<typeof accountSchema>;
export type AccountModel = Model<AccountDoc>;

/** Login accounts (email + password), linked to the student with the same email. */
export function accountModel(connection: Connection): AccountModel {
  return defineModel<AccountDoc>(connection, 'Account', accountSchema);
}
