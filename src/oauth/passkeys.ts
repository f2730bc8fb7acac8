import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { COSEALG, decodeClientDataJSON, isoBase64URL } from '@simplewebauthn/server/helpers';
import { z } from 'zod';
import type { Config } from '../config/index.js';
import { AccessAudit, type AccessActor } from '../data/accounts/access-log.js';
import { MAX_PASSKEYS_PER_ACCOUNT, PasskeyStore, type PasskeyDoc } from '../data/accounts/passkeys.js';
import { AccountStore } from '../data/accounts/store.js';
import type { Database } from '../data/database.js';
import { AccountRuleError, accessActor, checkAccountChange, type AccountActor } from './accounts.js';

export { MAX_PASSKEY_NAME_LENGTH, MAX_PASSKEYS_PER_ACCOUNT } from '../data/accounts/passkeys.js';

/**
 * The `amr` value (RFC 8176) of a sign-in made with a passkey: proof of possession of a key the
 * authenticator holds. With user verification required it is a multi-factor sign-in (`mfa`).
 */
export const PASSKEY_AMR = 'hwk';
/** How long a ceremony's challenge may be answered: a person reads the prompt and touches the sensor. */
export const CHALLENGE_LIFETIME_MS = 5 * 60 * 1000;
/** The name the authenticator shows beside the account. */
const RP_NAME = 'Campus Data Service';
/**
 * The signature algorithms offered and accepted (COSE): EdDSA, ES256, RS256, which every platform
 * authenticator makes. Named here: the library's default would probe Node.js for post-quantum
 * ML-DSA, an experimental API that warns on the service's stderr.
 */
const ALGORITHMS = [COSEALG.EdDSA, COSEALG.ES256, COSEALG.RS256];
/** The longest browser response taken (a response is a few hundred bytes; an attestation a few kilobytes). */
const MAX_RESPONSE_LENGTH = 32 * 1024;

/** The relying party: the passkeys' domain and the one origin their ceremonies run at. */
export interface RelyingParty {
  /** The host name of AUTH_URL: a passkey is bound to it, and works at it and nowhere else. */
  readonly id: string;
  /** The origin of AUTH_URL, where the login page and the consoles are served. */
  readonly origin: string;
}

/**
 * The relying party of the service's public address (AUTH_URL: the login page and the consoles),
 * or null where browsers offer no passkeys: an IP address (a relying-party id is a domain name)
 * or plain HTTP anywhere but `localhost` (WebAuthn needs a secure context). So a development
 * service at http://127.0.0.1:8080 has none; set AUTH_URL=http://localhost:8080 and open that.
 */
export function relyingPartyOf(config: Pick<Config, 'urls'>): RelyingParty | null {
  const url = new URL(config.urls.auth);
  const host = url.hostname;
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) return null;
  const local = host === 'localhost' || host.endsWith('.localhost');
  if (url.protocol !== 'https:' && !local) return null;
  return { id: host, origin: url.origin };
}

/** Why a passkey ceremony is refused. */
export type PasskeyProblem =
  /** The address has no relying party (relyingPartyOf). */
  | 'unavailable'
  /** No challenge of this ceremony is waiting: never made, used already, replaced, or expired. */
  | 'expired'
  /** The response does not verify: another origin, a bad signature, no user verification, malformed. */
  | 'invalid'
  /** No passkey of ours has this credential (or not the account's whose second step this is). */
  | 'unknown'
  /** The passkey's counter went backwards (now or before): a cloned authenticator; it is flagged. */
  | 'cloned'
  /** The account holds MAX_PASSKEYS_PER_ACCOUNT already. */
  | 'limit'
  /** The authenticator's credential is registered already. */
  | 'duplicate';

/** A ceremony the service refuses; `problem` says why (the pages word it). */
export class PasskeyRefused extends Error {
  constructor(
    readonly problem: PasskeyProblem,
    message: string,
  ) {
    super(message);
  }
}

/** A passkey as the console, the admin console and the command show it (never its key). */
export interface PasskeySummary {
  readonly id: string;
  readonly name: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  /** When a sign-in's counter went backwards (it signs in no more), or null. */
  readonly flaggedAt: Date | null;
  /** It may be synced between the person's devices (and is backed up). */
  readonly synced: boolean;
}

