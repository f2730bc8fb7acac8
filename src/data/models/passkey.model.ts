import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { defineModel } from './define.js';

/** The most passkeys one account holds. */
export const MAX_PASSKEYS_PER_ACCOUNT = 10;
/** The longest name a person gives a passkey. */
export const MAX_PASSKEY_NAME_LENGTH = 50;

const passkeySchema = new Schema(
  {
    // The credential id (base64url) the authenticator chose: a sign-in names it, so it is looked up
    // by `_id`, the one filter FerretDB pushes down to its storage.
    _id: { type: String, required: true },
    accountId: { type: Number, required: true },
    // What the person called it ("내 휴대폰"), shown in the console.
    name: { type: String, required: true },
    // The credential's public key (COSE, base64url): a sign-in's signature is checked with it.
    publicKey: { type: String, required: true },
    // The signature counter the authenticator last reported (0 for those that keep none, such as
    // synced passkeys); one that goes backwards is a cloned authenticator.
    counter: { type: Number, required: true },
    // How the browser may reach the authenticator (internal, hybrid, usb, ...), as it said at creation.
    transports: { type: [String], default: [] },
    // The WebAuthn user handle (base64url, random, one per account): the same for every passkey of
    // the account, so an authenticator keeps one passkey per account here; never the email.
    userHandle: { type: String, required: true },
    // Whether the passkey may be synced between devices, and whether it is (WebAuthn backup flags).
    multiDevice: { type: Boolean, required: true },
    backedUp: { type: Boolean, required: true },
    createdAt: { type: Date, required: true },
    lastUsedAt: { type: Date, default: null },
    // Set when a sign-in's counter went backwards: the passkey signs in no more until removed.
    flaggedAt: { type: Date, default: null },
  },
  { versionKey: false, collection: 'passkeys' },
);

passkeySchema.index({ accountId: 1 });

export type PasskeyDoc = InferSchemaType<typeof passkeySchema>;
export type PasskeyModel = Model<PasskeyDoc>;

/** The ceremonies a challenge is made for. */
export const PASSKEY_CEREMONIES = ['register', 'sign-in'] as const;
export type PasskeyCeremony = (typeof PASSKEY_CEREMONIES)[number];

const passkeyChallengeSchema = new Schema(
  {
    // The slot of the ceremony: `register:<account id>` or `sign-in:<login interaction id>`. A new
    // challenge replaces the slot's earlier one, so no one stores more than a slot's worth.
    _id: { type: String, required: true },
    ceremony: { type: String, enum: PASSKEY_CEREMONIES, required: true },
    // The random challenge (base64url) the browser's response must sign; used once.
    challenge: { type: String, required: true },
    // The account the ceremony is for: the one adding a passkey, or the one whose password was
    // right and whose passkey is its second step; null for a sign-in with any passkey.
    accountId: { type: Number, default: null },
    // The passkey being added: the name the person gave it, and the account's user handle it was offered with.
    name: { type: String, default: null },
    userHandle: { type: String, default: null },
    // Checked on every use (FerretDB has no TTL indexes) and swept with the OAuth records.
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'passkey_challenges' },
);

passkeyChallengeSchema.index({ expiresAt: 1 });

export type PasskeyChallengeDoc = InferSchemaType<typeof passkeyChallengeSchema>;
export type PasskeyChallengeModel = Model<PasskeyChallengeDoc>;

/** Passkeys of accounts (WebAuthn credentials: public keys only). */
export function passkeyModel(connection: Connection): PasskeyModel {
  return defineModel<PasskeyDoc>(connection, 'Passkey', passkeySchema);
}

/** The challenges of passkey ceremonies in progress (single use, a few minutes). */
export function passkeyChallengeModel(connection: Connection): PasskeyChallengeModel {
  return defineModel<PasskeyChallengeDoc>(connection, 'PasskeyChallenge', passkeyChallengeSchema);
}
