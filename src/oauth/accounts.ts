import type { AccountPrincipal } from '../auth/principal.js';
import { accountChangeRefusal, type AccountAction, type AccountActorStanding, type AccountRefusal } from '../auth/policy.js';
import {
  AccountStore,
  ACCOUNT_ROLES,
  type AccountDoc,
  type AccountRole,
  type AccountSearch,
  type ApprovalState,
  type KnownAccount,
} from '../data/accounts/store.js';
import { deleteKeysOwnedBy } from '../data/keys/store.js';
import { AppStore } from '../data/apps/store.js';
import { AccessAudit, CLI_ACTOR, type AccessActor } from '../data/accounts/access-log.js';
import type { Database } from '../data/database.js';
import { EmailCodeStore } from '../data/accounts/email-codes.js';
import { PasskeyStore } from '../data/accounts/passkeys.js';
import { OAuthStore } from '../data/accounts/oauth-records.js';
import { deleteWebhooksOwnedBy } from '../data/events/webhooks.js';
import { hashPassword, verifyPassword } from './secrets.js';
import { LogoutNotices } from './backchannel-logout.js';
import { BadRequestError, ForbiddenError } from '../errors/index.js';

export { DuplicateAccountError } from '../data/accounts/store.js';

/** An account as `campus accounts list` shows it (never the password hash). */
export interface AccountSummary {
  id: number;
  email: string;
  role: AccountRole;
  isStudent: boolean;
  /** A teacher's sign-up: name, department and where the admin's approval stands (else null). */
  name: string | null;
  department: string | null;
  approval: ApprovalState | null;
  /** When the account was disabled (it cannot sign in; its tokens and keys stop), else null. */
  disabledAt: Date | null;
  createdAt: Date;
}

/** What deleting an account took with it. */
export interface DeletedAccount {
  account: AccountSummary;
  /** Grants, tokens, codes and sessions revoked (the account's, and those of its apps). */
  revoked: number;
  apiKeys: number;
  clients: number;
}

/**
 * Why an admin's change of an account is refused; `changed`: the account changed between the
 * reading the rule was checked against and the write (another admin's change meanwhile).
 */
export type AccountRuleProblem = 'unknown_account' | 'own_role' | 'root_only' | 'not_pending' | 'confirm_admin' | 'own_account' | 'changed';

/** Who decides: a signed-in admin, or the operator at the `campus` command. */
export type AccountActor = AccountPrincipal | 'CLI';

/** The roles whose giving is a confirmed action: making anyone ADMIN or ROOT is a ROOT's confirmed action. */
const CONFIRMED_ROLES: readonly AccountRole[] = ['ADMIN', 'ROOT'];

/** An admin's change the rules refuse (403); `problem` names the rule. */
export class AccountRuleError extends ForbiddenError {
  constructor(
    message: string,
    readonly problem: AccountRuleProblem,
  ) {
    super(message);
  }
}

/** An account request the rules refuse; the message says which rule. */
export class AccountValidationError extends BadRequestError {}

/** The longest email address there is (RFC 5321's path limit less its brackets). */
export const MAX_EMAIL_LENGTH = 254;
// Backtracks polynomially on long input: only ever run on at most MAX_EMAIL_LENGTH characters.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MIN_PASSWORD = 8;
const MAX_PASSWORD = 1024;

/** Creates, lists and deletes accounts and checks logins; passwords are hashed with argon2id. */
export class AccountService {
  private readonly store: AccountStore;
  private dummyHash: Promise<string> | undefined;

  constructor(private readonly db: Database) {
    this.store = new AccountStore(db);
  }

  async create(input: { email: string; password: string; role?: AccountRole }): Promise<AccountSummary> {
    const email = checkEmail(input.email);
    checkPassword(input.password);
    const role = checkRole(input.role ?? 'USER');
    const doc = await this.store.create({ email, passwordHash: await hashPassword(input.password), role });
    return this.summarize(doc);
  }

