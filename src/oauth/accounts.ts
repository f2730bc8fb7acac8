import { AccountStore, ACCOUNT_ROLES, type AccountDoc, type AccountRole } from '../data/accounts.js';
import type { Database } from '../data/database.js';
import { OAuthStore } from '../data/oauth-store.js';
import { hashPassword, verifyPassword } from './secrets.js';

export { DuplicateAccountError } from '../data/accounts.js';

/** An account as `campus accounts list` shows it (never the password hash). */
export interface AccountSummary {
  id: number;
  email: string;
  role: AccountRole;
  isStudent: boolean;
  createdAt: Date;
}

/** An account request the rules refuse; the message says which rule. */
export class AccountValidationError extends Error {
  override name = 'AccountValidationError';
}

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
    if (existing.role !== input.role) await this.store.updateRole(existing._id, input.role);
    return this.summarize({ ...existing, role: input.role });
  }

  async list(): Promise<AccountSummary[]> {
    return Promise.all((await this.store.list()).map((doc) => this.summarize(doc)));
  }

  async findById(id: number): Promise<AccountDoc | null> {
    return Number.isSafeInteger(id) && id > 0 ? this.store.findById(id) : null;
  }

  /** Deletes an account (by id or email) and signs it out everywhere: its grants and tokens go too. */
  async delete(idOrEmail: string): Promise<{ account: AccountSummary; revoked: number }> {
    const doc = /^\d+$/.test(idOrEmail) ? await this.store.findById(Number(idOrEmail)) : await this.store.findByEmail(idOrEmail);
    if (!doc) throw new AccountValidationError(`No account ${idOrEmail}.`);
    const account = await this.summarize(doc);
    await this.store.delete(doc._id);
    const revoked = await new OAuthStore(this.db).revokeAllOf({ accountId: String(doc._id) });
    return { account, revoked };
  }

  /**
   * The account whose password this is, or null. An unknown email costs the same hash
   * verification as a wrong password, so neither the answer nor its timing tells them apart.
   */
  async verifyLogin(email: string, password: string): Promise<AccountDoc | null> {
    const account = EMAIL.test(email.trim()) ? await this.store.findByEmail(email) : null;
    const hash = account?.passwordHash ?? (await this.unknownAccountHash());
    const ok = await verifyPassword(hash, password);
    return ok && account ? account : null;
  }

  private unknownAccountHash(): Promise<string> {
    this.dummyHash ??= hashPassword(`no-such-account-${Math.random()}`);
    return this.dummyHash;
  }

  private async summarize(doc: AccountDoc): Promise<AccountSummary> {
    const student = await this.store.findStudent(doc.email);
    return { id: doc._id, email: doc.email, role: doc.role, isStudent: student !== null, createdAt: doc.createdAt };
  }
}

function checkEmail(email: string): string {
  const trimmed = email.trim().toLowerCase();
  if (!EMAIL.test(trimmed) || trimmed.length > 254) throw new AccountValidationError(`--email ${email} is not an email address.`);
  return trimmed;
}

function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD) {
    throw new AccountValidationError(`--password must be ${MIN_PASSWORD} to ${MAX_PASSWORD} characters.`);
  }
}

function checkRole(role: string): AccountRole {
  if (!(ACCOUNT_ROLES as readonly string[]).includes(role)) throw new AccountValidationError(`--role must be one of ${ACCOUNT_ROLES.join(', ')}.`);
  return role as AccountRole;
}