/** The browser's answer as @simplewebauthn/browser sends it: shape and sizes checked before anything reads it. */
const base64url = z.string().regex(/^[A-Za-z0-9_-]*$/, 'must be base64url');
const credentialFields = {
  id: base64url.min(1).max(1400),
  rawId: base64url.min(1).max(1400),
  type: z.literal('public-key'),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
};
const assertionSchema = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: base64url.min(1),
    authenticatorData: base64url.min(1),
    signature: base64url.min(1),
    userHandle: base64url.max(128).optional(),
  }),
});
const attestationSchema = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: base64url.min(1),
    attestationObject: base64url.min(1),
    transports: z.array(z.string().max(32)).max(10).optional(),
  }),
});

/**
 * Passkeys (WebAuthn, with @simplewebauthn/server): adding one to an account, signing in with one
 * (alone, or as the second step after a password), listing and removing them. Every challenge is
 * stored server-side in its ceremony's slot, used once, for CHALLENGE_LIFETIME_MS; user
 * verification is required; a sign-in names no account before the passkey does (discoverable
 * credentials: a person who is not signed in learns nothing of which emails have passkeys).
 */
export class PasskeyService {
  private readonly store: PasskeyStore;
  /** The relying party, or null where passkeys cannot work (relyingPartyOf). */
  readonly relyingParty: RelyingParty | null;

  constructor(
    private readonly db: Database,
    config: Pick<Config, 'urls'>,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.store = new PasskeyStore(db);
    this.relyingParty = relyingPartyOf(config);
  }

  /** An account's passkeys, oldest first. */
  async list(accountId: number): Promise<PasskeySummary[]> {
    return (await this.store.listOf(accountId)).map(summaryOf);
  }

