import { AppError, toAppError } from '../errors/index.js';
import { errorEnvelope } from './envelope.js';
import type { AppContext, AppMiddleware } from './context.js';

/** Renders any error as the data API's error envelope; the one REST rendering of AppError. */
export function envelopeErrors(): AppMiddleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      renderEnvelopeError(ctx, toAppError(fromKoaError(err)));
    }
  };
}

/** Writes an AppError as an envelope; logs the cause of server-side errors. */
export function renderEnvelopeError(ctx: AppContext, error: AppError): void {
  if (error.status >= 500) ctx.state.log.error({ err: error.cause ?? error, code: error.code }, 'request failed');
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  ctx.body = errorEnvelope(error.status, error.expose ? error.message : 'Internal server error.');
}

/** Body-parser and Koa raise http-errors (status + expose); keep their 4xx meaning. */
function fromKoaError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (err instanceof Error && 'status' in err && typeof err.status === 'number' && err.status >= 400 && err.status < 500) {
    return new KoaClientError(err.status, err.message);
  }
  return err;
}

class KoaClientError extends AppError {
  override readonly status: number;
  constructor(status: number, message: string) {
    super('BAD_REQUEST', message);
    this.status = status;
  }
}
