import type { AccountRole, ApiScope } from '../data/__generated__/enums.js';
import { ForbiddenError, UnauthorizedError } from '../errors/index.js';

/**
 * Who is calling, and the one place that decides what they may do. Used by the HTTP middleware
 * (src/http/api-key.ts), the consoles' sign-in (src/surfaces/web/) and every GraphQL field
 * (src/graphql/context.ts).
 */
export type Principal = ApiKeyPrincipal | AccountPrincipal;

/** A data API key: read-only, by scope (docs/decisions.md, "API keys"). */
export interface ApiKeyPrincipal {
  readonly kind: 'apiKey';
  /** The key's record id (rate-limit budgets are kept per key). */
  readonly id: string;
  readonly scopes: ReadonlySet<ApiScope>;
  /** Scopes the key asked for that await an admin's approval (issue 22): refused with their own message. */
  readonly pendingScopes?: ReadonlySet<ApiScope>;
  /** The key's own limit, or null for RATE_LIMIT. */
  readonly rateLimit: { readonly points: number; readonly durationSeconds: number } | null;
  /** The account that holds the key (its keys share RATE_LIMIT_ACCOUNT), or null for an operator's key. */
  readonly ownerAccountId: number | null;
}

/** A person signed in to our own pages (the consoles) through the authorization server. */
export interface AccountPrincipal {
  readonly kind: 'account';
  readonly accountId: number;
  readonly email: string;
  readonly role: AccountRole;
}

/** The roles that manage school data (docs/architecture.md, "Writes and the two consoles"). */
export const STAFF_ROLES: readonly AccountRole[] = ['ADMIN', 'ROOT'];

/**
 * Throws 401 without a principal, 403 naming the scope when it may not read that data. An API
 * key reads what its scopes name; a staff account (ADMIN, ROOT) reads everything; other accounts
 * read no school data through the data API.
 */
export function assertScope(principal: Principal | undefined, scope: ApiScope): void {
  if (holdsScope(principal, scope)) return;
  if (!principal) throw new UnauthorizedError('Missing API key: send it in the X-API-KEY header.');
  if (principal.kind === 'account') throw new ForbiddenError(`Reading ${scope} data needs an ADMIN or ROOT account.`);
  if (principal.pendingScopes?.has(scope))
    throw new ForbiddenError(`This API key's ${scope} scope awaits an administrator's approval; it works for its other scopes meanwhile.`);
  throw new ForbiddenError(`This API key lacks the ${scope} scope that this endpoint requires.`);
}

/** Whether `principal` may read data of `scope`: a staff account, or a key holding the scope. */
export function holdsScope(principal: Principal | undefined, scope: ApiScope): boolean {
  if (!principal) return false;
  return principal.kind === 'account' ? STAFF_ROLES.includes(principal.role) : principal.scopes.has(scope);
}

/** Throws unless the caller is a signed-in account with one of `roles` (API keys never write). */
export function assertRole(principal: Principal | undefined, roles: readonly AccountRole[]): AccountPrincipal {
  if (!principal) throw new UnauthorizedError('Sign in first.');
  if (principal.kind !== 'account') throw new ForbiddenError('API keys are read-only: changes need a signed-in ADMIN or ROOT account.');
  if (!roles.includes(principal.role)) throw new ForbiddenError(`This needs an account with the role ${roles.join(' or ')}.`);
  return principal;
}

/** Throws unless the caller is a signed-in account (any role). */
export function assertAccount(principal: Principal | undefined): AccountPrincipal {
  if (!principal) throw new UnauthorizedError('Sign in first.');
  if (principal.kind !== 'account') throw new ForbiddenError('This needs a signed-in account, not an API key.');
  return principal;
}