  /** Creates the account or resets its password and role (idempotent; used by the demo seed). */
  async ensure(input: { email: string; password: string; role: AccountRole }): Promise<AccountSummary> {
    const existing = await this.store.findByEmail(input.email);
    if (!existing) return this.create(input);
    if (!(await verifyPassword(existing.passwordHash, input.password))) {
      await this.store.updatePassword(existing._id, await hashPassword(input.password));
    }
    if (existing.role !== input.role) await this.store.updateRole(existing._id, existing.role, input.role);
    return this.summarize({ ...existing, role: input.role });
  }

  async list(): Promise<AccountSummary[]> {
    return Promise.all((await this.store.list()).map((doc) => this.summarize(doc)));
  }

  async findById(id: number): Promise<AccountDoc | null> {
    return Number.isSafeInteger(id) && id > 0 ? this.store.findById(id) : null;
  }

  /** The account as the sign-in path reads it, remembered until a change names it (src/data/accounts/store.ts, known). */
  async known(id: number): Promise<KnownAccount | null> {
    return Number.isSafeInteger(id) && id > 0 ? this.store.known(id) : null;
  }

  /**
   * Deletes an account (by id or email) with everything that is its own: its API keys (and their
   * usage), its webhooks (and their deliveries), the apps it registered (and every grant and token
   * of those apps, whoever gave them), its grants, tokens and sessions, its email codes and its passkeys. The account goes last, so an
   * interrupted deletion can simply be run again.
   */
  async delete(idOrEmail: string, actor: AccessActor = CLI_ACTOR): Promise<DeletedAccount> {
    const doc = /^\d+$/.test(idOrEmail) ? await this.store.findById(Number(idOrEmail)) : await this.store.findByEmail(idOrEmail);
    if (!doc) throw new AccountValidationError(`No account ${idOrEmail}.`);
    const account = await this.summarize(doc);
    const oauth = new OAuthStore(this.db);
    const clients = new AppStore(this.db);
    const apiKeys = await deleteKeysOwnedBy(this.db, doc._id);
    const webhooks = await deleteWebhooksOwnedBy(this.db, doc._id);
    const owned = await clients.listOwnedBy(doc._id);
    let revoked = 0;
    for (const client of owned) {
      await clients.delete(client._id);
      revoked += await oauth.revokeAllOf({ clientId: client._id });
    }
    revoked += await oauth.revokeAllOf({ accountId: String(doc._id) });
    await new EmailCodeStore(this.db).deleteFor(doc.email);
    await new PasskeyStore(this.db).removeAll(doc._id);
    await this.store.delete(doc._id);
    // A sign-in that completed while the above ran holds a grant of an account that no longer exists.
    revoked += await oauth.revokeAllOf({ accountId: String(doc._id) });
    // Who deleted it (the operator, an admin, or the person themselves) is in the access log.
    await new AccessAudit(this.db).record(actor, {
      action: 'ACCOUNT_DELETED',
      target: { kind: 'ACCOUNT', id: String(doc._id), label: doc.email },
      detail: { role: doc.role, revoked, apiKeys, clients: owned.length, webhooks },
    });
    return { account, revoked, apiKeys, clients: owned.length };
  }

  /**
   * An admin (or the operator) deletes an account from the admin console: the rule of every
   * account change (src/auth/policy.ts: not one's own; ADMIN and ROOT accounts only by a ROOT),
   * then `delete`.
   */
  async deleteAs(actor: AccountActor, id: number): Promise<DeletedAccount> {
    const doc = await this.mustFind(id);
    checkAccountChange(actor, doc, 'delete');
    return this.delete(String(doc._id), accessActor(actor));
  }

