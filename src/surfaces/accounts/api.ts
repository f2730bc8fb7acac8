import { setTimeout as sleep } from 'node:timers/promises';
import bodyParser from 'koa-bodyparser';
import type { AppContext, AppMiddleware } from '../../http/context.js';
import { toAppError } from '../../data/platform/errors.js';
import { RefusalPace } from '../../http/refusal-pace.js';
import { OAuthError, renderOAuthError } from '../../http/errors.js';
import { ACCOUNT_PATHS } from '../../oauth/constants.js';
import type { SelfService } from '../../oauth/self-service.js';

/**
 * How fast one client address is refused (src/http/refusal-pace.ts): 700 a second at once, far
 * past any person, the rest after 100 ms: of the paces bench/flood.ts tried, the one that kept both
 * the logins and the flood's p99 (docs/limits-and-security.md, "Refusals are paced per client address").
 */
export const REFUSAL_PACE = { perSecond: 700, pauseMs: 100 } as const;

/** The JSON bodies are a few fields. */
const BODY_LIMIT = '16kb';

type Handler = (ctx: AppContext, body: Record<string, unknown>) => Promise<void>;

interface Route {
  readonly method: string;
  /** The address budget a request of this route spends (src/oauth/email-codes.ts), checked before the body is read. */
  readonly budget: 'requests' | 'checks';
  readonly handler: Handler;
}

/** A request for a code sent by email: the body's address in, 202 with what the service answers. */
function codeRequest(send: (email: unknown, ip: string) => Promise<unknown>): Route {
  return {
    method: 'POST',
    budget: 'requests',
    handler: async (ctx, body) => {
      ctx.status = 202;
      ctx.body = await send(body['email'], ctx.ip);
    },
  };
}

/**
 * The self-service JSON endpoints (docs/accounts.md, "The JSON endpoints"), for our pages' logic and any other front
 * end: they take no cookies and no credentials, so any origin may call them (CORS), and each
 * is limited per email address.
 *   POST /v1/accounts/email-verifications  {"email"}                          202
 *   POST /v1/accounts                      {"email","password","code"[,"teacher"]} 201
 *   POST /v1/accounts/password-resets      {"email"}                          202 (the same for every address)
 *   PUT  /v1/accounts/password             {"email","code","newPassword"}     204
 * Errors are `{error, error_description}` (src/oauth/self-service.ts names them), 429 with Retry-After.
 */
export function accountApi(service: SelfService): AppMiddleware {
  const routes = new Map<string, Route>([
    [ACCOUNT_PATHS.emailVerifications, codeRequest((email, ip) => service.requestSignupCode(email, ip))],
    [
      ACCOUNT_PATHS.accounts,
      {
        method: 'POST',
        budget: 'checks',
        handler: async (ctx, body) => {
          const account = await service.signUp(
            {
              email: body['email'],
              password: body['password'],
              code: body['code'],
              teacher: body['teacher'],
            },
            ctx.ip,
          );
          ctx.status = 201;
          ctx.body = {
            id: account.id,
            email: account.email,
            role: account.role,
            isStudent: account.isStudent,
            approval: account.approval,
            createdAt: account.createdAt.toISOString(),
          };
        },
      },
    ],
    [ACCOUNT_PATHS.passwordResets, codeRequest((email, ip) => service.requestPasswordReset(email, ip))],
    [
      ACCOUNT_PATHS.password,
      {
        method: 'PUT',
        budget: 'checks',
        handler: async (ctx, body) => {
          await service.resetPassword({ email: body['email'], code: body['code'], newPassword: body['newPassword'] }, ctx.ip);
          ctx.status = 204;
        },
      },
    ],
  ]);
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: BODY_LIMIT, strict: true });
  const pace = new RefusalPace(REFUSAL_PACE);
  return async (ctx, next) => {
    const route = routes.get(ctx.path);
    if (!route) return next();
    allowCrossOrigin(ctx, route.method);
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    ctx.set('Cache-Control', 'no-store');
    try {
      if (ctx.method !== route.method)
        throw new OAuthError('METHOD_NOT_ALLOWED', 'invalid_request', `use ${route.method}`, { Allow: `${route.method}, OPTIONS` });
      await service.assertAddressAllowed(route.budget, ctx.ip);
      await route.handler(ctx, await jsonBody(ctx, parse));
    } catch (err) {
      // Every refusal (a spent budget, a wrong or dead code, a bad body) is paced per address.
      const delay = pace.delayFor(ctx.ip);
      if (delay > 0) await sleep(delay);
      renderOAuthError(ctx, toAppError(fromBodyError(err)));
    }
  };
}

/** The request's JSON object (415 for another type, 400 for anything but an object). */
async function jsonBody(ctx: AppContext, parse: AppMiddleware): Promise<Record<string, unknown>> {
  if (typeof ctx.is('application/json') !== 'string') {
    throw new OAuthError('UNSUPPORTED_MEDIA_TYPE', 'invalid_request', 'send a JSON body with Content-Type: application/json');
  }
  await parse(ctx, async () => {});
  const body: unknown = ctx.request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthError('BAD_REQUEST', 'invalid_request', 'the body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

/** koa-bodyparser's errors (malformed JSON, too large) keep their 4xx meaning. */
function fromBodyError(err: unknown): unknown {
  if (!(err instanceof Error) || !('status' in err) || typeof err.status !== 'number' || err instanceof OAuthError) return err;
  if (err.status === 413) return new OAuthError('PAYLOAD_TOO_LARGE', 'invalid_request', `the body is larger than ${BODY_LIMIT}`);
  if (err.status >= 400 && err.status < 500) return new OAuthError('BAD_REQUEST', 'invalid_request', 'the body is not valid JSON');
  return err;
}

function allowCrossOrigin(ctx: AppContext, method: string): void {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Allow-Methods', `${method}, OPTIONS`);
  ctx.set('Access-Control-Allow-Headers', 'Content-Type');
  ctx.set('Access-Control-Expose-Headers', 'Retry-After');
  ctx.set('Access-Control-Max-Age', '600');
}
