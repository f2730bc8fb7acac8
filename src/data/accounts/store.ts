import type { Database } from '../database.js';
import type { AccountDoc, AccountRole, ApprovalState } from '../models/account.model.js';
import type { StudentDoc } from '../models/student.model.js';
import { containsInsensitive } from '../school/queries/page.js';
import { ConflictError } from '../../errors/index.js';
import { isDuplicateKey } from '../platform/errors.js';
import { cacheTarget } from '../platform/versions.js';
import { RememberedLookups } from '../platform/remembered.js';

export { ACCOUNT_ROLES, APPROVAL_STATES, type AccountRole, type AccountDoc, type ApprovalState } from '../models/account.model.js';

/** Each lost race moves on to the next id; this many concurrent creations can all succeed. */
const MAX_ID_CLAIM_ATTEMPTS = 50;

/** An account, whether it has an active second factor and a passkey that signs in: what the sign-in path reads of it (AccountStore.known). */
export interface KnownAccount {
  readonly doc: AccountDoc;
  readonly secondFactor: boolean;
  readonly passkey: boolean;
}

/** Accounts remembered per process and database handle, by id and by email. */
const MAX_REMEMBERED_ACCOUNTS = 10_000;
const remembered = new WeakMap<
  Database,
  { byId: RememberedLookups<number, KnownAccount>; byEmail: RememberedLookups<string, KnownAccount> }
>();

function rememberedAccounts(db: Database) {
  let lookups = remembered.get(db);
  if (!lookups) {
    const load = async (filter: { _id: number } | { email: string }): Promise<KnownAccount | undefined> => {
      const doc = await db.models.accounts.findOne(filter).lean<AccountDoc>();
      if (!doc) return undefined;
      const [factor, passkey] = await Promise.all([
        db.models.accountMfa.exists({ _id: doc._id, active: true }),
        db.models.passkeys.exists({ accountId: doc._id, flaggedAt: null }),
      ]);
      return { doc, secondFactor: factor !== null, passkey: passkey !== null };
    };
    const targets = (_key: unknown, value: KnownAccount) => [cacheTarget.account(value.doc._id)];
    lookups = {
      byId: new RememberedLookups(db.versions, 'oauth', MAX_REMEMBERED_ACCOUNTS, (id: number) => load({ _id: id }), targets),
      byEmail: new RememberedLookups(db.versions, 'oauth', MAX_REMEMBERED_ACCOUNTS, (email: string) => load({ email }), targets),
    };
    remembered.set(db, lookups);
  }
  return lookups;
}

/**
 * Remembers every account at once (at most MAX_REMEMBERED_ACCOUNTS), as a process starts to serve
 * sign-ins: two reads instead of one per account. Over FerretDB each first look-up of an account
 * reads the whole collection, so a school's students signing in for the first time after a start
 * (8:50 on a Monday) would read it once each.
 */
export async function rememberAllAccounts(db: Database): Promise<number> {
  const changes = db.versions.changesOf('oauth');
  const [docs, factors, passkeys] = await Promise.all([
    db.models.accounts.find({}).sort({ _id: -1 }).limit(MAX_REMEMBERED_ACCOUNTS).lean<AccountDoc[]>(),
    db.models.accountMfa.find({ active: true }, { _id: 1 }).lean<{ _id: number }[]>(),
    db.models.passkeys.find({ flaggedAt: null }, { accountId: 1 }).lean<{ accountId: number }[]>(),
  ]);
  // A change heard of during the reads may postdate what they found: nothing is remembered then.
  if (db.versions.changesOf('oauth') !== changes) return 0;
  const withFactor = new Set(factors.map((f) => f._id));
  const withPasskey = new Set(passkeys.map((p) => p.accountId));
  const lookups = rememberedAccounts(db);
  for (const doc of docs) {
    const known = { doc, secondFactor: withFactor.has(doc._id), passkey: withPasskey.has(doc._id) };
    await lookups.byId.remember(doc._id, known);
    await lookups.byEmail.remember(doc.email, known);
  }
  return docs.length;
}

/** Thrown when an email is already taken by another account. */
export class DuplicateAccountError extends ConflictError {}

/** What a new account holds besides its email and password hash (a teacher's sign-up: name, department, PENDING). */
export interface NewAccountInput {
  email: string;
  passwordHash: string;
  role: AccountRole;
  name?: string | null;
  department?: string | null;
  approval?: ApprovalState | null;
  now?: Date;
}