  /**
   * Disables (or re-enables) an account. Disabled, it cannot sign in (the login page says so and
   * whom to ask), its login sessions end, the access tokens of its grants stop at userinfo and its
   * refresh tokens at the token endpoint (the provider no longer finds the account), and its API
   * keys stop at the data API; all at once, in every process (the `oauth` and `keys` versions move:
   * src/data/platform/versions.ts, version-bus.ts). Nothing is deleted, so re-enabled, its tokens
   * and keys work again. Not one's own account; an ADMIN's or ROOT's only by a ROOT
   * (src/auth/policy.ts), its role as read still its role when written. In the access log.
   */
  async setDisabled(
    actor: AccountActor,
    idOrEmail: number | string,
    disabled: boolean,
  ): Promise<{ account: AccountSummary; changed: boolean }> {
    const doc = typeof idOrEmail === 'number' ? await this.mustFind(idOrEmail) : await this.store.findByEmail(idOrEmail);
    if (!doc) throw new AccountRuleError(`No account ${idOrEmail}.`, 'unknown_account');
    const action = disabled ? 'disable' : 'enable';
    checkAccountChange(actor, doc, action);
    const at = new Date();
    const state = disabled ? { at, by: actor === 'CLI' ? null : actor.accountId } : null;
    const changed = await this.store.setDisabled(doc._id, state, doc.role);
    // Nothing written: it already was so, unless its role moved since it was read.
    if (!changed && (await this.store.findById(doc._id))?.role !== doc.role) throw await this.missedWrite(actor, doc._id, action);
    // Its keys read its standing (src/http/api-key.ts): a repeat tells every process again, so a
    // change whose news was lost (a crash between the write and the announcement) is mended.
    if (!changed) await this.db.versions.bumpAccount(doc._id);
    // Its apps are told (back-channel logout) before its sign-ins end, while they still name them.
    if (disabled && changed) await new LogoutNotices(this.db).accessEnded(doc._id, 'account_disabled');
    if (disabled) await new OAuthStore(this.db).revokeKindOf('Session', String(doc._id));
    if (changed) {
      await new AccessAudit(this.db).record(accessActor(actor), {
        action: disabled ? 'ACCOUNT_DISABLED' : 'ACCOUNT_ENABLED',
        target: { kind: 'ACCOUNT', id: String(doc._id), label: doc.email },
      });
    }
    const disabledAt = disabled ? (changed ? at : (doc.disabledAt ?? at)) : null;
    return { account: await this.summarize({ ...doc, disabledAt }), changed };
  }

  /** The admin console's accounts list. */
  async search(search: AccountSearch): Promise<{ accounts: AccountSummary[]; total: number }> {
    const found = await this.store.search(search);
    return { accounts: await Promise.all(found.accounts.map((doc) => this.summarize(doc))), total: found.total };
  }

  /**
   * An admin changes an account's role. Nobody changes their own role (an admin cannot lock
   * themselves out by mistake); only a ROOT gives or takes ADMIN and ROOT (src/auth/policy.ts,
   * checked against the role as read, which the write requires to be still the account's), and
   * giving either is confirmed (`confirmed`: the console's tick). Each change is in the access log.
   */
  async changeRole(
    actor: AccountPrincipal,
    id: number,
    role: AccountRole,
    options: { confirmed?: boolean } = {},
  ): Promise<{ before: AccountSummary; after: AccountSummary }> {
    const doc = await this.mustFind(id);
    const target = checkRole(role);
    checkAccountChange(actor, doc, 'change-role', target);
    if (target === doc.role) return { before: await this.summarize(doc), after: await this.summarize(doc) };
    if (CONFIRMED_ROLES.includes(target) && options.confirmed !== true)
      throw new AccountRuleError(`Giving ${target} is a confirmed action: confirm it to go on.`, 'confirm_admin');
    if (!(await this.store.updateRole(doc._id, doc.role, target))) throw await this.missedWrite(actor, doc._id, 'change-role', target);
    await new AccessAudit(this.db).record(accessActor(actor), {
      action: 'ROLE_CHANGED',
      target: { kind: 'ACCOUNT', id: String(doc._id), label: doc.email },
      detail: { from: doc.role, to: target },
    });
    return { before: await this.summarize(doc), after: await this.summarize({ ...doc, role: target }) };
  }

