import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Config } from '../config/index.js';
import { AccountStore, DuplicateAccountError, type AccountDoc } from '../data/accounts/store.js';
import type { Database } from '../data/database.js';
import type { EmailCodePurpose } from '../data/accounts/email-codes.js';
import type { LogoutCause } from '../data/events/logout-notices.js';
import { LogoutNotices } from './backchannel-logout.js';
import { OAuthStore } from '../data/accounts/oauth-records.js';
import type { ErrorCode } from '../errors/index.js';
import { OAuthError } from '../http/errors.js';
import type { Logger } from '../logger.js';
import { AccessAudit } from '../data/accounts/access-log.js';
import {
  AccountRuleError,
  AccountService,
  MAX_EMAIL_LENGTH,
  accessActor,
  checkAccountChange,
  isEmail,
  type AccountActor,
  type AccountSummary,
  type DeletedAccount,
} from './accounts.js';
import { ACCOUNT_PATHS } from './constants.js';
import { CODE_LIFETIME_SECONDS, CodeBudgetSpent, type EmailCodes } from './email-codes.js';
import { adminResetMail, alreadyRegisteredMail, resetMail, signInCodeMail, teacherWaitingMail, verificationMail } from './mail-texts.js';
import type { Mailer } from './mail.js';
import { PASSWORD_PROBLEM_MESSAGES, passwordProblem, type PasswordProblem } from './password-policy.js';
import { HashGate, HashGateBusy } from './hash-gate.js';
import { hashPassword, verifyPassword } from './secrets.js';

/** Why a self-service request is refused: the `error` of the JSON endpoints, and what the pages word. */
export type SelfServiceProblem =
  | 'invalid_request'
  | 'invalid_email'
  | 'email_subaddress_not_allowed'
  | 'email_domain_not_allowed'
  | 'invalid_teacher'
  | PasswordProblem
  | 'invalid_code'
  | 'account_exists'
  | 'wrong_password'
  | 'too_many_requests'
  | 'temporarily_unavailable';

/** A refused self-service request: `{error, error_description}` with its status (and Retry-After when limited). */
export class SelfServiceError extends OAuthError {
  constructor(
    code: ErrorCode,
    readonly problem: SelfServiceProblem,
    description: string,
    headers: Record<string, string> = {},
    /** The field of the pages' forms the problem belongs to. */
    readonly field?: 'email' | 'password' | 'code' | 'name' | 'department' | 'currentPassword',
  ) {
    super(code, problem, description, headers);
  }

  get retryAfterSeconds(): number | undefined {
    const value = this.headers['Retry-After'];
    return value === undefined ? undefined : Number(value);
  }
}

/** Characters of a teacher's name and of their department. */
export const MAX_TEACHER_FIELD = 50;
/** Wrong passwords allowed when confirming a change (password change, account deletion), per account. */
const CONFIRM_LIMIT = { points: 5, durationSeconds: 15 * 60 };
/**
 * New-password hashes of the self-service at once per process, how many may wait and for how
 * long (src/oauth/hash-gate.ts): logins keep the rest of libuv's thread pool.
 */
export const SELF_SERVICE_HASHING = { concurrency: 1, queue: 32, maxWaitMs: 5000 } as const;

export interface SelfServiceDeps {
  readonly db: Database;
  readonly config: Config;
  readonly logger: Logger;
  readonly mailer: Mailer;
  readonly codes: EmailCodes;
  readonly redis?: Redis | undefined;
  /** The bound on new-password hashes (one per process; tests may pass their own). */
  readonly hashGate?: HashGate;
}

/** The sign-up of a teacher: it waits for an admin's approval (src/oauth/accounts.ts, decideTeacher). */
export interface TeacherInput {
  name: string;
  department: string;
}

/**
 * Accounts people run themselves (docs/decisions.md, "Accounts and login"): sign-up with a code
 * mailed to a school address, password reset, password change, signing out everywhere, and
 * deleting the account. The JSON endpoints and the pages both call these; every rule is here.
 */
