import { LRUCache } from 'lru-cache';
import { assertAnyScope, type ApiKeyPrincipal } from '../auth/principal.js';
import type { ApiScope } from '../data/__generated__/enums.js';
import { keyScopes, type AccountStanding, type PolicySettings } from '../auth/policy.js';
import { ApiKeyService, keyScopeRecord, UUID_PATTERN, type KeyMatch } from '../data/keys/store.js';
import type { Database } from '../data/database.js';
import { findStanding } from '../data/accounts/standing.js';
import { cacheTarget, type TargetedCache } from '../data/platform/versions.js';
import { UnauthorizedError } from '../errors/index.js';
import type { AppContext, AppMiddleware } from './context.js';
import type { FailureLimiter } from './rate-limit.js';
import { statusOf, type UsageRecorder } from './usage.js';

/** Keys found in the database (valid, expired or revoked) remembered per process. */
const MAX_KNOWN_KEYS = 10000;
/** Values no key has, remembered apart so that a stream of random values cannot push known keys out. */
const MAX_UNKNOWN_KEYS = 10000;

/**
 * Resolves the X-API-KEY header to a principal. Lookups are cached per key and dropped when a
 * change of keys names the key or its owner (src/data/platform/versions.ts), so an issue, renewal,
 * rotation or revocation made anywhere (another instance, the CLI) takes effect at once where
 * Redis carries the news, within a second elsewhere, and leaves every other key's entry in
 * place. Found keys and unknown values live in two least-recently-used caches of their own; any
 * change of keys drops the unknown values (a value issued now may have been presented before).
 */
export class ApiKeyAuthenticator implements TargetedCache {
  private readonly known = new LRUCache<string, { entry: KeyEntry; generation: number }>({ max: MAX_KNOWN_KEYS });
  /** The keys generation at which the value was found to be no key. */
  private readonly unknown = new LRUCache<string, number>({ max: MAX_UNKNOWN_KEYS });
  private readonly service: ApiKeyService;

  constructor(
    private readonly db: Database,
    private readonly settings: PolicySettings,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.service = new ApiKeyService(db, settings);
    db.versions.watch('keys', this);
  }

  /** Forgets the keys a change names, by id or owner, and every value remembered as no key. */
  forgetTargets(targets: ReadonlySet<string>): void {
    const gone: string[] = [];
    for (const [value, { entry }] of this.known.entries()) if (entry.targets.some((target) => targets.has(target))) gone.push(value);
    for (const value of gone) this.known.delete(value);
    this.unknown.clear();
  }

  /**
   * Returns the principal, or throws 401 with the reason the DECISIONS allow to tell. A value
   * remembered at the current keys generation is answered at once, without a promise
   * (docs/benchmarks.md, "A warm answer's fixed cost"); anything else is looked up.
   */
  authenticate(header: string): ApiKeyPrincipal | Promise<ApiKeyPrincipal> {
    if (!header) throw new UnauthorizedError('Missing API key: send it in the X-API-KEY header.');
    if (!UUID_PATTERN.test(header)) throw new UnauthorizedError('Malformed API key: X-API-KEY must be a UUID.');
    const generation = this.db.versions.peekGeneration('keys');
    const remembered = generation === undefined ? undefined : this.remembered(header, generation);
    if (remembered !== undefined) return this.principalOf(remembered);
    return this.lookup(header).then((entry) => this.principalOf(entry));
  }

  /** The principal of a key's entry (null: no key), or the 401 that says why there is none. */
  private principalOf(entry: KeyEntry | null): ApiKeyPrincipal {
    const now = this.now().getTime();
    // Unknown and revoked keys read the same, so a caller cannot probe which keys once existed;
    // a value replaced by a rotation is revoked once its grace period is over.
    if (!entry || entry.revoked || (entry.graceEndsAt && entry.graceEndsAt.getTime() <= now)) {
      throw new UnauthorizedError('Invalid API key: it is not recognised.');
    }
    if (entry.ownerDisabled) {
      throw new UnauthorizedError("Disabled API key: the account that holds it is disabled; ask the school's administrators.");
    }
    if (entry.expiresAt.getTime() <= now) {
      throw new UnauthorizedError(`Expired API key: it expired at ${entry.expiresAt.toISOString()}; ask for it to be renewed.`);
    }
    return entry.principal;
  }

  /** What this process remembers of a value at keys generation `generation`: an entry, null (no key), or undefined. */
  private remembered(key: string, generation: number): KeyEntry | null | undefined {
    const hit = this.known.get(key);
    if (hit && hit.generation === generation) return hit.entry;
    return this.unknown.get(key) === generation ? null : undefined;
  }

