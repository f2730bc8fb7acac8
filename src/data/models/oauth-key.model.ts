import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { defineModel } from './define.js';

const oauthKeySchema = new Schema(
  {
    // 'signing-jwks' or 'cookie-keys'.
    _id: { type: String, required: true },
    // JSON text. Only development keeps keys here; production takes them from configuration.
    value: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'oauth_keys' },
);

export type OAuthKeyDoc = InferSchemaType<typeof oauthKeySchema>;
export type OAuthKeyModel = Model<OAuthKeyDoc>;

/** Development key material, generated once so restarts keep sessions and tokens valid. */
export function oauthKeyModel(connection: Connection): OAuthKeyModel {
  return defineModel<OAuthKeyDoc>(connection, 'OAuthKey', oauthKeySchema);
}