export class SelfService {
  private readonly accounts: AccountService;
  private readonly store: AccountStore;
  private readonly oauth: OAuthStore;
  private readonly confirmations: RateLimiterAbstract;
  private readonly hashGate: HashGate;

  constructor(private readonly deps: SelfServiceDeps) {
    this.accounts = new AccountService(deps.db);
    this.store = new AccountStore(deps.db);
    this.oauth = new OAuthStore(deps.db);
    this.hashGate = deps.hashGate ?? new HashGate(SELF_SERVICE_HASHING);
    const options = { keyPrefix: 'campus:confirm-password', points: CONFIRM_LIMIT.points, duration: CONFIRM_LIMIT.durationSeconds };
    this.confirmations = deps.redis
      ? new RateLimiterRedis({
          ...options,
          storeClient: deps.redis,
          rejectIfRedisNotReady: true,
          insuranceLimiter: new RateLimiterMemory(options),
        })
      : new RateLimiterMemory(options);
  }

  /**
   * POST /v1/accounts/email-verifications: mails a sign-up code to a school address. An address
   * that already has an account gets a mail saying so (with the reset link) instead, and the
   * answer is the same, so the endpoint does not tell who has an account.
   */
  async requestSignupCode(rawEmail: unknown, address: string): Promise<{ email: string; expiresInSeconds: number }> {
    const email = this.schoolEmail(rawEmail);
    const { code } = await this.issue('signup', email, address);
    const existing = await this.store.findByEmail(email);
    await this.deps.mailer.send(
      existing
        ? alreadyRegisteredMail(email, `${this.deps.config.urls.auth}${ACCOUNT_PATHS.resetPage}`)
        : verificationMail(email, code, CODE_LIFETIME_SECONDS / 60),
    );
    this.deps.logger.info({ event: 'account.signup_code' }, 'sign-up code requested');
    return { email, expiresInSeconds: CODE_LIFETIME_SECONDS };
  }

  /**
   * POST /v1/accounts: creates the account with the mailed code. Every other rule is checked
   * before the code, so a refused password neither spends a check nor uses the code up; the
   * code is checked and spent before the password is hashed, so a wrong code costs no argon2.
   */
  async signUp(input: { email: unknown; password: unknown; code: unknown; teacher?: unknown }, address: string): Promise<AccountSummary> {
    const email = this.schoolEmail(input.email);
    const teacher = checkTeacher(input.teacher);
    const password = requiredString(input.password, 'password');
    const code = requiredString(input.code, 'code');
    await this.checkPassword(password, email);
    const passwordHash = await this.hashWithCode('signup', email, code, password, address);
    let doc: AccountDoc;
    try {
      doc = await this.store.create({
        email,
        passwordHash,
        role: 'USER',
        ...(teacher ? { name: teacher.name, department: teacher.department, approval: 'PENDING' as const } : {}),
      });
    } catch (err) {
      if (err instanceof DuplicateAccountError)
        throw refuse('CONFLICT', 'account_exists', 'an account with this email already exists; sign in or reset the password', 'email');
      throw err;
    }
    this.deps.logger.info({ event: 'account.signed_up', accountId: doc._id, teacher: teacher !== null }, 'account created');
    if (teacher) await this.mailStaff(doc.email, teacher);
    return this.accounts.summarize(doc);
  }

  /**
   * POST /v1/accounts/password-resets: mails a reset code when the address has an account. The
   * answer, its timing and the budget it spends are the same whether or not it has one: the code
   * is stored either way and the mail is sent after the answer.
   */
  async requestPasswordReset(rawEmail: unknown, address: string): Promise<{ email: string; expiresInSeconds: number }> {
    const email = this.anyEmail(rawEmail);
    const { code } = await this.issue('reset', email, address);
    const account = await this.store.findByEmail(email);
    if (account) {
      this.deps.mailer.send(resetMail(email, code, CODE_LIFETIME_SECONDS / 60)).catch((err: unknown) => {
        this.deps.logger.warn(
          { event: 'account.reset_mail_failed', accountId: account._id, reason: describe(err) },
          'could not send a reset code',
        );
      });
    }
    this.deps.logger.info({ event: 'account.reset_code' }, 'password reset code requested');
    return { email, expiresInSeconds: CODE_LIFETIME_SECONDS };
  }

