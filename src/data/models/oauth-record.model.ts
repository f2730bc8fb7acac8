import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { defineModel } from './define.js';

const oauthRecordSchema = new Schema(
  {
    // `${kind}:${id}`, e.g. "RefreshToken:abc..." (ids are unique per kind only).
    _id: { type: String, required: true },
    kind: { type: String, required: true },
    // The provider's artifact as a JSON string: its keys (resource URLs) may hold dots, which
    // not every MongoDB-compatible server accepts as field names.
    payload: { type: String, required: true },
    grantId: { type: String, default: null },
    uid: { type: String, default: null },
    userCode: { type: String, default: null },
    clientId: { type: String, default: null },
    accountId: { type: String, default: null },
    // Checked on every read and swept periodically: FerretDB has no TTL indexes.
    expiresAt: { type: Date, default: null },
    // Epoch seconds of first use (codes, rotated refresh tokens); null while unused.
    consumedAt: { type: Number, default: null },
  },
  { versionKey: false, collection: 'oauth_records' },
);

// Lookups by uid or user code go through pointer records keyed by `_id` (see OAuthStore).
oauthRecordSchema.index({ kind: 1, grantId: 1 });
oauthRecordSchema.index({ grantId: 1 });
oauthRecordSchema.index({ expiresAt: 1 });
oauthRecordSchema.index({ accountId: 1 });
oauthRecordSchema.index({ clientId: 1 });

export type OAuthRecordDoc = InferSchemaType<typeof oauthRecordSchema>;
export type OAuthRecordModel = Model<OAuthRecordDoc>;

/** The authorization server's artifacts: codes, tokens, grants, sessions, interactions. */
export function oauthRecordModel(connection: Connection): OAuthRecordModel {
  return defineModel<OAuthRecordDoc>(connection, 'OAuthRecord', oauthRecordSchema);
}