  /**
   * An admin (or the operator) decides a teacher's sign-up: approval makes the account TEACHER
   * (docs/decisions.md, "A teacher is not an administrator"), rejection leaves its role as it is.
   * Only a PENDING sign-up is decided, by the rule of every account change (src/auth/policy.ts): an
   * account a ROOT made ADMIN meanwhile is a ROOT's to decide, and the write requires the role the
   * rule saw, so an approval racing that promotion is refused instead of demoting the ADMIN. The
   * decision is in the access log.
   */
  async decideTeacher(actor: AccountActor, idOrEmail: number | string, approve: boolean): Promise<AccountSummary> {
    const doc = typeof idOrEmail === 'number' ? await this.mustFind(idOrEmail) : await this.store.findByEmail(idOrEmail);
    if (!doc) throw new AccountRuleError(`No account ${idOrEmail}.`, 'unknown_account');
    const role: AccountRole = approve ? 'TEACHER' : doc.role;
    checkAccountChange(actor, doc, 'decide-sign-up', approve ? role : undefined);
    if (doc.approval !== 'PENDING') throw notPending(doc);
    const approval = approve ? 'APPROVED' : 'REJECTED';
    if (!(await this.store.decideApproval(doc._id, doc.role, { approval, role, by: actor === 'CLI' ? null : actor.accountId })))
      throw await this.missedWrite(actor, doc._id, 'decide-sign-up', approve ? role : undefined);
    await new AccessAudit(this.db).record(accessActor(actor), {
      action: approve ? 'TEACHER_APPROVED' : 'TEACHER_REFUSED',
      target: { kind: 'ACCOUNT', id: String(doc._id), label: doc.email },
      detail: { name: doc.name ?? null, department: doc.department ?? null, from: doc.role, to: role },
    });
    return this.summarize({ ...doc, role, approval });
  }

  /**
   * Why a write conditional on the account as read matched nothing, read again: it is gone, it is
   * no longer a PENDING sign-up, the rule refuses it as it is now (a ROOT made it ADMIN meanwhile),
   * or it changed otherwise meanwhile.
   */
  private async missedWrite(actor: AccountActor, id: number, action: AccountAction, giving?: AccountRole): Promise<AccountRuleError> {
    const now = await this.store.findById(id);
    if (!now) return new AccountRuleError(`No account ${id}.`, 'unknown_account');
    const refusal = accountChangeRefusal(actorStanding(actor), { id: now._id, role: now.role }, giving);
    if (refusal) return refusalError(refusal, action);
    if (action === 'decide-sign-up' && now.approval !== 'PENDING') return notPending(now);
    return new AccountRuleError(`Account ${now.email} changed meanwhile; look at it again.`, 'changed');
  }

  private async mustFind(id: number): Promise<AccountDoc> {
    const doc = await this.findById(id);
    if (!doc) throw new AccountRuleError(`No account ${id}.`, 'unknown_account');
    return doc;
  }

  /**
   * The account whose password this is, or null. An unknown email costs the same hash
   * verification as a wrong password, so neither the answer nor its timing tells them apart.
   */
  async verifyLogin(email: string, password: string): Promise<AccountDoc | null> {
    // Remembered until a change names the account (src/data/accounts/store.ts, known): a sign-in reads no account.
    const account = isEmail(email.trim()) ? ((await this.store.knownByEmail(email))?.doc ?? null) : null;
    const hash = account?.passwordHash ?? (await this.unknownAccountHash());
    const ok = await verifyPassword(hash, password);
    return ok && account ? account : null;
  }

  private unknownAccountHash(): Promise<string> {
    this.dummyHash ??= hashPassword(`no-such-account-${Math.random()}`);
    return this.dummyHash;
  }