  /**
   * A sign-in code for an account whose password sign-in is soft-locked (the login page, when the
   * lock starts and when the owner asks for another): mailed when the email has an account, with
   * the same answer and budgets either way (the reset's rule). Budgets spent: 429.
   */
  async requestSignInCode(rawEmail: unknown, address: string): Promise<void> {
    const email = this.anyEmail(rawEmail);
    const { code } = await this.issue('sign-in', email, address);
    const account = await this.store.findByEmail(email);
    if (account) {
      this.deps.mailer.send(signInCodeMail(email, code, CODE_LIFETIME_SECONDS / 60)).catch((err: unknown) => {
        this.deps.logger.warn(
          { event: 'account.sign_in_code_mail_failed', accountId: account._id, reason: describe(err) },
          'could not send a sign-in code',
        );
      });
    }
    this.deps.logger.info({ event: 'account.sign_in_code' }, 'sign-in code requested');
  }

  /**
   * The account a mailed sign-in code proves, the code spent; `invalid_code` for a wrong,
   * expired, used or never-sent one (all read the same), 429 past the check budgets.
   */
  async signInWithCode(input: { email: unknown; code: unknown }, address: string): Promise<AccountDoc> {
    const email = this.anyEmail(input.email);
    const code = requiredString(input.code, 'code');
    let handle: { codeHash: string } | null;
    try {
      handle = await this.deps.codes.check('sign-in', email, code, address);
    } catch (err) {
      if (err instanceof CodeBudgetSpent) throw tooMany(err.retryAfterSeconds, BUDGET_WORDS.checks[err.budget], 'code');
      throw err;
    }
    const account = handle ? await this.store.findByEmail(email) : null;
    if (!handle || !account || !(await this.deps.codes.consume('sign-in', email, handle))) throw invalidCode();
    return account;
  }

  /**
   * Every administrator who can act (ADMIN and ROOT, not disabled) is mailed that a
   * teacher's sign-up waits. The sign-up stands whether or not the mails go out.
   */
  private async mailStaff(email: string, teacher: { name: string; department: string }): Promise<void> {
    const accountsUrl = `${this.deps.config.urls.auth}/admin/accounts?approval=PENDING`;
    for (const admin of await this.store.listStaff()) {
      await this.deps.mailer.send(teacherWaitingMail(admin.email, { email, ...teacher }, accountsUrl)).catch((err: unknown) => {
        this.deps.logger.warn(
          { event: 'account.teacher_mail_failed', accountId: admin._id, reason: describe(err) },
          'could not tell an admin of a teacher sign-up',
        );
      });
    }
  }

  /**
   * An administrator (or the operator) sends an account a password-reset code: the
   * self-service reset's code, budgets and page (the budgets of the account's email, and of the
   * sender as the address), with a mail that says who asked. In the access log.
   */
  async sendPasswordReset(actor: AccountActor, accountId: number): Promise<{ email: string; expiresInSeconds: number }> {
    const account = await this.store.findById(accountId);
    if (!account) throw new AccountRuleError(`No account ${accountId}.`, 'unknown_account');
    // The rule of every account change (src/auth/policy.ts): not one's own; an ADMIN's or ROOT's only by a ROOT.
    checkAccountChange(actor, account, 'reset-password');
    const sender = actor === 'CLI' ? 'cli' : `admin:${actor.accountId}`;
    const { code } = await this.issue('reset', account.email, sender);
    await this.deps.mailer.send(
      adminResetMail(account.email, code, CODE_LIFETIME_SECONDS / 60, `${this.deps.config.urls.auth}${ACCOUNT_PATHS.resetPage}`),
    );
    await new AccessAudit(this.deps.db).record(accessActor(actor), {
      action: 'PASSWORD_RESET_SENT',
      target: { kind: 'ACCOUNT', id: String(account._id), label: account.email },
    });
    this.deps.logger.info({ event: 'account.reset_sent', accountId: account._id }, 'password reset code sent by an administrator');
    return { email: account.email, expiresInSeconds: CODE_LIFETIME_SECONDS };
  }

