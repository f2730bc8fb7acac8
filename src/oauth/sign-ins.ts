import Bowser from 'bowser';
import type { OAuthRecord, OAuthStore } from '../data/accounts/oauth-records.js';
import type { LogoutNotices } from './backchannel-logout.js';
import { SESSION_DEVICE, WEB_CLIENT_ID } from './constants.js';

/** One login session of a person at the authorization server, as "My sign-ins" shows it. */
export interface SignIn {
  /** The session's stable id (oidc-provider's `uid`; its cookie value, `jti`, changes at each sign-in step and is never shown). */
  readonly id: string;
  /** Browser and version, e.g. "Chrome 131", or null when the user agent says nothing known. */
  readonly browser: string | null;
  /** Operating system, e.g. "Android 14", or null. */
  readonly os: string | null;
  readonly userAgent: string | null;
  /** When the password was typed (ISO 8601). */
  readonly signedInAt: string | null;
  /** When the browser last came to the authorization server with it (ISO 8601). */
  readonly lastUsedAt: string | null;
  /** "Keep me signed in": the session outlives the browser (src/oauth/provider.ts, sessionTtl). */
  readonly remembered: boolean;
  /** The session of the browser asking. */
  readonly current: boolean;
}

/**
 * "My sign-ins" (/console/sessions and `campus accounts sessions`): the login sessions of an
 * account, stored by oidc-provider through our adapter with the device it added
 * (src/oauth/adapter.ts, withDevice), and ending them. Ending one deletes it, so that browser's
 * next authorization finds no session and asks for the password; the consoles' sign-in made in
 * that session (its grant of our own pages' client) ends with it, as with "sign out everywhere"
 * (src/oauth/self-service.ts). Other apps keep the access they were given; those that registered a
 * back-channel logout address are told the sign-in ended.
 */
export class SignIns {
  constructor(
    private readonly store: OAuthStore,
    /** Apps with a back-channel logout address are told that the sign-in ended (src/oauth/backchannel-logout.ts). */
    private readonly notices: LogoutNotices,
  ) {}

  /** The account's live sessions, the asking browser's first, then by last use; `currentCookie` is the asking browser's session cookie (its `jti`). */
  async list(accountId: number, currentCookie?: string): Promise<SignIn[]> {
    const records = await this.store.listOf('Session', { accountId: String(accountId) });
    return records
      .map((r) => describe(r, currentCookie))
      .sort((a, b) => Number(b.current) - Number(a.current) || (b.lastUsedAt ?? '').localeCompare(a.lastUsedAt ?? ''));
  }

  /** Ends one session of the account by its id; false when it has none by that id. */
  async end(accountId: number, id: string): Promise<boolean> {
    const records = await this.store.listOf('Session', { accountId: String(accountId) });
    const record = records.find((r) => r.payload['uid'] === id);
    if (!record) return false;
    await this.endRecord(record);
    return true;
  }

  /** Ends every session of the account but the asking browser's (every one when `currentCookie` is undefined); returns how many. */
  async endOthers(accountId: number, currentCookie?: string): Promise<number> {
    const records = await this.store.listOf('Session', { accountId: String(accountId) });
    const others = records.filter((r) => r.id !== currentCookie);
    for (const record of others) await this.endRecord(record);
    return others.length;
  }

  private async endRecord(record: OAuthRecord): Promise<void> {
    await this.notices.sessionsEnded([record], 'session_ended');
    await this.store.destroy('Session', record.id);
    const webGrant = consoleGrantOf(record.payload);
    if (webGrant) await this.store.revokeGrant(webGrant);
  }
}

/** The grant of our own pages' client made in this session (oidc-provider keeps one per client under `authorizations`). */
function consoleGrantOf(payload: Record<string, unknown>): string | undefined {
  const authorizations = payload['authorizations'];
  if (typeof authorizations !== 'object' || authorizations === null) return undefined;
  const web: unknown = (authorizations as Record<string, unknown>)[WEB_CLIENT_ID];
  const grantId: unknown = typeof web === 'object' && web !== null ? (web as Record<string, unknown>)['grantId'] : undefined;
  return typeof grantId === 'string' ? grantId : undefined;
}

function describe(record: OAuthRecord, currentCookie: string | undefined): SignIn {
  const p = record.payload;
  const device = typeof p[SESSION_DEVICE] === 'object' && p[SESSION_DEVICE] !== null ? (p[SESSION_DEVICE] as Record<string, unknown>) : {};
  const userAgent = typeof device['userAgent'] === 'string' && device['userAgent'] ? device['userAgent'] : null;
  const seconds = (value: unknown) => (typeof value === 'number' ? new Date(value * 1000).toISOString() : null);
  return {
    id: typeof p['uid'] === 'string' ? p['uid'] : record.id,
    ...parseUserAgent(userAgent),
    userAgent,
    signedInAt: seconds(p['loginTs']),
    lastUsedAt: seconds(device['lastUsedAt']) ?? seconds(p['iat']),
    remembered: p['transient'] !== true,
    current: currentCookie !== undefined && record.id === currentCookie,
  };
}

/**
 * Browser and system from a user agent, with bowser (MIT, no dependencies; ua-parser-js 2 is
 * AGPL-licensed, its MIT line 1.x is in maintenance).
 */
export function parseUserAgent(userAgent: string | null): { browser: string | null; os: string | null } {
  if (!userAgent) return { browser: null, os: null };
  const parsed = Bowser.parse(userAgent);
  const named = (name: string | undefined, version: string | undefined) =>
    name ? `${name}${version ? ` ${version.split('.')[0] ?? ''}` : ''}` : null;
  return {
    browser: named(parsed.browser.name, parsed.browser.version),
    os: named(parsed.os.name, parsed.os.versionName ?? parsed.os.version),
  };
}
