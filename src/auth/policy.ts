import type { AccountRole, ApiScope } from '../data/__generated__/enums.js';
import type { PolicyRole, ScopePolicy } from '../config/scope-policy.js';

/**
 * Every privilege decision of the service, as named rules over the facts read at the moment of
 * use: the account's current role, its second factor, whether it is disabled, the record at
 * hand. Nothing here is frozen when a key, a grant or a webhook is made: a key's scopes are
 * worked out from what it asked for, what its owner's role grants now and what an admin
 * approved, each time its cached entry is built (src/http/api-key.ts forgets entries when the
 * owner's role or factor changes: src/data/platform/versions.ts). The callers (pages, GraphQL, the data
 * API, webhooks, the approval paths) only gather the facts and ask.
 */

/** The roles whose holders manage the school's data and accounts. */
export const STAFF_ROLES = ['ADMIN', 'ROOT'] as const satisfies readonly AccountRole[];
/** The roles only a ROOT may give, take, or act on (disable, delete, reset, decide). */
const ROOT_GUARDED: readonly AccountRole[] = STAFF_ROLES;

/** A staff sign-in older than this (seconds) is asked again before the admin console opens. */
export const FRESH_SIGN_IN_SECONDS = 15 * 60;

/** What the rules read of an account, as it is now. */
export interface AccountStanding {
  readonly id: number;
  readonly role: AccountRole;
  readonly disabled: boolean;
  /** An active second factor is enrolled (a TOTP app). */
  readonly secondFactor: boolean;
  /** At least one passkey that signs in (none flagged as cloned); absent: none. */
  readonly passkey?: boolean;
}

/** The settings the rules read (src/config/index.ts). */
export interface PolicySettings {
  /** Which data-API scopes each role gets at once, and which on approval (KEY_SCOPE_POLICY). */
  readonly scopePolicy: ScopePolicy;
  /**
   * ADMIN_MFA: `required` (production): staff privilege needs a second factor (a TOTP app or a
   * passkey); `passkey`: it needs a passkey (a TOTP code can be relayed by a fake login page).
   */
  readonly staffSecondFactor: StaffSecondFactor;
  /** TEACHER_KEYS_MFA: a TEACHER's keys get what the TEACHER row grants at once only with a second factor. */
  readonly teacherSecondFactor: boolean;
}

/** ADMIN_MFA's values (src/config/index.ts). */
export const STAFF_SECOND_FACTORS = ['required', 'passkey', 'optional'] as const;
export type StaffSecondFactor = (typeof STAFF_SECOND_FACTORS)[number];

/** True for ADMIN and ROOT. */
export function isStaffRole(role: AccountRole): boolean {
  return (STAFF_ROLES as readonly AccountRole[]).includes(role);
}

/**
 * Whether a role's privilege needs a second factor under these settings: staff under
 * ADMIN_MFA=required; a TEACHER (whose keys read every student at once) when TEACHER_KEYS_MFA is on.
 */
export function needsSecondFactor(role: AccountRole, settings: PolicySettings): boolean {
  if (isStaffRole(role)) return settings.staffSecondFactor !== 'optional';
  return role === 'TEACHER' && settings.teacherSecondFactor;
}

/** Whether the only second factor a role's privilege accepts is a passkey (staff under ADMIN_MFA=passkey). */
export function needsPasskey(role: AccountRole, settings: PolicySettings): boolean {
  return isStaffRole(role) && settings.staffSecondFactor === 'passkey';
}

/**
 * Whether the account has enrolled a second factor its role's privilege accepts: a passkey, or a
 * TOTP app unless the role needs a passkey. An enrolled one is asked at every password sign-in
 * (secondStep), so a password alone never reaches what the factor guards.
 */
export function hasAcceptedFactor(account: AccountStanding, settings: PolicySettings): boolean {
  if (account.passkey === true) return true;
  return account.secondFactor && !needsPasskey(account.role, settings);
}

/**
 * What a sign-in by password must add before it ends: the TOTP app's code when one is enrolled,
 * and the account's passkey as another way (or the only one, for a role that needs a second
 * factor and has only passkeys). A passkey is not asked of other accounts after their password: a
 * student who made one on a phone still signs in on a school computer with the password alone.
 */
export function secondStep(account: AccountStanding, settings: PolicySettings): { totp: boolean; passkey: boolean } | null {
  const passkey = account.passkey === true;
  if (account.secondFactor) return { totp: true, passkey };
  return passkey && needsSecondFactor(account.role, settings) ? { totp: false, passkey } : null;
}

