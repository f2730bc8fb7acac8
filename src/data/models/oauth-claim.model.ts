import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { defineModel } from './define.js';

const oauthClaimSchema = new Schema(
  {
    // The `_id` of the claimed record in oauth_records, e.g. "AuthorizationCode:abc...".
    _id: { type: String, required: true },
    // The record's expiry. A claim outlives its record's revocation (a redemption that read the
    // record just before must still lose) and is swept once the record would have expired.
    expiresAt: { type: Date, default: null },
    claimedAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'oauth_claims' },
);

oauthClaimSchema.index({ expiresAt: 1 });

export type OAuthClaimDoc = InferSchemaType<typeof oauthClaimSchema>;
export type OAuthClaimModel = Model<OAuthClaimDoc>;

/**
 * First use of a single-use artifact (authorization code, refresh token). The first caller to
 * insert the claim wins: a duplicate `_id` is refused atomically on every backend, which
 * FerretDB's findAndModify is not (concurrent callers can all see the record unused).
 */
export function oauthClaimModel(connection: Connection): OAuthClaimModel {
  return defineModel<OAuthClaimDoc>(connection, 'OAuthClaim', oauthClaimSchema);
}
