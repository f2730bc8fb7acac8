import { z } from 'zod';
import type { AppContext } from '../../http/context.js';
import { cookieName } from '../../oauth/constants.js';
import type { CookieSealer } from './seal.js';

/**
 * What the session cookie of our pages holds: the account and the grant of its sign-in (the
 * session lives exactly as long as that grant: revoking it, anywhere, signs the pages out), a
 * nonce the CSRF tokens of its forms are bound to (./csrf.ts), and an absolute expiry.
 */
const sessionSchema = z.object({
  accountId: z.number(),
  grantId: z.string(),
  nonce: z.string(),
  expiresAt: z.number(),
  // When the person last typed their password at the authorization server (ms), and whether that
  // sign-in had a second factor (and whether it was a passkey): the admin console asks again after
  // 15 minutes, and for the factor (only a passkey under ADMIN_MFA=passkey).
  authTime: z.number().optional(),
  mfa: z.boolean().optional(),
  passkey: z.boolean().optional(),
});
export type WebSession = z.infer<typeof sessionSchema>;

export const SESSION_COOKIE = 'campus_web';
/** A console sign-in lasts at most a working day; the cookie itself ends with the browser. */
export const SESSION_LIFETIME_MS = 12 * 3600 * 1000;

/** The session cookie of our pages: read, written and cleared in one place. */
export class Sessions {
  private readonly name: string;

  constructor(
    private readonly sealer: CookieSealer,
    private readonly secure: boolean,
    private readonly now: () => Date,
  ) {
    this.name = cookieName(SESSION_COOKIE, secure);
  }

  /** The session of the request (undefined when absent, forged or expired). */
  read(ctx: AppContext): WebSession | undefined {
    const parsed = sessionSchema.safeParse(this.sealer.open(ctx.cookies.get(this.name)));
    return parsed.success && parsed.data.expiresAt > this.now().getTime() ? parsed.data : undefined;
  }

  write(ctx: AppContext, session: WebSession): void {
    // No Max-Age or Expires: the cookie ends with the browser (shared school computers).
    ctx.cookies.set(this.name, this.sealer.seal(session), {
      httpOnly: true,
      sameSite: 'lax',
      secure: this.secure,
      path: '/',
      overwrite: true,
    });
  }

  clear(ctx: AppContext): void {
    ctx.cookies.set(this.name, '', { httpOnly: true, sameSite: 'lax', secure: this.secure, path: '/', maxAge: 0, overwrite: true });
  }
}
