import { toAppError } from '../data/platform/errors.js';
import { AppError, isLoadShedding, type ErrorCode } from '../errors/index.js';
import { errorEnvelope } from './envelope.js';
import type { AppContext } from './context.js';

/**
 * The HTTP renderings of AppError (src/errors/index.ts): the data envelope, and OAuth JSON for
 * the userinfo server. Each logs the cause of a server-side error (load shedding as a warning:
 * the service working as designed) and sends only the safe message.
 */

/** Writes an AppError as the data envelope `{status, code, message, data: null}`. */
export function renderEnvelopeError(ctx: AppContext, error: AppError): void {
  logFailure(ctx, error);
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  ctx.body = errorEnvelope(error.status, error.safeMessage);
}

/** An error of an OAuth surface: the OAuth `error` code (RFC 6749, RFC 6750) travels with it. */
export class OAuthError extends AppError {
  constructor(
    code: ErrorCode,
    readonly oauthError: string,
    description: string,
    headers: Record<string, string> = {},
  ) {
    super(code, description, { headers });
  }
}

/** Writes an AppError as `{error, error_description}` with `Cache-Control: no-store`. */
export function renderOAuthError(ctx: AppContext, error: AppError): void {
  logFailure(ctx, error);
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { error: oauthErrorCode(error), error_description: error.userFacing ? error.message : 'internal server error' };
}

function oauthErrorCode(error: AppError): string {
  if (error instanceof OAuthError) return error.oauthError;
  if (error.status === 503) return 'temporarily_unavailable';
  return error.status >= 500 ? 'server_error' : 'invalid_request';
}

/** Anything thrown as an AppError: Koa's http-errors keep their 4xx meaning, the rest is classified (src/data/platform/errors.ts). */
export function appErrorOf(err: unknown): AppError {
  return toAppError(fromHttpError(err));
}

/** Logs a failure the way every rendering does: server errors with their cause, load shedding as a warning. */
export function logFailure(ctx: AppContext, error: AppError): void {
  if (isLoadShedding(error)) ctx.state.log.warn({ code: error.code, reason: error.message }, 'request shed');
  else if (error.status >= 500) ctx.state.log.error({ err: error.cause ?? error, code: error.code }, 'request failed');
}

const CODE_OF_HTTP_STATUS: Readonly<Record<number, ErrorCode>> = { 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE' };

/** Koa and its body parser raise http-errors (a status and a safe message); keep their 4xx meaning. */
function fromHttpError(err: unknown): unknown {
  if (err instanceof AppError || !(err instanceof Error) || !('status' in err) || typeof err.status !== 'number') return err;
  if (err.status < 400 || err.status >= 500) return err;
  return new AppError(CODE_OF_HTTP_STATUS[err.status] ?? 'BAD_REQUEST', err.message);
}
