import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../../http/context.js';

/**
 * Sealed cookies of our own pages: AES-256-GCM, so their content can be neither read nor
 * changed by the browser. The first cookie key seals; every key opens (OAUTH_COOKIE_KEYS rotate
 * the same way oidc-provider's do: new key first, old keys kept until their cookies are gone).
 */
export class CookieSealer {
  private readonly keys: Buffer[];

  constructor(cookieKeys: readonly string[], purpose: string) {
    if (cookieKeys.length === 0) throw new Error('no cookie keys: the web pages cannot protect their cookies');
    this.keys = cookieKeys.map((key) => createHash('sha256').update(`campus-web:${purpose}:${key}`).digest());
  }

  seal(value: unknown): string {
    const [key] = this.keys;
    if (!key) throw new Error('no cookie key');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The sealed value, or undefined when the text was not sealed by one of our keys. */
  open(text: string | undefined): unknown {
    if (!text) return undefined;
    const raw = Buffer.from(text, 'base64url');
    if (raw.length < 29) return undefined;
    for (const key of this.keys) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
        decipher.setAuthTag(raw.subarray(12, 28));
        return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')) as unknown;
      } catch {
        // Not this key: try the next one.
      }
    }
    return undefined;
  }
}

/**
 * What the session cookie of our pages holds: the account and the grant of its sign-in (the
 * session lives exactly as long as that grant: revoking it, anywhere, signs the pages out), a
 * nonce the CSRF tokens derive from, and an absolute expiry.
 */
export interface WebSession {
  readonly accountId: number;
  readonly grantId: string;
  readonly nonce: string;
  readonly expiresAt: number;
}

export const SESSION_COOKIE = 'campus_web';
/** A console sign-in lasts at most a working day; the cookie itself ends with the browser. */
export const SESSION_LIFETIME_MS = 12 * 3600 * 1000;

/** Reads the session cookie (undefined when absent, forged or expired). */
export function readSession(ctx: AppContext, sealer: CookieSealer, now: number): WebSession | undefined {
  const value = sealer.open(ctx.cookies.get(SESSION_COOKIE));
  if (!isSession(value) || value.expiresAt <= now) return undefined;
  return value;
}

export function writeSession(ctx: AppContext, sealer: CookieSealer, session: WebSession, secure: boolean): void {
  // No Max-Age or Expires: the cookie ends with the browser (shared school computers).
  ctx.cookies.set(SESSION_COOKIE, sealer.seal(session), {
    httpOnly: true,
    sameSite: 'lax',
    secure,
    path: '/',
    signed: false,
    overwrite: true,
  });
}

export function clearSession(ctx: AppContext, secure: boolean): void {
  ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure, path: '/', maxAge: 0, overwrite: true });
}

function isSession(value: unknown): value is WebSession {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v['accountId'] === 'number' &&
    typeof v['grantId'] === 'string' &&
    typeof v['nonce'] === 'string' &&
    typeof v['expiresAt'] === 'number'
  );
}

/** The synchronizer token of a session's forms: an HMAC of its nonce. */
export function csrfToken(key: Buffer, session: WebSession): string {
  return createHmac('sha256', key).update(session.nonce).digest('base64url');
}

/** True when `presented` is the session's token (compared in constant time). */
export function csrfMatches(key: Buffer, session: WebSession, presented: unknown): boolean {
  const expected = Buffer.from(csrfToken(key, session));
  const actual = Buffer.from(typeof presented === 'string' ? presented : '');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