  /**
   * Starts adding a passkey (the caller has had the password or a current factor typed again):
   * the options for the browser's `navigator.credentials.create`, its challenge stored for the
   * account. A discoverable credential with user verification; the account's passkeys are
   * excluded, so one authenticator holds one passkey of the account.
   */
  async registrationOptions(
    account: { readonly id: number; readonly email: string },
    name: string,
  ): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const rp = this.mustHaveRelyingParty();
    const existing = await this.store.listOf(account.id);
    if (existing.length >= MAX_PASSKEYS_PER_ACCOUNT) throw limitReached();
    const userHandle = existing[0]?.userHandle ?? randomBytes(32).toString('base64url');
    const options = await generateRegistrationOptions({
      rpName: RP_NAME,
      rpID: rp.id,
      userName: account.email,
      userDisplayName: account.email,
      userID: isoBase64URL.toBuffer(userHandle),
      timeout: CHALLENGE_LIFETIME_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p._id, transports: p.transports })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      supportedAlgorithmIDs: ALGORITHMS,
    });
    await this.store.putChallenge({
      ceremony: 'register',
      slot: registerSlot(account.id),
      challenge: options.challenge,
      accountId: account.id,
      name,
      userHandle,
      expiresAt: new Date(this.now().getTime() + CHALLENGE_LIFETIME_MS),
    });
    return options;
  }

  /** Ends adding a passkey: the browser's response to the account's waiting challenge, checked and stored. In the access log. */
  async register(actor: { readonly accountId: number; readonly email: string }, responseText: string): Promise<PasskeySummary> {
    const rp = this.mustHaveRelyingParty();
    const response = parseResponse(attestationSchema, responseText) as RegistrationResponseJSON;
    const issued = await this.store.takeChallenge(registerSlot(actor.accountId), challengeOf(response), this.now());
    if (!issued?.name || !issued.userHandle) throw expired();
    const verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: issued.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    }).catch((err: unknown) => {
      throw invalid(err);
    });
    if (!verification.verified) throw invalid();
    const { credential, credentialDeviceType, credentialBackedUp } = verification.registrationInfo;
    if ((await this.store.listOf(actor.accountId)).length >= MAX_PASSKEYS_PER_ACCOUNT) throw limitReached();
    const doc: PasskeyDoc = {
      _id: credential.id,
      accountId: actor.accountId,
      name: issued.name,
      publicKey: isoBase64URL.fromBuffer(credential.publicKey),
      counter: credential.counter,
      transports: credential.transports ?? [],
      userHandle: issued.userHandle,
      multiDevice: credentialDeviceType === 'multiDevice',
      backedUp: credentialBackedUp,
      createdAt: this.now(),
      lastUsedAt: null,
      flaggedAt: null,
    };
    if (!(await this.store.insert(doc)))
      throw new PasskeyRefused('duplicate', 'This authenticator already holds a passkey of this service.');
    await this.audit({ kind: 'ACCOUNT', id: actor.accountId, email: actor.email }, 'PASSKEY_ADDED', actor.accountId, actor.email, {
      name: doc.name,
    });
    return summaryOf(doc);
  }

  /**
   * Starts a sign-in at a login in progress (`interactionUid`): the options for the browser's
   * `navigator.credentials.get`. Without an account (signing in with a passkey alone) they list no
   * credential, so the browser offers the person's own passkeys and nobody learns whose they are;
   * with one (the second step after its password was right) they list that account's passkeys.
   */
  async signInOptions(interactionUid: string, accountId: number | null): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const rp = this.mustHaveRelyingParty();
    const allowCredentials =
      accountId === null
        ? []
        : (await this.store.listOf(accountId)).filter((p) => !p.flaggedAt).map((p) => ({ id: p._id, transports: p.transports }));
    const options = await generateAuthenticationOptions({
      rpID: rp.id,
      allowCredentials,
      userVerification: 'required',
      timeout: CHALLENGE_LIFETIME_MS,
    });
    await this.store.putChallenge({
      ceremony: 'sign-in',
      slot: signInSlot(interactionUid),
      challenge: options.challenge,
      accountId,
      name: null,
      userHandle: null,
      expiresAt: new Date(this.now().getTime() + CHALLENGE_LIFETIME_MS),
    });
    return options;
  }

  /**
   * Ends a sign-in at a login in progress: the browser's assertion to the login's waiting
   * challenge. Returns the account it signs in; refuses (PasskeyRefused) an unknown or flagged
   * passkey, another account's where the challenge was made for one, a response that does not
   * verify (another origin or relying party, a bad signature, no user verification), and a
   * signature counter that did not move forward, which also flags the passkey.
   */
  async signIn(interactionUid: string, responseText: string): Promise<{ accountId: number; passkeyId: string }> {
    const rp = this.mustHaveRelyingParty();
    const response = parseResponse(assertionSchema, responseText) as AuthenticationResponseJSON;
    const issued = await this.store.takeChallenge(signInSlot(interactionUid), challengeOf(response), this.now());
    if (!issued) throw expired();
    const passkey = await this.store.find(response.id);
    if (!passkey || (issued.accountId !== null && passkey.accountId !== issued.accountId)) throw unknown();
    if (response.response.userHandle !== undefined && response.response.userHandle !== passkey.userHandle) throw unknown();
    if (passkey.flaggedAt) throw cloned();
    // The counter is compared below, once the signature is known to be the passkey's: given the
    // stored one, the library would refuse a lower counter before checking the signature, and a
    // forged response could then have a passkey flagged.
    const verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: issued.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: { id: passkey._id, publicKey: isoBase64URL.toBuffer(passkey.publicKey), counter: 0, transports: passkey.transports },
      requireUserVerification: true,
    }).catch((err: unknown) => {
      throw invalid(err);
    });
    if (!verification.verified) throw invalid();
    const counter = verification.authenticationInfo.newCounter;
    if (counterWentBack(passkey.counter, counter)) {
      await this.store.flag(passkey, this.now());
      throw cloned();
    }
    // Another sign-in with this passkey recorded its counter meanwhile: of the two, only that one stands.
    if (!(await this.store.recordUse(passkey._id, passkey.counter, counter, this.now()))) throw invalid();
    return { accountId: passkey.accountId, passkeyId: passkey._id };
  }

  /** The person removes one of their own passkeys; the removed one, or null when they have none by that id. In the access log. */
  async remove(actor: { readonly accountId: number; readonly email: string }, id: string): Promise<PasskeySummary | null> {
    const removed = await this.store.remove(actor.accountId, id);
    if (!removed) return null;
    await this.audit({ kind: 'ACCOUNT', id: actor.accountId, email: actor.email }, 'PASSKEY_REMOVED', actor.accountId, actor.email, {
      names: [removed.name],
    });
    return summaryOf(removed);
  }

  /**
   * Staff (or the operator) remove an account's passkeys, all of them or the one named `id`: the
   * rule of every account change (src/auth/policy.ts: not one's own; an ADMIN's or ROOT's only by a
   * ROOT), then the access log, as a password reset sent.
   */
  async removeAs(actor: AccountActor, accountId: number, id?: string): Promise<{ email: string; removed: PasskeySummary[] }> {
    const account = await new AccountStore(this.db).findById(accountId);
    if (!account) throw new AccountRuleError(`No account ${accountId}.`, 'unknown_account');
    checkAccountChange(actor, account, 'remove-passkeys');
    const removed =
      id === undefined ? await this.store.removeAll(account._id) : [await this.store.remove(account._id, id)].filter((p) => p !== null);
    if (removed.length > 0)
      await this.audit(accessActor(actor), 'PASSKEY_REMOVED', account._id, account.email, { names: removed.map((p) => p.name) });
    return { email: account.email, removed: removed.map(summaryOf) };
  }

  /** Removes expired challenges; returns how many. */
  async sweepExpired(): Promise<number> {
    return this.store.sweepExpired(this.now());
  }

  private mustHaveRelyingParty(): RelyingParty {
    if (!this.relyingParty)
      throw new PasskeyRefused('unavailable', 'Passkeys need the service at a domain name over https (or http://localhost): set AUTH_URL.');
    return this.relyingParty;
  }

  private async audit(
    actor: AccessActor,
    action: 'PASSKEY_ADDED' | 'PASSKEY_REMOVED',
    accountId: number,
    email: string,
    detail: Record<string, unknown>,
  ): Promise<void> {
    await new AccessAudit(this.db).record(actor, { action, target: { kind: 'ACCOUNT', id: String(accountId), label: email }, detail });
  }
}

