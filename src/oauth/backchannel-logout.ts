import { importJWK, SignJWT, type JWK } from 'jose';
import { OAuthStore, type OAuthRecord } from '../data/accounts/oauth-records.js';
import { AppStore } from '../data/apps/store.js';
import type { Database } from '../data/database.js';
import { LogoutNoticeStore, type LogoutCause, type LogoutNoticeDoc, type LogoutTarget } from '../data/events/logout-notices.js';
import { WEB_CLIENT_ID } from './constants.js';
import type { OAuthKeys } from './signing-keys.js';

/*
 * OpenID Connect Back-Channel Logout 1.0 (docs/oauth.md, "Back-channel logout"). An app that
 * registered a back-channel logout address is told, by a signed logout token its server verifies
 * against /v1/oauth/jwks, when a sign-in it holds ends: the person signs out (the end_session
 * endpoint, the consoles' sign-out, "sign out everywhere"), ends one of their sign-ins
 * (/console/sessions, `campus sessions end`), is disabled, or disconnects the app. This file decides
 * whom to tell and signs; the notices are stored (src/data/events/logout-notices.ts) and sent by the
 * webhook worker (src/events/logout-delivery.ts), with its safe-target checks and retries.
 */

/** The event a logout token carries (section 2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** A logout token's lifetime: it is signed again at every attempt, so a retry is never stale. */
export const LOGOUT_TOKEN_TTL_SECONDS = 120;

/** An app a person is signed in to: the account and, when one sign-in is meant, its `sid` for that app. */
export interface SignedInApp {
  readonly clientId: string;
  readonly sub: string;
  readonly sid: string | null;
}

/**
 * The apps a login session signed in to, each with the session's `sid` for it (oidc-provider keeps
 * one per app under `authorizations`, and puts it in that app's ID tokens).
 */
export function appsOfSession(session: OAuthRecord): SignedInApp[] {
  const sub = session.payload['accountId'];
  const authorizations = session.payload['authorizations'];
  if (typeof sub !== 'string' || typeof authorizations !== 'object' || authorizations === null) return [];
  return Object.entries(authorizations as Record<string, unknown>).flatMap(([clientId, value]) => {
    const sid = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)['sid'] : undefined;
    return clientId === WEB_CLIENT_ID ? [] : [{ clientId, sub, sid: typeof sid === 'string' ? sid : null }];
  });
}

export class LogoutNotices {
  private readonly store: LogoutNoticeStore;
  private readonly oauth: OAuthStore;
  private readonly apps: AppStore;

  constructor(db: Database, now: () => Date = () => new Date()) {
    this.store = new LogoutNoticeStore(db, now);
    this.oauth = new OAuthStore(db, now);
    this.apps = new AppStore(db);
  }

  /**
   * Tells each of these apps that registered a back-channel logout address (a disabled app is
   * told nothing); returns the notices made. The same app and sign-in is told once.
   */
  async tell(signedIn: readonly SignedInApp[], cause: LogoutCause): Promise<LogoutNoticeDoc[]> {
    const targets = new Map<string, LogoutTarget>();
    for (const app of signedIn) {
      const key = `${app.clientId} ${app.sub} ${app.sid ?? ''}`;
      if (targets.has(key)) continue;
      const doc = await this.apps.known(app.clientId);
      if (!doc?.backchannelLogoutUri || doc.disabledAt) continue;
      targets.set(key, { ...app, url: doc.backchannelLogoutUri });
    }
    return this.store.add([...targets.values()], cause);
  }

  /** Login sessions that end (read before they are deleted): every app they signed in to. */
  async sessionsEnded(sessions: readonly OAuthRecord[], cause: LogoutCause): Promise<LogoutNoticeDoc[]> {
    return this.tell(sessions.flatMap(appsOfSession), cause);
  }

  /**
   * The account's access to apps ends (it is disabled: every app it gave a grant or signed in to;
   * it disconnects one: `clientIds`). Each app is told once per live sign-in that holds it (with
   * that sign-in's `sid`), or once with the account alone when none does (its refresh tokens
   * outlive the sign-in). Call it before the sessions end.
   */
  async accessEnded(accountId: number, cause: LogoutCause, clientIds?: readonly string[]): Promise<LogoutNoticeDoc[]> {
    const sub = String(accountId);
    const sessions = await this.oauth.listOf('Session', { accountId: sub });
    const grants = await this.oauth.listOf('Grant', { accountId: sub });
    const signedIn = sessions.flatMap(appsOfSession);
    const granted = grants.map((g) => g.payload['clientId']).filter((id): id is string => typeof id === 'string' && id !== WEB_CLIENT_ID);
    const apps = new Set(clientIds ?? [...signedIn.map((a) => a.clientId), ...granted]);
    const told = [...apps].flatMap((clientId) => {
      const sids = signedIn.filter((a) => a.clientId === clientId);
      return sids.length > 0 ? sids : [{ clientId, sub, sid: null }];
    });
    return this.tell(told, cause);
  }
}

/** Signing keys imported once per loaded key set. */
const imported = new WeakMap<JWK, ReturnType<typeof importJWK>>();

/**
 * The logout token of a notice (section 2.4): `iss`, `aud` (the app), `sub`, `sid` when one sign-in
 * is meant, `iat`, `exp`, `jti` (the notice's id, the same at every attempt) and the event; no
 * `nonce`. Signed like the ID tokens (the first key of the set, its `kid`), with `typ` logout+jwt.
 */
export async function logoutToken(
  keys: OAuthKeys,
  issuer: string,
  notice: Pick<LogoutNoticeDoc, '_id' | 'clientId' | 'sub' | 'sid'>,
  now: Date,
): Promise<string> {
  const jwk: JWK | undefined = keys.privateJwks.keys[0];
  if (!jwk?.kid) throw new Error('no signing key');
  let key = imported.get(jwk);
  if (!key) {
    key = importJWK(jwk, keys.signingAlg);
    imported.set(jwk, key);
  }
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({ events: { [BACKCHANNEL_LOGOUT_EVENT]: {} }, ...(notice.sid ? { sid: notice.sid } : {}) })
    .setProtectedHeader({ alg: keys.signingAlg, kid: jwk.kid, typ: 'logout+jwt' })
    .setIssuer(issuer)
    .setAudience(notice.clientId)
    .setSubject(notice.sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + LOGOUT_TOKEN_TTL_SECONDS)
    .setJti(notice._id)
    .sign(await key);
}