/**
 * The row of the scope policy an account's keys are judged by now: its role's, or USER's while
 * the role needs a second factor the account has not enrolled (such a key's scopes then wait for
 * an admin's approval, as a USER's would, instead of being granted on a password alone).
 */
export function keyPolicyRole(owner: AccountStanding, settings: PolicySettings): PolicyRole {
  if (needsSecondFactor(owner.role, settings) && !hasAcceptedFactor(owner, settings)) return 'USER';
  return owner.role;
}

/** What a key asked for and what admins decided on it, as stored. */
export interface KeyScopeRecord {
  /** Every scope the key asked for (an operator's key: the scopes it was given). */
  readonly requested: readonly ApiScope[];
  /** Scopes an admin approved for this key. */
  readonly approved: readonly ApiScope[];
  /** Scopes an admin refused for this key: they stay refused whatever the owner's role becomes. */
  readonly refused: readonly ApiScope[];
}

/** Where each of a key's scopes stands now. */
export interface KeyScopes {
  /** The scopes the key reads with now. */
  readonly effective: readonly ApiScope[];
  /** Asked for, and waiting for an admin under the owner's current role. */
  readonly pending: readonly ApiScope[];
  /** Refused by an admin, or not open to the owner's current role at all. */
  readonly refused: readonly ApiScope[];
}

/**
 * A key's scopes now. An operator's key (no owner) reads what it was given. An owned key reads
 * what it asked for, intersected with what its owner's role grants at once now or an admin
 * approved, less what an admin refused; a disabled owner's key reads nothing. Lowering a role
 * therefore takes its scopes away at once, and raising it back gives what the role grants, never
 * what was asked but neither granted nor approved.
 */
export function keyScopes(key: KeyScopeRecord, owner: AccountStanding | null, settings: PolicySettings): KeyScopes {
  const requested = [...new Set(key.requested)];
  if (owner === null) return { effective: requested, pending: [], refused: [] };
  const row = settings.scopePolicy[keyPolicyRole(owner, settings)];
  const refusedByAdmin = new Set(key.refused);
  const effective: ApiScope[] = [];
  const pending: ApiScope[] = [];
  const refused: ApiScope[] = [];
  for (const scope of requested) {
    if (refusedByAdmin.has(scope)) refused.push(scope);
    else if (owner.disabled) pending.push(scope);
    else if (row.granted.includes(scope) || key.approved.includes(scope)) effective.push(scope);
    else if (row.approval.includes(scope)) pending.push(scope);
    else refused.push(scope);
  }
  return { effective, pending, refused };
}

/**
 * An app's data scopes for its machine tokens (client_credentials) now: the rule of its owner's
 * keys, one policy for both (keyScopes). What the app asked for counts as far as its owner's role
 * grants it now or an admin approved it, never once refused; an operator's app (no owner) reads
 * what it was given; an app whose owner is disabled reads nothing.
 */
export function appScopes(app: KeyScopeRecord, owner: AccountStanding | null, settings: PolicySettings): KeyScopes {
  return keyScopes(app, owner, settings);
}

/**
 * How an account's request for a new key splits under its role now: granted at once, waiting for
 * approval, or not open to the role (refused with 400).
 */
export function splitKeyRequest(
  owner: AccountStanding,
  scopes: readonly ApiScope[],
  settings: PolicySettings,
): { granted: ApiScope[]; pending: ApiScope[]; refused: ApiScope[] } {
  const row = settings.scopePolicy[keyPolicyRole(owner, settings)];
  const unique = [...new Set(scopes)];
  return {
    granted: unique.filter((s) => row.granted.includes(s)),
    pending: unique.filter((s) => row.approval.includes(s)),
    refused: unique.filter((s) => !row.granted.includes(s) && !row.approval.includes(s)),
  };
}

/**
 * Whether a key or a webhook is an operator's: one without an owner account (`campus keys issue`,
 * `campus webhooks create`, each without --owner). Only an operator's is shown which account made
 * a change in the change feed (presentEvent, src/data/events/outbox.ts): an account id is the
 * OAuth `sub`, and with it an app could tie a person to the records they edited.
 */
export function belongsToOperators(holder: { readonly ownerAccountId: number | null }): boolean {
  return holder.ownerAccountId === null;
}

/** What a signed-in person proved at their sign-in (the pages' session, src/surfaces/web/session.ts). */
export interface SignInProof {
  /** The sign-in used a second factor (a TOTP or recovery code, or a passkey). */
  readonly secondFactor: boolean;
  /** The sign-in used a passkey (alone, or after the password); absent: it did not. */
  readonly passkey?: boolean;
  /** When the password (or factor) was last typed, in ms; undefined when unknown. */
  readonly authTime: number | undefined;
}