  /**
   * PUT /v1/accounts/password: sets a new password with the mailed code, then ends every
   * session of the account and revokes every grant and refresh token (apps must sign in again).
   */
  async resetPassword(input: { email: unknown; code: unknown; newPassword: unknown }, address: string): Promise<{ revoked: number }> {
    const email = this.anyEmail(input.email);
    const newPassword = requiredString(input.newPassword, 'newPassword');
    const code = requiredString(input.code, 'code');
    await this.checkPassword(newPassword, email);
    const passwordHash = await this.hashWithCode('reset', email, code, newPassword, address);
    // A code can only have been mailed to an existing account; one stored for an unknown address was never sent.
    const account = await this.store.findByEmail(email);
    if (!account) throw invalidCode();
    await this.store.updatePassword(account._id, passwordHash);
    await new LogoutNotices(this.deps.db).accessEnded(account._id, 'session_ended');
    const revoked = await this.oauth.revokeAllOf({ accountId: String(account._id) });
    this.deps.logger.info(
      { event: 'account.password_reset', accountId: account._id, revoked },
      'password reset; every session and token revoked',
    );
    return { revoked };
  }

  /**
   * My account: a new password, the current one confirmed. Other sign-ins end (login sessions
   * and other console sessions); `keepGrantId`, this console session, stays; apps keep their access.
   */
  async changePassword(
    accountId: number,
    input: { currentPassword: string; newPassword: string },
    web: { clientId: string; keepGrantId: string },
  ): Promise<void> {
    const account = await this.confirmPassword(accountId, input.currentPassword);
    await this.checkPassword(input.newPassword, account.email);
    await this.store.updatePassword(account._id, await this.hash(input.newPassword));
    await this.endSignIns(account._id, web.clientId, 'session_ended', web.keepGrantId);
    this.deps.logger.info({ event: 'account.password_changed', accountId }, 'password changed; other sign-ins ended');
  }

  /** My account: ends every login session and every console sign-in (this one too); apps keep their access. */
  async signOutEverywhere(accountId: number, webClientId: string): Promise<void> {
    await this.endSignIns(accountId, webClientId, 'signed_out');
    this.deps.logger.info({ event: 'account.signed_out_everywhere', accountId }, 'every sign-in ended');
  }

  /** My account: deletes the account, the password confirmed (src/oauth/accounts.ts says what goes with it). */
  async deleteAccount(accountId: number, password: string): Promise<DeletedAccount> {
    await this.confirmPassword(accountId, password);
    const account = await this.store.findById(accountId);
    const deleted = await this.accounts.delete(
      String(accountId),
      account ? { kind: 'ACCOUNT', id: account._id, email: account.email } : undefined,
    );
    this.deps.logger.info(
      { event: 'account.deleted', accountId, apiKeys: deleted.apiKeys, clients: deleted.clients, revoked: deleted.revoked },
      'account deleted by its owner',
    );
    return deleted;
  }

  /**
   * The door of the JSON endpoints and the pages: 429 at once when `address` has spent its
   * budget of code requests (`requests`) or code checks (`checks`), before anything is parsed.
   */
  async assertAddressAllowed(kind: 'requests' | 'checks', address: string): Promise<void> {
    const retryAfterSeconds = await this.deps.codes.addressRefusal(kind, address);
    if (retryAfterSeconds !== undefined)
      throw tooMany(retryAfterSeconds, BUDGET_WORDS[kind].address, kind === 'requests' ? 'email' : 'code');
  }

