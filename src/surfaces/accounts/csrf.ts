import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import bodyParser from 'koa-bodyparser';
import type { AppContext, AppMiddleware } from '../../http/context.js';

const FORM_COOKIE = 'campus_form';

/**
 * CSRF protection of forms shown before anyone is signed in (sign-up, password reset): a random
 * value in a SameSite=Strict cookie of its own, and in each form its HMAC under a server key
 * (a "signed double-submit" token); a post must carry both, from our own origin.
 */
export class AnonymousForms {
  private readonly key: Buffer;
  private readonly parse = bodyParser({ enableTypes: ['form'], formLimit: '16kb' });

  constructor(
    cookieKeys: readonly string[],
    private readonly secure: boolean,
    private readonly origin: string,
  ) {
    const [first] = cookieKeys;
    if (!first) throw new Error('no cookie keys: the sign-up forms cannot be protected');
    this.key = createHash('sha256').update(`campus-anonymous-forms:${first}`).digest();
  }

  /** The token for this browser's forms (sets the cookie on first use). */
  token(ctx: AppContext): string {
    let value = ctx.cookies.get(FORM_COOKIE);
    if (!value || !/^[A-Za-z0-9_-]{22,64}$/.test(value)) {
      value = randomBytes(18).toString('base64url');
      ctx.cookies.set(FORM_COOKIE, value, { httpOnly: true, sameSite: 'strict', secure: this.secure, path: '/', overwrite: true });
    }
    return this.sign(value);
  }

  /** Parses the form; calls `refuse` (and stops) unless it carries this browser's token from our origin. */
  check(refuse: (ctx: AppContext) => void): AppMiddleware {
    return async (ctx, next) => {
      await this.parse(ctx, async () => {});
      const cookie = ctx.cookies.get(FORM_COOKIE);
      const requestOrigin = ctx.get('origin');
      const body: unknown = ctx.request.body;
      const presented = typeof body === 'object' && body !== null && 'csrf' in body && typeof body.csrf === 'string' ? body.csrf : '';
      if (!cookie || (requestOrigin && requestOrigin !== this.origin) || !sameText(this.sign(cookie), presented)) return refuse(ctx);
      await next();
    };
  }

  private sign(value: string): string {
    return createHmac('sha256', this.key).update(value).digest('base64url');
  }
}

function sameText(expected: string, actual: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(actual);
  return a.length === b.length && timingSafeEqual(a, b);
}
