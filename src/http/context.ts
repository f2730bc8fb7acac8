import { randomUUID } from 'node:crypto';
import type { Middleware, ParameterizedContext } from 'koa';
import type { RequestBudget } from '../data/platform/budget.js';
import type { Logger } from '../logger.js';
import { appErrorOf, renderEnvelopeError } from './errors.js';
import type { AccountPrincipal, ApiKeyPrincipal } from '../auth/principal.js';

/** Per-request state shared by the middleware; never kept in module globals. */
export interface RequestState {
  requestId: string;
  log: Logger;
  apiKey?: ApiKeyPrincipal;
  /** The account signed in to our own pages (src/surfaces/web/). */
  account?: AccountPrincipal;
  /** The time and database allowance of a data request (src/http/budget.ts). */
  budget?: RequestBudget;
}

export type AppContext = ParameterizedContext<RequestState>;
export type AppMiddleware = Middleware<RequestState>;

const INCOMING_ID = /^[A-Za-z0-9._-]{8,128}$/;

/** What the frame of every request reports to once the request is answered (src/http/metrics.ts). */
export interface RequestMeter {
  record(ctx: AppContext, seconds: number): void;
}

/**
 * The frame of every request, outermost, in one async step: an id (a caller's X-Request-Id when
 * well-formed), a child logger that stamps it on every line, the nosniff header; any error that
 * reaches it becomes the data envelope (src/http/errors.ts); then its metrics,
 * with the status that envelope got, and one access-log line. Only the path is logged: query
 * strings and bodies may carry codes or secrets on the OAuth surfaces. One step rather than
 * three nested ones: each async step is a fixed cost of a warm answer
 * (docs/benchmarks.md, "A warm answer's fixed cost").
 */
export function requestFrame(options: { logger: Logger; meter: RequestMeter }): AppMiddleware {
  const { logger, meter } = options;
  // The access line's fields are fixed here and none is a key that redaction censors, so it is
  // written without redaction: the wildcard paths would otherwise send every field of every
  // request's line through the redactor.
  const access = logger.child({}, { redact: [] });
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = INCOMING_ID.test(incoming) ? incoming : randomUUID();
    ctx.state = new PerRequestState(logger, requestId);
    ctx.set('X-Request-Id', requestId);
    ctx.set('X-Content-Type-Options', 'nosniff');
    const started = performance.now();
    try {
      await next();
    } catch (err) {
      renderEnvelopeError(ctx, appErrorOf(err));
    } finally {
      const ms = performance.now() - started;
      meter.record(ctx, ms / 1000);
      access.info({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'request');
    }
  };
}

/** The state of one request; its child logger is made on first use (most requests never need it). */
class PerRequestState implements RequestState {
  apiKey?: ApiKeyPrincipal;
  account?: AccountPrincipal;
  budget?: RequestBudget;
  private child: Logger | undefined;

  constructor(
    private readonly logger: Logger,
    readonly requestId: string,
  ) {}

  get log(): Logger {
    return (this.child ??= this.logger.child({ requestId: this.requestId }));
  }
}
