import { Schema, type Connection, type Model, type InferSchemaType, type Types } from 'mongoose';
import { defineModel } from './define.js';

export const API_SCOPES = ['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ', 'NEIS_READ'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

const apiKeySchema = new Schema(
  {
    // SHA-256 of the key (hex). The key itself is never stored.
    hash: { type: String, required: true },
    // First 8 characters, so a person can tell keys apart in `campus keys list`.
    prefix: { type: String, required: true },
    label: { type: String, default: null },
    scopes: { type: [String], enum: API_SCOPES, required: true },
    rateLimitPoints: { type: Number, default: null },
    rateLimitSeconds: { type: Number, default: null },
    createdAt: { type: Date, required: true },
    renewedAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
    revokedAt: { type: Date, default: null },
  },
  { versionKey: false, collection: 'api_keys' },
);

apiKeySchema.index({ hash: 1 }, { unique: true });
apiKeySchema.index({ prefix: 1 });

export type ApiKeyDoc = InferSchemaType<typeof apiKeySchema> & { _id: Types.ObjectId };
export type ApiKeyModel = Model<ApiKeyDoc>;

export function apiKeyModel(connection: Connection): ApiKeyModel {
  return defineModel<ApiKeyDoc>(connection, 'ApiKey', apiKeySchema);
}
