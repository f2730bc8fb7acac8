import type { AccountRole, ApiScope } from '../data/__generated__/enums.js';
import { ForbiddenError, UnauthorizedError } from '../errors/index.js';
import { holdsStaffPrivilege, isStaffRole, STAFF_ROLES, type AccountStanding, type PolicySettings, type SignInProof } from './policy.js';

/**
 * Who is calling, and the one place that decides what they may do. Used by the HTTP middleware
 * (src/http/api-key.ts), the consoles' sign-in (src/surfaces/web/) and every GraphQL field
 * (src/graphql/context.ts).
 */
export type Principal = ApiKeyPrincipal | AccountPrincipal;

/**
 * A data API key: read-only, by scope (docs/decisions.md, "API keys"). An app's machine token
 * (client_credentials, src/oauth/machine-tokens.ts) reads exactly as a key with its scopes would,
 * so it is this principal too, with `machineApp` set.
 */
export interface ApiKeyPrincipal {
  readonly kind: 'apiKey';
  /** The key's record id, or `app:<client id>` for a machine token (rate-limit budgets and usage are kept per key and per app). */
  readonly id: string;
  /** The app (client id) of a machine token; absent for an API key. */
  readonly machineApp?: string;
  readonly scopes: ReadonlySet<ApiScope>;
  /** Scopes the key asked for that await an admin's approval: refused with their own message. */
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
  /** The account as the privilege rules read it, as it was when this request began. */
  readonly standing: AccountStanding;
  /**
   * Staff privilege on this request (src/auth/policy.ts, holdsStaffPrivilege): a staff role, and
   * a sign-in with a second factor where one is required. Reading school data and every staff
   * rule of GraphQL and the pages rest on it, not on the role alone.
   */
  readonly staff: boolean;
}

/**
 * The principal of a person signed in to our pages: their account as it is now, and the staff
 * privilege this sign-in holds (src/auth/policy.ts, holdsStaffPrivilege).
 */
export function accountPrincipal(standing: AccountStanding, email: string, proof: SignInProof, settings: PolicySettings): AccountPrincipal {
  return {
    kind: 'account',
    accountId: standing.id,
    email,
    role: standing.role,
    standing,
    staff: holdsStaffPrivilege(standing, proof, settings),
  };
}

/**
 * Throws 401 without a principal, 403 naming the scope when it may not read that data. An API
 * key reads what its scopes name; an account holding staff privilege reads everything; other
 * accounts read no school data through the data API.
 */
export function assertScope(principal: Principal | undefined, scope: ApiScope): void {
  if (holdsScope(principal, scope)) return;
  if (!principal) throw new UnauthorizedError('Missing API key: send it in the X-API-KEY header.');
  if (principal.kind === 'account')
    throw new ForbiddenError(`Reading ${scope} data needs staff privilege: an ADMIN or ROOT account signed in with its second factor.`);
  const holder = principal.machineApp === undefined ? 'This API key' : 'This app';
  if (principal.pendingScopes?.has(scope))
    throw new ForbiddenError(`${holder}'s ${scope} scope awaits an administrator's approval; it works for its other scopes meanwhile.`);
  throw new ForbiddenError(`${holder} lacks the ${scope} scope that this endpoint requires.`);
}

/** Whether `principal` may read data of `scope`: an account with staff privilege, or a key holding the scope. */
export function holdsScope(principal: Principal | undefined, scope: ApiScope): boolean {
  if (!principal) return false;
  return principal.kind === 'account' ? principal.staff : principal.scopes.has(scope);
}

/**
 * Throws unless the caller holds staff privilege: a signed-in account (API keys never write) with
 * a staff role and, where the settings want one, a sign-in made with its second factor.
 */
export function assertStaff(principal: Principal | undefined): AccountPrincipal {
  if (!principal) throw new UnauthorizedError('Sign in first.');
  if (principal.kind !== 'account') throw new ForbiddenError('API keys are read-only: changes need a signed-in ADMIN or ROOT account.');
  if (!isStaffRole(principal.role)) throw new ForbiddenError(`This needs an account with the role ${STAFF_ROLES.join(' or ')}.`);
  if (!principal.staff)
    throw new ForbiddenError('This needs staff privilege: sign in with your second factor (set one up in /console/account).');
  return principal;
}

/** Throws 401/403 unless the caller holds at least one of `scopes` (one scope: the message names it). */
export function assertAnyScope(principal: Principal | undefined, scopes: readonly [ApiScope, ...ApiScope[]], what = 'endpoint'): void {
  const [first, ...others] = scopes;
  if (others.length === 0 || !principal) return assertScope(principal, first);
  if (scopes.some((scope) => holdsScope(principal, scope))) return;
  const holder = principal.kind === 'apiKey' && principal.machineApp !== undefined ? 'This app' : 'This API key';
  throw new ForbiddenError(`${holder} holds none of the scopes this ${what} takes (any of ${scopes.join(', ')}).`);
}