/**
 * Whether a signed-in person holds staff privilege on our pages and through GraphQL: a staff role
 * and, where the settings ask for it, a sign-in made with a second factor the account still has
 * and the settings accept (under ADMIN_MFA=passkey, only a passkey).
 */
export function holdsStaffPrivilege(account: AccountStanding, proof: SignInProof, settings: PolicySettings): boolean {
  if (!isStaffRole(account.role) || account.disabled) return false;
  if (!needsSecondFactor(account.role, settings)) return true;
  if (proof.passkey === true) return account.passkey === true;
  return proof.secondFactor && account.secondFactor && !needsPasskey(account.role, settings);
}

/**
 * Who may open a page (the route tables declare one per route, src/surfaces/web/routes.ts):
 * - `anyone`: no sign-in needed;
 * - `account`: any signed-in account;
 * - `staff`: an account holding staff privilege (holdsStaffPrivilege);
 * - `staff-fresh`: staff whose sign-in is at most FRESH_SIGN_IN_SECONDS old (the admin console).
 */
export const PAGE_RULES = ['anyone', 'account', 'staff', 'staff-fresh'] as const;
export type PageRule = (typeof PAGE_RULES)[number];

/** Why a page is refused, and what the person can do about it. */
export type PageRefusal =
  /** Not signed in: sign in, then come back. */
  | 'sign-in'
  /** Signed in, but the role is not a staff role: 403. */
  | 'role'
  /** A staff role whose account has no second factor where one is required: set one up (403). */
  | 'second-factor-missing'
  /** A staff account with a factor whose sign-in did not use it: sign in again with it. */
  | 'second-factor-again'
  /** A staff sign-in older than FRESH_SIGN_IN_SECONDS: sign in again. */
  | 'stale';

/** Whether `rule` lets the viewer in (null) or why not. */
export function pageRefusal(
  rule: PageRule,
  viewer: { account: AccountStanding; proof: SignInProof } | undefined,
  settings: PolicySettings,
  now: number,
): PageRefusal | null {
  if (rule === 'anyone') return null;
  if (!viewer) return 'sign-in';
  if (rule === 'account') return null;
  const { account, proof } = viewer;
  if (!isStaffRole(account.role)) return 'role';
  if (!holdsStaffPrivilege(account, proof, settings))
    return hasAcceptedFactor(account, settings) ? 'second-factor-again' : 'second-factor-missing';
  if (rule === 'staff-fresh' && (proof.authTime === undefined || now - proof.authTime > FRESH_SIGN_IN_SECONDS * 1000)) return 'stale';
  return null;
}

/** Who decides an account change: a signed-in person (with the privilege the pages worked out), or the operator's command. */
export type AccountActorStanding = { readonly id: number; readonly role: AccountRole } | 'CLI';

/** What an actor does to an account (the access log's verbs). */
export type AccountAction =
  'change-role' | 'decide-sign-up' | 'disable' | 'enable' | 'delete' | 'reset-password' | 'remove-factor' | 'remove-passkeys';

/** Why an account change is refused. */
export type AccountRefusal = 'own_account' | 'root_only';

/**
 * The one rule of every account change an admin makes (role, a teacher's sign-up, disable,
 * enable, delete, a password reset): nobody acts on their own account (an admin cannot lock
 * themselves out by mistake), and only a ROOT acts on an ADMIN or ROOT account, or gives either
 * role. Checked against the target as it is when the change is written, so an approval decided
 * after a ROOT promoted the account meanwhile is refused too. The operator's command may do all.
 */
export function accountChangeRefusal(
  actor: AccountActorStanding,
  target: { readonly id: number; readonly role: AccountRole },
  giving?: AccountRole,
): AccountRefusal | null {
  if (actor === 'CLI') return null;
  if (target.id === actor.id) return 'own_account';
  const guarded = ROOT_GUARDED.includes(target.role) || (giving !== undefined && ROOT_GUARDED.includes(giving));
  if (guarded && actor.role !== 'ROOT') return 'root_only';
  return null;
}

/** An app as the authorization rules see it. */
export interface AppStanding {
  readonly ownerAccountId: number | null;
  /** `testing`: registered, not yet approved for everyone (src/oauth/apps.ts). */
  readonly state: 'active' | 'testing' | 'disabled';
}

/**
 * Whether an app may sign this account in: a disabled app nobody; an app in testing only its
 * owner, at every authorization (whatever single sign-on or an earlier consent says).
 */
export function appAdmits(app: AppStanding, accountId: number): boolean {
  if (app.state === 'disabled') return false;
  return app.state !== 'testing' || app.ownerAccountId === accountId;
}
