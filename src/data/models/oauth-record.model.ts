import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { defineModel } from './define.js';

/**
 * The schema of a collection of records. A fresh one per collection, not a clone: a clone carries
 * the hooks the connection's plugins already added to the original (the operations' timing and
 * budget), which would then time each operation twice under the original's collection name.
 */
const recordSchema = (collection: string) =>
  new Schema(
    {
      // `${kind}:${id}`, e.g. "Grant:abc...", or for codes and tokens "RefreshToken:sha256:<hash of the id>";
      // the claim of a code or token (its first use) is "<its _id>#claim" (src/data/accounts/oauth-records.ts).
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
      // A record is never updated when used: its first use is a claim, a record of its own (kind
      // "Claim") inserted under a key only one caller can insert. These two are a claim's: when it
      // was made, and the refresh token that replaced the claimed one (null for a code, or a token
      // used up without a successor).
      claimedAt: { type: Date, default: null },
      successor: { type: String, default: null },
    },
    { versionKey: false, collection },
  );

/** A collection of records with its indexes (lookups by uid or user code go through pointer records keyed by `_id`: see OAuthStore). */
function indexedRecordSchema(collection: string) {
  const schema = recordSchema(collection);
  schema.index({ kind: 1, grantId: 1 });
  schema.index({ grantId: 1 });
  schema.index({ expiresAt: 1 });
  schema.index({ accountId: 1 });
  schema.index({ clientId: 1 });
  return schema;
}

const oauthRecordSchema = indexedRecordSchema('oauth_records');
const interactionSchema = indexedRecordSchema('oauth_interactions');

export type OAuthRecordDoc = InferSchemaType<typeof oauthRecordSchema>;
export type OAuthRecordModel = Model<OAuthRecordDoc>;

/** The authorization server's artifacts: codes, tokens, grants, sessions. */
export function oauthRecordModel(connection: Connection): OAuthRecordModel {
  return defineModel<OAuthRecordDoc>(connection, 'OAuthRecord', oauthRecordSchema);
}

/**
 * Logins in progress (the provider's interactions), stored as records in a collection of their
 * own: each login updates and deletes its interaction, and FerretDB over SQLite scanned the whole
 * collection for every update and delete until the launcher made it an index it can use
 * (tools/ferretdb/indexes.go). Apart from the grants, sessions and tokens that pile up until
 * they expire, a login's writes touch only the logins under way.
 */
export function oauthInteractionModel(connection: Connection): OAuthRecordModel {
  return defineModel<OAuthRecordDoc>(connection, 'OAuthInteraction', interactionSchema);
}
