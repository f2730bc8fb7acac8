import { createHash, createHmac, randomBytes } from 'node:crypto';
import { sameSecret } from '../../compare.js';
import type { AppContext, AppMiddleware } from '../../http/context.js';
import { cookieName } from '../../oauth/constants.js';
import { ForgedFormError } from './errors.js';

/**
 * What the CSRF token of a family of forms is bound to: the console session (its nonce), the
 * anonymous forms of a browser (a random cookie of their own), or a login in progress (the
 * interaction id). `value` answers it for a request; showing a page (`issue`) may create it.
 */
export interface CsrfBinding {
  readonly name: string;
  value(ctx: AppContext, mode: 'issue' | 'check'): string | undefined;
}

/**
 * The one CSRF protection of our pages: every form carries a synchronizer token (an HMAC, under a
 * key derived from the cookie keys, of the binding's name and value) and every unsafe request must
 * present it, from our own origin when the browser says where it comes from (the Origin header).
 */
export class Csrf {
  private readonly key: Buffer;

  constructor(
    cookieKeys: readonly string[],
    private readonly origin: string,
  ) {
    const [first] = cookieKeys;
    // Without a secret key, tokens would be computable by anyone.
    if (!first) throw new Error('no cookie keys: the forms cannot be protected');
    this.key = createHash('sha256').update(`campus-web-csrf:${first}`).digest();
  }

  /** The token for this request's forms ('' when the binding has no value: such a form is refused). */
  token(ctx: AppContext, binding: CsrfBinding): string {
    const value = binding.value(ctx, 'issue');
    return value === undefined ? '' : this.sign(binding.name, value);
  }

  /** Refuses (ForgedFormError) a request whose parsed form lacks the binding's token or that comes from another origin. */
  check(binding: CsrfBinding): AppMiddleware {
    return async (ctx, next) => {
      const requestOrigin = ctx.get('origin');
      const value = binding.value(ctx, 'check');
      const body: unknown = ctx.request.body;
      const presented =
        typeof body === 'object' && body !== null && 'csrf' in body && typeof body.csrf === 'string' ? body.csrf : undefined;
      if (
        (requestOrigin && requestOrigin !== this.origin) ||
        value === undefined ||
        !sameSecret(presented, this.sign(binding.name, value))
      ) {
        ctx.state.log.warn({ event: 'web.forged_form', binding: binding.name }, 'form refused: no valid CSRF token');
        throw new ForgedFormError();
      }
      await next();
    };
  }

  private sign(name: string, value: string): string {
    return createHmac('sha256', this.key).update(`${name}:${value}`).digest('base64url');
  }
}

const FORM_COOKIE = 'campus_form';

/**
 * The binding of forms shown before anyone is signed in (sign-up, password reset): a random value
 * in a SameSite=Strict cookie of its own, set when a form is first shown (a "signed double-submit").
 */
export function anonymousBinding(secure: boolean): CsrfBinding {
  return {
    name: 'anonymous',
    value(ctx, mode) {
      const current = ctx.cookies.get(cookieName(FORM_COOKIE, secure));
      if (current && /^[A-Za-z0-9_-]{22,64}$/.test(current)) return current;
      if (mode === 'check') return undefined;
      const fresh = randomBytes(18).toString('base64url');
      ctx.cookies.set(cookieName(FORM_COOKIE, secure), fresh, { httpOnly: true, sameSite: 'strict', secure, path: '/', overwrite: true });
      return fresh;
    },
  };
}