  private async lookup(key: string): Promise<KeyEntry | null> {
    const versions = this.db.versions;
    const generation = await versions.generation('keys');
    // Keyed by the presented value, so a repeat caller costs no hashing; the value lives only
    // in this process's memory, like the request that carried it.
    const remembered = this.remembered(key, generation);
    if (remembered !== undefined) return remembered;
    const changes = versions.changesOf('keys');
    const match = await this.service.match(key);
    // What the key reads rests on its owner's standing now (role, second factor): read with it,
    // and forgotten with it when a change names the account (src/data/accounts/standing.ts).
    const ownerId = match?.doc.ownerAccountId ?? null;
    const owner = ownerId === null ? null : await findStanding(this.db, ownerId);
    // A change heard of during the read may postdate what it found: used, not remembered.
    const settled = versions.changesOf('keys') === changes;
    this.known.delete(key);
    this.unknown.delete(key);
    if (!match) {
      if (settled) this.unknown.set(key, generation);
      return null;
    }
    const entry = toEntry(match, ownerId === null ? null : (owner ?? goneOwner(ownerId)), this.settings);
    if (settled) this.known.set(key, { entry, generation });
    return entry;
  }
}

/** What a stored key means for a request, built once per key version (the principal is shared). */
interface KeyEntry {
  readonly principal: ApiKeyPrincipal;
  /** What the entry rests on (cacheTarget): the key, and its owner's account. */
  readonly targets: readonly string[];
  readonly revoked: boolean;
  /** The owner's account is disabled. */
  readonly ownerDisabled: boolean;
  readonly expiresAt: Date;
  /** For a value a rotation replaced: when its grace period ends. */
  readonly graceEndsAt: Date | null;
}

/** An owned key whose account is gone reads nothing, as a disabled one. */
function goneOwner(id: number): AccountStanding {
  return { id, role: 'USER', disabled: true, secondFactor: false };
}

function toEntry({ doc, previous }: KeyMatch, owner: AccountStanding | null, settings: PolicySettings): KeyEntry {
  const scopes = keyScopes(keyScopeRecord(doc), owner, settings);
  return {
    targets: [cacheTarget.key(String(doc._id)), ...(doc.ownerAccountId != null ? [cacheTarget.account(doc.ownerAccountId)] : [])],
    // A replaced value without a grace period (or one from before a later rotation) is revoked.
    revoked: doc.revokedAt != null || (previous && !doc.previousExpiresAt),
    ownerDisabled: owner?.disabled === true,
    expiresAt: doc.expiresAt,
    graceEndsAt: previous ? (doc.previousExpiresAt ?? null) : null,
    principal: Object.freeze({
      kind: 'apiKey' as const,
      id: String(doc._id),
      scopes: new Set<ApiScope>(scopes.effective),
      pendingScopes: new Set<ApiScope>(scopes.pending),
      rateLimit:
        doc.rateLimitPoints && doc.rateLimitSeconds ? { points: doc.rateLimitPoints, durationSeconds: doc.rateLimitSeconds } : null,
      ownerAccountId: doc.ownerAccountId ?? null,
    }),
  };
}

/**
 * Who a data request is: its credentials read into a principal, or a 401 (or a 400) saying why;
 * synchronous when the answer is remembered. The API key of X-API-KEY (ApiKeyAuthenticator), or
 * that or an app's machine token (src/http/bearer.ts).
 */
export type CredentialReader = (ctx: AppContext) => ApiKeyPrincipal | Promise<ApiKeyPrincipal>;

/**
 * Authenticates the caller by API key (or what `credentials` reads); 401 when that fails. Only failures are limited: each
 * counts against the client address (`failures`), and an address out of failures has its
 * further failing requests answered 429 instead of 401, while a valid, active key is served
 * whatever its address has sent (hundreds of students share a school's public address; one
 * of them sending expired or mistyped keys must not shut out the rest). A failing lookup is
 * cheap: unknown values are remembered per process (ApiKeyAuthenticator).
 *
 * Every answer to an authenticated key is counted for its usage (`usage`, src/http/usage.ts; the
 * rate limit comes after, so its 429s count too), errors with the status their rendering will
 * give them. One step for the two: every async step is a fixed cost of a warm answer
 * (docs/benchmarks.md, "A warm answer's fixed cost").
 */
export function apiKey(
  credentials: ApiKeyAuthenticator | CredentialReader,
  options: { failures?: FailureLimiter; usage?: UsageRecorder } = {},
): AppMiddleware {
  const { failures, usage } = options;
  const read: CredentialReader =
    credentials instanceof ApiKeyAuthenticator ? (ctx) => credentials.authenticate(ctx.get('X-API-KEY').trim()) : credentials;
  return async (ctx, next) => {
    let principal: ApiKeyPrincipal;
    try {
      const found = read(ctx);
      principal = found instanceof Promise ? await found : found;
    } catch (err) {
      if (err instanceof UnauthorizedError && failures) {
        await failures.assertAllowed(ctx.ip);
        await failures.recordFailure(ctx.ip);
      }
      throw err;
    }
    ctx.state.apiKey = principal;
    if (!usage) return next();
    try {
      await next();
    } catch (err) {
      usage.record(principal.id, statusOf(err));
      throw err;
    }
    usage.record(principal.id, ctx.status);
  };
}

/** 403 unless the authenticated key holds `scope` (or, with several, any one of them: the change feed shows what each allows). */
export function requireScope(scope: ApiScope, ...others: ApiScope[]): AppMiddleware {
  return (ctx, next) => {
    assertAnyScope(ctx.state.apiKey, [scope, ...others]);
    return next();
  };
}