/**
 * A signature counter that did not move forward: a cloned authenticator (WebAuthn, "sign count").
 * Authenticators that keep no counter report 0 every time, which is allowed while the stored one is 0.
 */
export function counterWentBack(stored: number, reported: number): boolean {
  return (stored > 0 || reported > 0) && reported <= stored;
}

function summaryOf(doc: PasskeyDoc): PasskeySummary {
  return {
    id: doc._id,
    name: doc.name,
    createdAt: doc.createdAt,
    lastUsedAt: doc.lastUsedAt ?? null,
    flaggedAt: doc.flaggedAt ?? null,
    synced: doc.multiDevice && doc.backedUp,
  };
}

const registerSlot = (accountId: number) => `register:${accountId}`;
const signInSlot = (interactionUid: string) => `sign-in:${interactionUid}`;

/** The browser's response, parsed and checked for shape, or PasskeyRefused('invalid'). */
function parseResponse(schema: z.ZodType, text: string): unknown {
  if (text.length === 0 || text.length > MAX_RESPONSE_LENGTH) throw invalid();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalid();
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw invalid();
  return parsed.data;
}

/** The challenge the response signed (in its client data), to find the ceremony it answers. */
function challengeOf(response: { readonly response: { readonly clientDataJSON: string } }): string {
  try {
    const challenge = decodeClientDataJSON(response.response.clientDataJSON).challenge;
    if (typeof challenge === 'string' && challenge.length > 0 && challenge.length <= 128) return challenge;
  } catch {
    // Not JSON in base64url: refused below.
  }
  throw invalid();
}

function expired(): PasskeyRefused {
  return new PasskeyRefused('expired', 'No passkey request is waiting here: it was used, replaced or expired. Try again.');
}

function invalid(cause?: unknown): PasskeyRefused {
  const detail = cause instanceof Error ? ` (${cause.message})` : '';
  return new PasskeyRefused('invalid', `The passkey's answer does not verify${detail}.`);
}

function unknown(): PasskeyRefused {
  return new PasskeyRefused('unknown', 'This passkey is not registered here.');
}

function cloned(): PasskeyRefused {
  return new PasskeyRefused('cloned', "This passkey's signature counter went backwards: it may have been copied, and signs in no more.");
}

function limitReached(): PasskeyRefused {
  return new PasskeyRefused('limit', `An account holds at most ${MAX_PASSKEYS_PER_ACCOUNT} passkeys.`);
}
