import type { Database } from './database.js';
import type { AccountDoc, AccountRole } from './models/account.model.js';
import type { ClubDoc } from './models/club.model.js';
import type { ClientType, OAuthClientDoc } from './models/oauth-client.model.js';
import type { StudentDoc } from './models/student.model.js';

export { ACCOUNT_ROLES, type AccountRole, type AccountDoc } from './models/account.model.js';
export { CLIENT_TYPES, type ClientType, type OAuthClientDoc } from './models/oauth-client.model.js';

const DUPLICATE_KEY = 11000;

/** Thrown when an email is already taken by another account. */
export class DuplicateAccountError extends Error {
  override name = 'DuplicateAccountError';
}

/** Account records: create, look up, list, delete. Password hashing lives in oauth/. */
export class AccountStore {
  constructor(private readonly db: Database) {}

  /** Inserts an account with the next free integer id (retrying if another insert took it). */
  async create(input: { email: string; passwordHash: string; role: AccountRole; now?: Date }): Promise<AccountDoc> {
    const email = input.email.trim().toLowerCase();
    const now = input.now ?? new Date();
    for (let attempt = 0; attempt < 5; attempt++) {
      const last = await this.db.models.accounts.findOne({}, { _id: 1 }).sort({ _id: -1 }).lean<{ _id: number }>();
      const doc: AccountDoc = { _id: (last?._id ?? 0) + 1, email, passwordHash: input.passwordHash, role: input.role, createdAt: now, updatedAt: now };
      try {
        await this.db.models.accounts.create(doc);
        return doc;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        if (await this.findByEmail(email)) throw new DuplicateAccountError(`An account with the email ${email} already exists.`);
      }
    }
    throw new Error('Could not allocate an account id; try again.');
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
    return result.matchedCount === 1;
  }

  async updateRole(id: number, role: AccountRole, now = new Date()): Promise<boolean> {
    const result = await this.db.models.accounts.updateOne({ _id: id }, { $set: { role, updatedAt: now } });
    return result.matchedCount === 1;
  }

  async delete(id: number): Promise<boolean> {
    const result = await this.db.models.accounts.deleteOne({ _id: id });
    return result.deletedCount === 1;
  }

  /** The student whose email is the account's (the link between an account and a student). */
  async findStudent(email: string): Promise<StudentDoc | null> {
    return this.db.models.students.findOne({ email: email.trim().toLowerCase() }).lean<StudentDoc>();
  }

  async findClubs(ids: number[]): Promise<ClubDoc[]> {
    if (ids.length === 0) return [];
    return this.db.models.clubs.find({ _id: { $in: ids } }).lean<ClubDoc[]>();
  }
}

/** What a client registration holds (the secret only as a hash). */
export interface ClientRecordInput {
  id: string;
  name: string;
  secretHash: string | null;
  redirectUris: string[];
  scopes: string[];
  type: ClientType;
  firstParty: boolean;
}

/** OAuth client records. Secrets are generated and hashed in oauth/. */
export class ClientStore {
  constructor(private readonly db: Database) {}

  async create(input: ClientRecordInput, now = new Date()): Promise<OAuthClientDoc> {
    const doc: OAuthClientDoc = { _id: input.id, ...withoutId(input), createdAt: now, updatedAt: now };
    await this.db.models.oauthClients.create(doc);
    return doc;
  }

  /** Creates or replaces a client with a fixed id (the demo seed), keeping it idempotent. */
  async put(input: ClientRecordInput, now = new Date()): Promise<OAuthClientDoc> {
    const doc: OAuthClientDoc = { _id: input.id, ...withoutId(input), createdAt: now, updatedAt: now };
    await this.db.models.oauthClients.replaceOne({ _id: input.id }, doc, { upsert: true });
    return doc;
  }

  async find(id: string): Promise<OAuthClientDoc | null> {
    return this.db.models.oauthClients.findOne({ _id: id }).lean<OAuthClientDoc>();
  }

  async list(): Promise<OAuthClientDoc[]> {
    return this.db.models.oauthClients.find({}).sort({ createdAt: 1, _id: 1 }).lean<OAuthClientDoc[]>();
  }

  async update(id: string, changes: Partial<Omit<ClientRecordInput, 'id'>>, now = new Date()): Promise<OAuthClientDoc | null> {
    const result = await this.db.models.oauthClients.updateOne({ _id: id }, { $set: { ...changes, updatedAt: now } });
    if (result.matchedCount !== 1) return null;
    return this.find(id);
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.db.models.oauthClients.deleteOne({ _id: id });
    return result.deletedCount === 1;
  }
}

function withoutId(input: ClientRecordInput): Omit<ClientRecordInput, 'id'> {
  const { id: _id, ...rest } = input;
  return rest;
}

function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && err.code === DUPLICATE_KEY;
}
