import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { defineModel } from './define.js';

const apiKeyUsageSchema = new Schema(
  {
    // `${keyId}:${day}`: one document per key and school day, grown with $inc upserts.
    _id: { type: String, required: true },
    keyId: { type: String, required: true },
    // YYYY-MM-DD in the school's time zone.
    day: { type: String, required: true },
    requests: { type: Number, default: 0 },
    // Answers 400-499, the 429s included.
    clientErrors: { type: Number, default: 0 },
    // Answers 429 (rate limit spent).
    throttled: { type: Number, default: 0 },
  },
  { versionKey: false, collection: 'api_key_usage' },
);

apiKeyUsageSchema.index({ keyId: 1, day: 1 });

export type ApiKeyUsageDoc = InferSchemaType<typeof apiKeyUsageSchema>;
export type ApiKeyUsageModel = Model<ApiKeyUsageDoc>;

/** Requests per API key and day, counted in memory and flushed every few seconds (src/http/usage.ts). */
export function apiKeyUsageModel(connection: Connection): ApiKeyUsageModel {
  return defineModel<ApiKeyUsageDoc>(connection, 'ApiKeyUsage', apiKeyUsageSchema);
}