/** The accounts page of the admin console: a search and a page of results. */
export interface AccountSearch {
  /** A substring of the email, name or department (case-insensitive). */
  text?: string;
  approval?: ApprovalState;
  skip: number;
  limit: number;
}

/**
 * Account records: create, look up, list, delete. Password hashing lives in oauth/. A change
 * userinfo or the token endpoint could see (role, approval, deletion) moves the `oauth` version.
 */
export class AccountStore {
  constructor(private readonly db: Database) {}

  /**
   * Inserts an account under a new id from the account id counter (never an id given before,
   * even to an account deleted since). An id burnt by a refused insert (the email is taken)
   * stays unused: ids only have to go up, not be contiguous.
   */
  async create(input: NewAccountInput): Promise<AccountDoc> {
    const email = input.email.trim().toLowerCase();
    const now = input.now ?? new Date();
    if (await this.findByEmail(email)) throw duplicateEmail(email);
    const doc: AccountDoc = {
      _id: await this.claimNextId(now),
      email,
      passwordHash: input.passwordHash,
      role: input.role,
      name: input.name ?? null,
      department: input.department ?? null,
      approval: input.approval ?? null,
      approvalDecidedAt: null,
      approvalDecidedBy: null,
      disabledAt: null,
      disabledBy: null,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.db.models.accounts.create(doc);
      return doc;
    } catch (err) {
      // Another account with this email was inserted since the check above.
      if (isDuplicateKey(err)) throw duplicateEmail(email);
      throw err;
    }
  }