  /** Expired codes are refused on use anyway; this reclaims their space. */
  async sweepExpiredCodes(): Promise<number> {
    return this.deps.codes.sweepExpired();
  }

  /** Ends every login session of the account (the apps they signed in to are told, `cause`) and its console sign-ins but `keepGrantId`. */
  private async endSignIns(accountId: number, webClientId: string, cause: LogoutCause, keepGrantId?: string): Promise<void> {
    const sessions = await this.oauth.listOf('Session', { accountId: String(accountId) });
    await new LogoutNotices(this.deps.db).sessionsEnded(sessions, cause);
    await this.oauth.revokeKindOf('Session', String(accountId));
    const grants = await this.oauth.listOf('Grant', { accountId: String(accountId) });
    for (const grant of grants) {
      if (grant.payload['clientId'] === webClientId && grant.id !== keepGrantId) await this.oauth.revokeGrant(grant.id);
    }
  }

  /** The current password, checked (wrong: 400; too many wrong ones: 429). */
  /**
   * The account's password typed again (changing it, deleting the account, enrolling a second
   * factor): limited per account, a wrong one refused at the form's field.
   */
  async confirmPassword(accountId: number, password: string): Promise<AccountDoc> {
    const account = await this.store.findById(accountId);
    if (!account) throw refuse('FORBIDDEN', 'invalid_request', 'the account no longer exists');
    const key = String(accountId);
    try {
      await this.confirmations.consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      throw tooMany(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)), 'too many wrong passwords', 'currentPassword');
    }
    if (!(await verifyPassword(account.passwordHash, password))) {
      throw refuse('BAD_REQUEST', 'wrong_password', 'the current password is not correct', 'currentPassword');
    }
    await this.confirmations.reward(key, 1);
    return account;
  }

  private async checkPassword(password: string, email: string): Promise<void> {
    const problem = await passwordProblem(password, email);
    if (problem) throw refuse('BAD_REQUEST', problem, PASSWORD_PROBLEM_MESSAGES[problem], 'password');
  }

  private async issue(purpose: EmailCodePurpose, email: string, address: string): Promise<{ code: string }> {
    try {
      return await this.deps.codes.issue(purpose, email, address);
    } catch (err) {
      if (err instanceof CodeBudgetSpent) throw tooMany(err.retryAfterSeconds, BUDGET_WORDS.requests[err.budget], 'email');
      throw err;
    }
  }

  /**
   * The new password's hash, made only for the right code: the code is checked (cheap, and
   * limited), a hashing slot is taken (or 503 with the code left unspent), the code is spent,
   * and only then does argon2 run. Every code failure reads the same (wrong, expired, replaced,
   * never sent or dead of wrong checks).
   */
  private async hashWithCode(purpose: EmailCodePurpose, email: string, code: string, password: string, address: string): Promise<string> {
    let handle: { codeHash: string } | null;
    try {
      handle = await this.deps.codes.check(purpose, email, code, address);
    } catch (err) {
      if (err instanceof CodeBudgetSpent) throw tooMany(err.retryAfterSeconds, BUDGET_WORDS.checks[err.budget], 'code');
      throw err;
    }
    if (!handle) throw invalidCode();
    const checked = handle;
    return this.gated(async () => {
      if (!(await this.deps.codes.consume(purpose, email, checked))) throw invalidCode();
      return hashPassword(password);
    });
  }

  /** A new password's hash, in a slot of the hashing gate. */
  private hash(password: string): Promise<string> {
    return this.gated(() => hashPassword(password));
  }

  private async gated<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await this.hashGate.run(work);
    } catch (err) {
      if (!(err instanceof HashGateBusy)) throw err;
      this.deps.logger.warn({ event: 'account.hashing_busy' }, 'new password refused: too many being set at once');
      throw new SelfServiceError(
        'SERVICE_UNAVAILABLE',
        'temporarily_unavailable',
        `too many passwords are being set right now; retry after ${err.retryAfterSeconds} second`,
        { 'Retry-After': String(err.retryAfterSeconds) },
        'password',
      );
    }
  }

  /** An email of the school's domain (sign-up), lower-cased. */
  private schoolEmail(raw: unknown): string {
    const email = this.anyEmail(raw);
    const domain = this.deps.config.schoolEmailDomain;
    if (!email.endsWith(`@${domain}`)) {
      throw refuse('BAD_REQUEST', 'email_domain_not_allowed', `sign-up is open to @${domain} addresses only`, 'email');
    }
    // `hong1+t@` reaches hong1's mailbox: one mailbox would get any number of accounts, and a
    // student's address would pass for a non-student's (a teacher sign-up).
    if (!this.deps.config.signupAllowSubaddresses && email.slice(0, email.lastIndexOf('@')).includes('+')) {
      throw refuse('BAD_REQUEST', 'email_subaddress_not_allowed', "sign-up takes the mailbox's own address, without a '+' part", 'email');
    }
    return email;
  }

  /** Any well-formed email (reset: accounts made with `campus accounts` may have other domains). */
  private anyEmail(raw: unknown): string {
    const email = requiredString(raw, 'email').trim().toLowerCase();
    if (email.length > MAX_EMAIL_LENGTH)
      throw refuse('BAD_REQUEST', 'invalid_email', `the email is longer than ${MAX_EMAIL_LENGTH} characters`, 'email');
    if (!isEmail(email)) throw refuse('BAD_REQUEST', 'invalid_email', "'email' is not an email address", 'email');
    return email;
  }
}

