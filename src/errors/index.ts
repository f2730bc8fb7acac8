/**
 * One error hierarchy for the whole service. Each surface (REST envelope, GraphQL, OAuth)
 * renders these in exactly one place; errors are told apart by class and code, never by text.
 */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'TOO_MANY_REQUESTS'
  | 'INTERNAL_SERVER_ERROR'
  | 'SERVICE_UNAVAILABLE';

const STATUS_BY_CODE: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  TOO_MANY_REQUESTS: 429,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
};

/**
 * Base class: `expose` tells whether the message may be shown to the caller (client errors,
 * and "unavailable", whose message holds no detail of the cause).
 */
export class AppError extends Error {
  readonly status: number;
  readonly expose: boolean;
  /** Extra response headers this error asks for (e.g. Retry-After). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.status = STATUS_BY_CODE[code];
    this.expose = this.status < 500 || code === 'SERVICE_UNAVAILABLE';
    this.headers = options.headers ?? {};
  }
}

/** 400: a request parameter is malformed or out of range; the message names it. */
export class BadRequestError extends AppError {
  constructor(message: string, readonly parameter?: string) {
    super('BAD_REQUEST', message);
  }
}

/** 401: missing, malformed, unknown, revoked or expired credentials. */
export class UnauthorizedError extends AppError {
  constructor(message: string) {
    super('UNAUTHORIZED', message);
  }
}

/** 403: valid credentials that lack what the endpoint needs. */
export class ForbiddenError extends AppError {
  constructor(message: string) {
    super('FORBIDDEN', message);
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'No such endpoint.') {
    super('NOT_FOUND', message);
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(allowed: string[]) {
    super('METHOD_NOT_ALLOWED', `Method not allowed; use ${allowed.join(', ')}.`, {
      headers: { Allow: allowed.join(', ') },
    });
  }
}

/** 429: the key's rate limit is spent; Retry-After says when to come back. */
export class TooManyRequestsError extends AppError {
  constructor(readonly retryAfterSeconds: number) {
    super('TOO_MANY_REQUESTS', `Too many requests; retry after ${retryAfterSeconds} seconds.`, {
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
  }
}

/** 503: a dependency (the database) is unreachable; the service recovers when it returns. */
export class ServiceUnavailableError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('SERVICE_UNAVAILABLE', message, { cause, headers: { 'Retry-After': '5' } });
  }
}

export class InternalError extends AppError {
  constructor(cause?: unknown) {
    super('INTERNAL_SERVER_ERROR', 'Internal server error.', { cause });
  }
}

/** Upper-snake status names used by the REST error envelope. */
export function statusName(status: number): string {
  const names: Record<number, string> = {
    200: 'OK',
    304: 'NOT_MODIFIED',
    400: 'BAD_REQUEST',
    401: 'UNAUTHORIZED',
    403: 'FORBIDDEN',
    404: 'NOT_FOUND',
    405: 'METHOD_NOT_ALLOWED',
    413: 'PAYLOAD_TOO_LARGE',
    415: 'UNSUPPORTED_MEDIA_TYPE',
    429: 'TOO_MANY_REQUESTS',
    500: 'INTERNAL_SERVER_ERROR',
    503: 'SERVICE_UNAVAILABLE',
  };
  return names[status] ?? (status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST');
}

/**
 * Classifies a thrown value: AppErrors pass through; database connectivity failures become 503;
 * anything else is an internal error whose cause is logged, never sent.
 */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isDatabaseUnavailable(err)) return new ServiceUnavailableError('The database is unavailable; try again shortly.', err);
  return new InternalError(err);
}

const UNAVAILABLE_ERROR_NAMES = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoPoolClearedError',
  'MongooseServerSelectionError',
  'DatabaseUnavailableError',
]);

/** True for errors that mean "the database cannot be reached right now". */
export function isDatabaseUnavailable(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (UNAVAILABLE_ERROR_NAMES.has(current.name)) return true;
    current = current.cause;
  }
  return false;
}