  /**
   * Claims the id after the highest ever claimed, by inserting its claim document; when a
   * concurrent caller inserted that claim first, the next one is tried. Accounts created before
   * the counter existed have no claim, so the highest account id counts too.
   */
  private async claimNextId(now: Date): Promise<number> {
    const { accounts, accountIdClaims } = this.db.models;
    for (let attempt = 0; attempt < MAX_ID_CLAIM_ATTEMPTS; attempt++) {
      const [lastClaim, lastAccount] = await Promise.all([
        accountIdClaims.findOne({}, { _id: 1 }).sort({ _id: -1 }).lean<{ _id: number }>(),
        accounts.findOne({}, { _id: 1 }).sort({ _id: -1 }).lean<{ _id: number }>(),
      ]);
      const id = Math.max(lastClaim?._id ?? 0, lastAccount?._id ?? 0) + 1;
      try {
        await accountIdClaims.create({ _id: id, claimedAt: now });
        return id;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    }
    throw new Error('Could not allocate an account id (too many concurrent creations); try again.');
  }

  async findByEmail(email: string): Promise<AccountDoc | null> {
    return this.db.models.accounts.findOne({ email: email.trim().toLowerCase() }).lean<AccountDoc>();
  }

  async findById(id: number): Promise<AccountDoc | null> {
    return this.db.models.accounts.findOne({ _id: id }).lean<AccountDoc>();
  }

  async list(): Promise<AccountDoc[]> {
    return this.db.models.accounts.find({}).sort({ _id: 1 }).lean<AccountDoc[]>();
  }

  async updatePassword(id: number, passwordHash: string, now = new Date()): Promise<boolean> {
    const result = await this.db.models.accounts.updateOne({ _id: id }, { $set: { passwordHash, updatedAt: now } });
    // The sign-in path remembers accounts (`known`): a new password is checked at once everywhere.
    return this.changed(id, result.matchedCount === 1);
  }

  /**
   * The account as the sign-in path reads it (the login's password check, the provider's account,
   * userinfo, the pages' session, an API key's owner), with whether it has an active second factor
   * and a passkey: remembered per process until a change names the account (every write here does,
   * and so do second factors and passkeys, src/data/accounts/second-factors.ts and passkeys.ts). Over FerretDB a lookup by a numeric id or an email
   * reads the whole collection; remembered, a warm sign-in reads no account.
   */
  async known(id: number): Promise<KnownAccount | null> {
    const lookups = rememberedAccounts(this.db);
    const known = await lookups.byId.get(id);
    if (known) await lookups.byEmail.remember(known.doc.email, known);
    return known ?? null;
  }

  /** `known`, by email (as typed: compared in lower case). */
  async knownByEmail(email: string): Promise<KnownAccount | null> {
    const lookups = rememberedAccounts(this.db);
    const known = await lookups.byEmail.get(email.trim().toLowerCase());
    // The sign-in that looked it up by email goes on by id (the provider's account, userinfo).
    if (known) await lookups.byId.remember(known.doc._id, known);
    return known ?? null;
  }

  /**
   * Gives the account `role`, only while its role is still `from` (the role the rule was checked
   * against, src/auth/policy.ts accountChangeRefusal); false when it is gone or its role moved meanwhile.
   */
  async updateRole(id: number, from: AccountRole, role: AccountRole, now = new Date()): Promise<boolean> {
    const result = await this.db.models.accounts.updateOne({ _id: id, role: from }, { $set: { role, updatedAt: now } });
    return this.changed(id, result.matchedCount === 1);
  }

  /**
   * Records an admin's decision on a teacher's sign-up, and the role it gives; false unless it is
   * PENDING and its role is still `from` (the role the rule was checked against: a ROOT may have
   * made it ADMIN meanwhile, and an approval must not turn that ADMIN into a TEACHER).
   */
  async decideApproval(
    id: number,
    from: AccountRole,
    decision: { approval: 'APPROVED' | 'REJECTED'; role: AccountRole; by: number | null; now?: Date },
  ): Promise<boolean> {
    const now = decision.now ?? new Date();
    const result = await this.db.models.accounts.updateOne(
      { _id: id, role: from, approval: 'PENDING' },
      {
        $set: { approval: decision.approval, role: decision.role, approvalDecidedAt: now, approvalDecidedBy: decision.by, updatedAt: now },
      },
    );
    return this.changed(id, result.matchedCount === 1);
  }

  /**
   * Disables (`state` given: when and by whom) or re-enables (null) an account; false when nothing
   * changed (it already was, or, with `from`, its role is no longer the one the rule was checked
   * against). Moves the `oauth` version naming the account, so userinfo and the token endpoint see
   * it at once everywhere (its grants and tokens too: they name their account).
   */
  async setDisabled(id: number, state: { at: Date; by: number | null } | null, from?: AccountRole): Promise<boolean> {
    const role = from === undefined ? {} : { role: from };
    const filter = state ? { _id: id, ...role, disabledAt: null } : { _id: id, ...role, disabledAt: { $ne: null } };
    const result = await this.db.models.accounts.updateOne(filter, {
      $set: { disabledAt: state?.at ?? null, disabledBy: state?.by ?? null, updatedAt: state?.at ?? new Date() },
    });
    return this.changed(id, result.matchedCount === 1);
  }

  /** The administrators (ADMIN and ROOT) who can act: not disabled (they are mailed of teacher sign-ups). */
  async listStaff(): Promise<AccountDoc[]> {
    const staff = await this.db.models.accounts
      .find({ role: { $in: ['ADMIN', 'ROOT'] } })
      .sort({ _id: 1 })
      .lean<AccountDoc[]>();
    return staff.filter((a) => !a.disabledAt);
  }

  /** A page of accounts matching the search, newest first, and how many match in all. */
  async search(search: AccountSearch): Promise<{ accounts: AccountDoc[]; total: number }> {
    const filter: Record<string, unknown> = {};
    if (search.approval) filter['approval'] = search.approval;
    const text = search.text?.trim();
    if (text) {
      const pattern = containsInsensitive(text);
      filter['$or'] = [{ email: pattern }, { name: pattern }, { department: pattern }];
    }
    const [accounts, total] = await Promise.all([
      this.db.models.accounts.find(filter).sort({ _id: -1 }).skip(search.skip).limit(search.limit).lean<AccountDoc[]>(),
      this.db.models.accounts.countDocuments(filter),
    ]);
    return { accounts, total };
  }

  /** The accounts with these ids (for showing who owns keys). */
  async findByIds(ids: number[]): Promise<AccountDoc[]> {
    if (ids.length === 0) return [];
    return this.db.models.accounts.find({ _id: { $in: ids } }).lean<AccountDoc[]>();
  }

  async delete(id: number): Promise<boolean> {
    const result = await this.db.models.accounts.deleteOne({ _id: id });
    return this.changed(id, result.deletedCount === 1);
  }

  /** After a change userinfo could show: moves the `oauth` version, naming the account (when something changed). */
  private async changed(id: number, didChange: boolean): Promise<boolean> {
    if (didChange) await this.db.versions.bumpAccount(id);
    return didChange;
  }

  /** The student whose email is the account's (the link between an account and a student). */
  async findStudent(email: string): Promise<StudentDoc | null> {
    return this.db.models.students.findOne({ email: email.trim().toLowerCase() }).lean<StudentDoc>();
  }
}

function duplicateEmail(email: string): DuplicateAccountError {
  return new DuplicateAccountError(`An account with the email ${email} already exists.`);
}