/** What each spent budget says (src/oauth/email-codes.ts, CODE_LIMITS). */
const BUDGET_WORDS = {
  requests: {
    requests: 'too many codes were requested for this email from this address',
    checks: 'too many codes were requested for this email from this address',
    address: 'too many codes were requested from this address',
    global: 'too many codes are being requested right now',
    email: 'many codes were mailed to this email today; the next one can be sent later',
  },
  checks: {
    requests: 'too many codes were tried for this email from this address',
    checks: 'too many codes were tried for this email from this address',
    address: 'too many codes were tried from this address',
    global: 'too many codes are being tried right now',
    email: 'too many codes were tried for this email',
  },
} as const;

function checkTeacher(value: unknown): TeacherInput | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value))
    throw refuse('BAD_REQUEST', 'invalid_request', "'teacher' must be an object with 'name' and 'department'");
  const record = value as Record<string, unknown>;
  const field = (name: 'name' | 'department'): string => {
    const text = typeof record[name] === 'string' ? (record[name] as string).trim() : '';
    if (text.length === 0 || text.length > MAX_TEACHER_FIELD) {
      throw refuse('BAD_REQUEST', 'invalid_teacher', `'teacher.${name}' must be 1 to ${MAX_TEACHER_FIELD} characters`, name);
    }
    return text;
  };
  return { name: field('name'), department: field('department') };
}

function requiredString(value: unknown, name: 'email' | 'password' | 'newPassword' | 'code'): string {
  if (typeof value !== 'string' || value.length === 0)
    throw refuse('BAD_REQUEST', 'invalid_request', `missing required parameter '${name}'`, name === 'newPassword' ? 'password' : name);
  return value;
}

function refuse(code: ErrorCode, problem: SelfServiceProblem, description: string, field?: SelfServiceError['field']): SelfServiceError {
  return new SelfServiceError(code, problem, description, {}, field);
}

function invalidCode(): SelfServiceError {
  return refuse('BAD_REQUEST', 'invalid_code', 'the code is wrong, expired or already used; ask for a new one', 'code');
}

function tooMany(retryAfterSeconds: number, what: string, field: SelfServiceError['field']): SelfServiceError {
  return new SelfServiceError(
    'TOO_MANY_REQUESTS',
    'too_many_requests',
    `${what}; retry after ${retryAfterSeconds} seconds`,
    { 'Retry-After': String(retryAfterSeconds) },
    field,
  );
}

function describe(err: unknown): string {
  return err instanceof Error ? err.name : 'error';
}
