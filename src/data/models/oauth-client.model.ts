import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { defineModel } from './define.js';

export const CLIENT_TYPES = ['confidential', 'public'] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

const oauthClientSchema = new Schema(
  {
    // The client_id (random, shown in `campus clients list`).
    _id: { type: String, required: true },
    name: { type: String, required: true },
    // SHA-256 (hex) of the secret; null for public clients. The secret is shown once, at creation.
    secretHash: { type: String, default: null },
    redirectUris: { type: [String], required: true },
    scopes: { type: [String], required: true },
    type: { type: String, enum: CLIENT_TYPES, required: true },
    // First-party clients skip the consent page.
    firstParty: { type: Boolean, required: true },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'oauth_clients' },
);

export type OAuthClientDoc = InferSchemaType<typeof oauthClientSchema>;
export type OAuthClientModel = Model<OAuthClientDoc>;

/** OAuth clients registered with `campus clients create`. */
export function oauthClientModel(connection: Connection): OAuthClientModel {
  return defineModel<OAuthClientDoc>(connection, 'OAuthClient', oauthClientSchema);
}
