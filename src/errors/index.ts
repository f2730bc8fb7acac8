/**
 * One error model for the whole service (docs/architecture.md, "The way through"). Every expected
 * failure is an AppError with an HTTP status, a stable code and a safe message; each surface
 * renders it in one place: the data envelope (src/http/errors.ts), GraphQL's `extensions.code`
 * (src/graphql/server.ts), OAuth JSON (src/http/errors.ts), HTML pages (src/surfaces/web/web.ts, `boundary`) and
 * the `campus` command's one line (src/cli/index.ts). Errors are told apart by class and code,
 * never by their text; anything else thrown becomes a 500 whose cause is logged, never sent.
 */
const STATUS_OF = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  /** What was asked for existed once and is kept no longer (a change-feed cursor past its retention). */
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
  INTERNAL_SERVER_ERROR: 500,
  /** The configuration or the environment is wrong; the message says what to change. */
  MISCONFIGURED: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof STATUS_OF;

export interface AppErrorOptions {
  readonly cause?: unknown;
  /** Extra response headers the error asks for (Retry-After, Allow, WWW-Authenticate). */
  readonly headers?: Record<string, string>;
}

/**
 * The base of every expected failure. `userFacing` says whether the message may be shown to
 * whoever asked (the API caller, or the operator at the terminal): client errors, "unavailable"
 * (its message holds no detail of the cause) and configuration problems (the operator's own).
 */
export class AppError extends Error {
  readonly status: number;
  readonly userFacing: boolean;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.status = STATUS_OF[code];
    this.userFacing = this.status < 500 || code === 'SERVICE_UNAVAILABLE' || code === 'MISCONFIGURED';
    this.headers = options.headers ?? {};
  }

  /** The message the caller may see. */
  get safeMessage(): string {
    return this.userFacing ? this.message : 'Internal server error.';
  }
}

/** 400: a request parameter is malformed or out of range; the message names it. */
export class BadRequestError extends AppError {
  constructor(
    message: string,
    readonly parameter?: string,
  ) {
    super('BAD_REQUEST', message);
  }
}

/** 401: missing, malformed, unknown, revoked or expired credentials. */
export class UnauthorizedError extends AppError {
  constructor(message: string, options: AppErrorOptions = {}) {
    super('UNAUTHORIZED', message, options);
  }
}

/** 403: valid credentials that lack what is asked for. */
export class ForbiddenError extends AppError {
  constructor(message: string, options: AppErrorOptions = {}) {
    super('FORBIDDEN', message, options);
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'No such endpoint.') {
    super('NOT_FOUND', message);
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(allowed: readonly string[]) {
    super('METHOD_NOT_ALLOWED', `Method not allowed; use ${allowed.join(', ')}.`, { headers: { Allow: allowed.join(', ') } });
  }
}

/** 409: the request clashes with what exists (an email already taken, demo data present). */
export class ConflictError extends AppError {
  constructor(message: string) {
    super('CONFLICT', message);
  }
}

/** 429: a rate limit is spent; Retry-After says when to come back. */
export class TooManyRequestsError extends AppError {
  constructor(
    readonly retryAfterSeconds: number,
    message = `Too many requests; retry after ${retryAfterSeconds} seconds.`,
  ) {
    super('TOO_MANY_REQUESTS', message, { headers: { 'Retry-After': String(retryAfterSeconds) } });
  }
}

/** 503: a dependency (the database) is unreachable, or the service sheds load; Retry-After says when to come back. */
export class ServiceUnavailableError extends AppError {
  constructor(message: string, cause?: unknown, retryAfterSeconds = 5) {
    super('SERVICE_UNAVAILABLE', message, { cause, headers: { 'Retry-After': String(retryAfterSeconds) } });
  }
}

/** 503: a data request outlived its time budget; its remaining work was abandoned. */
export class TimeBudgetError extends ServiceUnavailableError {
  constructor(readonly budgetMs: number) {
    super(
      `The request did not finish within its time budget of ${budgetMs} ms and was stopped; ask for less data or retry later.`,
      undefined,
      Math.max(1, Math.ceil(budgetMs / 1000)),
    );
  }
}

/** 503: every execution slot is taken and the waiting line is full; retry shortly. */
export class BusyError extends ServiceUnavailableError {
  constructor(what: string, running: number, waiting: number) {
    super(`${what} is busy (${running} running, ${waiting} waiting); retry after 1 second.`, undefined, 1);
  }
}

/** 400: a data request needed more database operations than one request may make. */
export class OperationLimitError extends AppError {
  constructor(readonly limit: number) {
    super(
      'BAD_REQUEST',
      `The request needed more than ${limit} database operations, the most one request may make; ask for fewer root fields or shorter date ranges.`,
    );
  }
}

/** The configuration or environment is wrong (a variable, a key set, a missing tool); the message says what to do. */
export class MisconfiguredError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('MISCONFIGURED', message, { cause });
  }
}

export class InternalError extends AppError {
  constructor(cause?: unknown) {
    super('INTERNAL_SERVER_ERROR', 'Internal server error.', { cause });
  }
}

/** True for the 503s of load shedding (time budget, busy): the service working as designed, not failing. */
export function isLoadShedding(error: AppError): boolean {
  return error instanceof TimeBudgetError || error instanceof BusyError;
}

const NAME_OF_STATUS = new Map<number, string>([
  [200, 'OK'],
  [304, 'NOT_MODIFIED'],
  ...Object.entries(STATUS_OF)
    .filter(([code]) => code !== 'MISCONFIGURED')
    .map(([code, status]): [number, string] => [status, code]),
]);

/** Upper-snake status names of the data envelope (docs/decisions.md, "Error envelope"). */
export function statusName(status: number): string {
  return NAME_OF_STATUS.get(status) ?? (status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST');
}

/** The one wording of a bad parameter: it names the parameter, the expectation and the value. */
export function invalidParameter(name: string, expectation: string, got: unknown): BadRequestError {
  const quote = (v: string) => `'${v.length > 64 ? `${v.slice(0, 64)}…` : v}'`;
  const shown = typeof got === 'string' ? quote(got) : Array.isArray(got) ? got.map((v) => quote(String(v))).join(', ') : String(got);
  return new BadRequestError(`Invalid parameter '${name}': ${expectation} (got ${shown}).`, name);
}
