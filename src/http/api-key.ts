import { ApiKeyService, UUID_PATTERN, type ApiScope } from '../data/api-keys.js';
import type { Database } from '../data/database.js';
import type { ApiKeyDoc } from '../data/models/api-key.model.js';
import { ForbiddenError, UnauthorizedError } from '../errors/index.js';
import type { AppMiddleware } from './context.js';

/** Who is calling the data API: the key's record id, its scopes and its own rate limit. */
export interface ApiKeyPrincipal {
  readonly id: string;
  readonly scopes: ReadonlySet<ApiScope>;
  readonly rateLimit: { points: number; durationSeconds: number } | null;
}

const MAX_CACHED_KEYS = 10000;

/**
 * Resolves the X-API-KEY header to a principal. Lookups are cached per key and dropped
 * whenever the shared `keys` version moves, so an issue, renewal, rotation or revocation made
 * anywhere (another instance, the CLI) takes effect within a second.
 */
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, { entry: KeyEntry | null; keysVersion: number }>();
  private readonly service: ApiKeyService;

  constructor(private readonly db: Database, private readonly now: () => Date = () => new Date()) {
    this.service = new ApiKeyService(db);
  }

  /** Returns the principal, or throws 401 with the reason the DECISIONS allow to tell. */
  async authenticate(header: string): Promise<ApiKeyPrincipal> {
    if (!header) throw new UnauthorizedError('Missing API key: send it in the X-API-KEY header.');
    if (!UUID_PATTERN.test(header)) throw new UnauthorizedError('Malformed API key: X-API-KEY must be a UUID.');
    const entry = await this.lookup(header);
    // Unknown and revoked keys read the same, so a caller cannot probe which keys once existed.
    if (!entry || entry.revoked) throw new UnauthorizedError('Invalid API key: it is not recognised.');
    if (entry.expiresAt.getTime() <= this.now().getTime()) {
      throw new UnauthorizedError(`Expired API key: it expired at ${entry.expiresAt.toISOString()}; ask for it to be renewed.`);
    }
    return entry.principal;
  }

  private async lookup(key: string): Promise<KeyEntry | null> {
    const { keys } = this.db.versions.peek() ?? (await this.db.versions.current());
    // Keyed by the presented value, so a repeat caller costs no hashing; the value lives only
    // in this process's memory, like the request that carried it.
    const hit = this.cache.get(key);
    if (hit && hit.keysVersion === keys) return hit.entry;
    const doc = await this.service.findByKey(key);
    const entry = doc ? toEntry(doc) : null;
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.clear();
    this.cache.set(key, { entry, keysVersion: keys });
    return entry;
  }
}

/** What a stored key means for a request, built once per key version (the principal is shared). */
interface KeyEntry {
  readonly principal: ApiKeyPrincipal;
  readonly revoked: boolean;
  readonly expiresAt: Date;
}

function toEntry(doc: ApiKeyDoc): KeyEntry {
  return {
    revoked: doc.revokedAt != null,
    expiresAt: doc.expiresAt,
    principal: Object.freeze({
      id: String(doc._id),
      scopes: new Set(doc.scopes as ApiScope[]),
      rateLimit: doc.rateLimitPoints && doc.rateLimitSeconds ? { points: doc.rateLimitPoints, durationSeconds: doc.rateLimitSeconds } : null,
    }),
  };
}

/** Authenticates the caller by API key; 401 when that fails. */
export function apiKey(authenticator: ApiKeyAuthenticator): AppMiddleware {
  return async (ctx, next) => {
    ctx.state.apiKey = await authenticator.authenticate(ctx.get('X-API-KEY').trim());
    await next();
  };
}

/** 403 unless the authenticated key holds `scope`. */
export function requireScope(scope: ApiScope): AppMiddleware {
  return (ctx, next) => {
    assertScope(ctx.state.apiKey, scope);
    return next();
  };
}

/** Throws 403 naming the missing scope (shared by REST routes and GraphQL root fields). */
export function assertScope(principal: ApiKeyPrincipal | undefined, scope: ApiScope): void {
  if (!principal) throw new UnauthorizedError('Missing API key: send it in the X-API-KEY header.');
  if (!principal.scopes.has(scope)) throw new ForbiddenError(`This API key lacks the ${scope} scope that this endpoint requires.`);
}
