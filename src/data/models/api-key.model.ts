import { Schema, type Connection, type Model, type InferSchemaType, type Types } from 'mongoose';
import { ApiScope } from '../__generated__/enums.js';
import { defineModel } from './define.js';

export type { ApiScope } from '../__generated__/enums.js';
/** Every scope, in the schema's order. */
export const API_SCOPES: readonly ApiScope[] = Object.values(ApiScope);

const apiKeySchema = new Schema(
  {
    // SHA-256 of the key (hex). The key itself is never stored.
    hash: { type: String, required: true },
    // First 8 characters, so a person can tell keys apart in `campus keys list`.
    prefix: { type: String, required: true },
    label: { type: String, default: null },
    // Every scope the key asked for (or, for an operator's key, was given).
    scopes: { type: [String], enum: API_SCOPES, required: true },
    rateLimitPoints: { type: Number, default: null },
    rateLimitSeconds: { type: Number, default: null },
    createdAt: { type: Date, required: true },
    renewedAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
    revokedAt: { type: Date, default: null },
    // The account that created the key in the developer console; null for keys of `campus keys`.
    ownerAccountId: { type: Number, default: null },
    // After a rotation with a grace period, the replaced value keeps working until
    // previousExpiresAt (at most 24 hours); the record (its id, scopes, budget and usage) stays.
    previousHash: { type: String, default: null },
    previousPrefix: { type: String, default: null },
    previousExpiresAt: { type: Date, default: null },
    // What an admin decided on the key's scopes: approved ones and refused ones. An owned key reads
    // `scopes` (what it asked for) as far as its owner's role grants them now or an admin approved
    // them, never a refused one (src/auth/policy.ts, keyScopes); an operator's key reads `scopes`.
    // Also the purpose the person wrote for the scopes that needed approval, and who decided when.
    approvedScopes: { type: [String], enum: API_SCOPES, default: [] },
    refusedScopes: { type: [String], enum: API_SCOPES, default: [] },
    purpose: { type: String, default: null },
    decidedAt: { type: Date, default: null },
    decidedBy: { type: Number, default: null },
    // Written by the usage counter (src/http/usage.ts) every few seconds, never on a request.
    lastUsedAt: { type: Date, default: null },
  },
  { versionKey: false, collection: 'api_keys' },
);

apiKeySchema.index({ hash: 1 }, { unique: true });
apiKeySchema.index({ prefix: 1 });
apiKeySchema.index({ previousHash: 1 });
apiKeySchema.index({ ownerAccountId: 1 });

export type ApiKeyDoc = InferSchemaType<typeof apiKeySchema> & { _id: Types.ObjectId };
export type ApiKeyModel = Model<ApiKeyDoc>;

export function apiKeyModel(connection: Connection): ApiKeyModel {
  return defineModel<ApiKeyDoc>(connection, 'ApiKey', apiKeySchema);
}
