import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { defineModel } from './define.js';
import { API_SCOPES } from './api-key.model.js';

export const CLIENT_TYPES = ['confidential', 'public'] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

/** PKCE policy: required for every client unless a confidential one is registered as a legacy app. */
export const PKCE_POLICIES = ['required', 'optional'] as const;
export type PkcePolicy = (typeof PKCE_POLICIES)[number];

/**
 * How an app gets its tokens: `authorization_code` (a person signs in in a browser, at the app's
 * redirect address; refresh tokens with it), `client_credentials` (the app's own server, no person:
 * machine tokens for the data API), `device` (RFC 8628: a person signs a device in with a code
 * typed at /device; refresh tokens with it).
 */
export const APP_GRANTS = ['authorization_code', 'client_credentials', 'device'] as const;
export type AppGrant = (typeof APP_GRANTS)[number];

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
    // Absent in registrations older than this field: read as 'required' (see AppService).
    pkce: { type: String, enum: PKCE_POLICIES, default: 'required' },
    // Where RP-initiated logout may send the browser afterwards (exact strings, like redirectUris).
    postLogoutRedirectUris: { type: [String], default: [] },
    // The account that registered the app in the developer console; null for `campus clients`.
    ownerAccountId: { type: Number, default: null },
    // The service the login page names ("continue to ..."); null: the app's name is shown.
    serviceName: { type: String, default: null },
    // An admin may disable an app (its authorize, token endpoint and userinfo stop at once).
    disabledAt: { type: Date, default: null },
    disabledBy: { type: Number, default: null },
    // A developer-console app asking for data beyond the account (src/oauth/login-scopes.ts,
    // SCOPES_NEEDING_APPROVAL) is in testing until an admin approves it: only its owner may sign in.
    // Apps registered before this rule were approved by a migration (src/data/migrations.ts).
    approvedAt: { type: Date, default: null },
    approvedBy: { type: Number, default: null },
    // Absent in registrations older than this field: read as ['authorization_code'] (src/oauth/apps.ts).
    grants: { type: [String], enum: APP_GRANTS, default: undefined },
    // Machine tokens (client_credentials): the data-API scopes the app asked for, judged like its
    // owner's API keys (src/auth/policy.ts, appScopes): an admin's decisions on them, and the
    // purpose written for those that needed approval.
    dataScopes: { type: [String], enum: API_SCOPES, default: [] },
    approvedDataScopes: { type: [String], enum: API_SCOPES, default: [] },
    refusedDataScopes: { type: [String], enum: API_SCOPES, default: [] },
    dataPurpose: { type: String, default: null },
    // Every machine token carries this value (its `gid`); a new value revokes every earlier token.
    machineGrantId: { type: String, default: null },
    // OpenID Connect Back-Channel Logout: where the app's server is told that a sign-in ended (null: not told).
    backchannelLogoutUri: { type: String, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'oauth_clients' },
);

oauthClientSchema.index({ ownerAccountId: 1 });

export type OAuthClientDoc = InferSchemaType<typeof oauthClientSchema>;
export type OAuthClientModel = Model<OAuthClientDoc>;

/** OAuth clients registered with `campus clients create` or in the developer console. */
export function oauthClientModel(connection: Connection): OAuthClientModel {
  return defineModel<OAuthClientDoc>(connection, 'OAuthClient', oauthClientSchema);
}