  /** An account as the lists and the JSON endpoints show it. */
  async summarize(doc: AccountDoc): Promise<AccountSummary> {
    const student = await this.store.findStudent(doc.email);
    return {
      id: doc._id,
      email: doc.email,
      role: doc.role,
      isStudent: student !== null,
      name: doc.name ?? null,
      department: doc.department ?? null,
      approval: doc.approval ?? null,
      disabledAt: doc.disabledAt ?? null,
      createdAt: doc.createdAt,
    };
  }
}

/** How the refusals name each account change. */
const ACTION_WORDS: Record<AccountAction, string> = {
  'change-role': 'change the role of',
  'decide-sign-up': 'decide the sign-up of',
  disable: 'disable',
  enable: 'enable',
  delete: 'delete',
  'reset-password': 'send a password reset to',
  'remove-factor': 'remove the second factor of',
  'remove-passkeys': 'remove the passkeys of',
};

/** The rule's judgement on an actor, from the pages' principal or the operator's command. */
export function actorStanding(actor: AccountActor): AccountActorStanding {
  return actor === 'CLI' ? 'CLI' : { id: actor.accountId, role: actor.role };
}

/**
 * Throws when the rule of every account change (src/auth/policy.ts, accountChangeRefusal) refuses
 * `actor` doing `action` to the account as read (`giving`: the role the change gives).
 */
export function checkAccountChange(actor: AccountActor, doc: AccountDoc, action: AccountAction, giving?: AccountRole): void {
  const refusal = accountChangeRefusal(actorStanding(actor), { id: doc._id, role: doc.role }, giving);
  if (refusal) throw refusalError(refusal, action);
}

/**
 * The one place a refusal of the rule becomes the error the pages and the command show: its
 * problem code (the pages word it, src/surfaces/web/texts/ko.ts `admin.accounts.problems`) and a
 * sentence naming the action. One's own role or sign-up is `own_role`, the rest of one's own
 * account `own_account`.
 */
function refusalError(refusal: AccountRefusal, action: AccountAction): AccountRuleError {
  const words = ACTION_WORDS[action];
  if (refusal === 'own_account')
    return new AccountRuleError(
      `You cannot ${words} your own account.`,
      action === 'change-role' || action === 'decide-sign-up' ? 'own_role' : 'own_account',
    );
  return new AccountRuleError(`Only a ROOT account may ${words} an ADMIN or ROOT account, or give either role.`, 'root_only');
}

function notPending(doc: AccountDoc): AccountRuleError {
  return new AccountRuleError(`Account ${doc.email} is not waiting for approval.`, 'not_pending');
}

/** The access log's actor for an account's action or the command's. */
export function accessActor(actor: AccountActor): AccessActor {
  return actor === 'CLI' ? CLI_ACTOR : { kind: 'ACCOUNT', id: actor.accountId, email: actor.email };
}

/** The length is checked before the pattern runs, so no input can make the pattern slow. */
export function isEmail(value: string): boolean {
  return value.length <= MAX_EMAIL_LENGTH && EMAIL.test(value);
}

function checkEmail(email: string): string {
  const trimmed = email.trim().toLowerCase();
  if (trimmed.length > MAX_EMAIL_LENGTH) throw new AccountValidationError(`--email is longer than ${MAX_EMAIL_LENGTH} characters.`);
  if (!isEmail(trimmed)) throw new AccountValidationError(`--email ${email} is not an email address.`);
  return trimmed;
}

function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD) {
    throw new AccountValidationError(`--password must be ${MIN_PASSWORD} to ${MAX_PASSWORD} characters.`);
  }
}

function checkRole(role: string): AccountRole {
  if (!(ACCOUNT_ROLES as readonly string[]).includes(role))
    throw new AccountValidationError(`--role must be one of ${ACCOUNT_ROLES.join(', ')}.`);
  return role as AccountRole;
}
