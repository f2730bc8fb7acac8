import type { Database } from './database.js';
import type { OAuthRecordDoc } from './models/oauth-record.model.js';

/** A provider artifact as stored: its JSON payload plus the fields the store queries by. */
export interface OAuthRecord {
  readonly kind: string;
  readonly id: string;
  readonly payload: Record<string, unknown>;
  readonly expiresAt: Date | null;
  /** Epoch seconds of first use, or null. */
  readonly consumedAt: number | null;
}

/** The indexed fields copied out of a payload so that lookups and bulk revocation are plain queries. */
export interface OAuthRecordKeys {
  grantId?: string | undefined;
  uid?: string | undefined;
  userCode?: string | undefined;
  clientId?: string | undefined;
  accountId?: string | undefined;
}

type LookupField = 'uid' | 'userCode';

/**
 * Storage of the authorization server's artifacts (codes, tokens, grants, sessions, interactions).
 * FerretDB has no TTL indexes, so every read checks `expiresAt` against the injected clock and
 * `sweepExpired()` deletes what has lapsed; queries stay within find/update/delete/insert.
 */
export class OAuthStore {
  constructor(
    private readonly db: Database,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private get records() {
    return this.db.models.oauthRecords;
  }

  /** Creates or replaces a record; `expiresInSeconds` undefined means it does not expire. */
  async upsert(kind: string, id: string, payload: Record<string, unknown>, expiresInSeconds: number | undefined, keys: OAuthRecordKeys): Promise<void> {
    const expiresAt = expiresInSeconds === undefined ? null : new Date(this.now().getTime() + expiresInSeconds * 1000);
    const doc: OAuthRecordDoc = {
      _id: recordKey(kind, id),
      kind,
      payload: JSON.stringify(payload),
      grantId: keys.grantId ?? null,
      uid: keys.uid ?? null,
      userCode: keys.userCode ?? null,
      clientId: keys.clientId ?? null,
      accountId: keys.accountId ?? null,
      expiresAt,
      consumedAt: null,
    };
    await this.put(doc);
    for (const field of LOOKUP_FIELDS) {
      const value = keys[field];
      if (value !== undefined) await this.putPointer(kind, field, value, id, expiresAt);
    }
  }

  /** The live record, or undefined when it is absent or expired (an expired one is deleted). */
  async find(kind: string, id: string): Promise<OAuthRecord | undefined> {
    const doc = await this.records.findOne({ _id: recordKey(kind, id) }).lean<OAuthRecordDoc>();
    return this.live(doc);
  }

  /**
   * The live record of `kind` whose `field` equals `value` (sessions by uid, device codes by
   * user code), through a pointer record keyed by that value: a lookup by `_id` stays fast on
   * FerretDB, which answers other filters by scanning the collection.
   */
  async findBy(kind: string, field: LookupField, value: string): Promise<OAuthRecord | undefined> {
    const pointer = await this.live(await this.records.findOne({ _id: pointerKey(kind, field, value) }).lean<OAuthRecordDoc>());
    const target = pointer?.payload['id'];
    return typeof target === 'string' ? this.find(kind, target) : undefined;
  }

  /**
   * Marks a record used, atomically: true for the first caller, false when it was already used
   * (or is gone). Two concurrent redemptions of one code cannot both win: the update returns
   * the record as it was, and only one caller can see it unused.
   */
  async consume(kind: string, id: string): Promise<boolean> {
    const seconds = Math.floor(this.now().getTime() / 1000);
    const before = await this.records
      .findOneAndUpdate({ _id: recordKey(kind, id) }, { $set: { consumedAt: seconds } }, { returnDocument: 'before' })
      .lean<OAuthRecordDoc>();
    return before !== null && before.consumedAt == null;
  }

  async destroy(kind: string, id: string): Promise<void> {
    await this.records.deleteOne({ _id: recordKey(kind, id) });
  }

  /** Deletes every record of `kind` issued under a grant. */
  async revokeByGrantId(kind: string, grantId: string): Promise<void> {
    await this.records.deleteMany({ kind, grantId });
  }

  /** Deletes a grant and everything issued under it (every kind). */
  async revokeGrant(grantId: string): Promise<void> {
    await this.records.deleteMany({ grantId });
    await this.records.deleteOne({ _id: recordKey('Grant', grantId) });
  }

  /** Deletes every artifact of an account or a client (when it is deleted); returns how many. */
  async revokeAllOf(owner: { accountId: string } | { clientId: string }): Promise<number> {
    const result = await this.records.deleteMany(owner);
    return result.deletedCount;
  }

  /** Deletes every expired record; returns how many. */
  async sweepExpired(): Promise<number> {
    const result = await this.records.deleteMany({ expiresAt: { $ne: null, $lte: this.now() } });
    return result.deletedCount;
  }

  private async putPointer(kind: string, field: LookupField, value: string, id: string, expiresAt: Date | null): Promise<void> {
    const doc: OAuthRecordDoc = {
      _id: pointerKey(kind, field, value),
      kind: `${kind}#${field}`,
      payload: JSON.stringify({ id }),
      grantId: null,
      uid: null,
      userCode: null,
      clientId: null,
      accountId: null,
      expiresAt,
      consumedAt: null,
    };
    await this.put(doc);
  }

  /**
   * Most artifacts are written once under a fresh id, so an insert is tried first (on FerretDB
   * several times cheaper than an upsert); a record saved again (sessions, grants) is replaced.
   */
  private async put(doc: OAuthRecordDoc): Promise<void> {
    try {
      await this.records.insertMany([doc], { lean: true });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      await this.records.replaceOne({ _id: doc._id }, doc);
    }
  }

  private async live(doc: OAuthRecordDoc | null): Promise<OAuthRecord | undefined> {
    if (!doc) return undefined;
    if (doc.expiresAt && doc.expiresAt.getTime() <= this.now().getTime()) {
      await this.records.deleteOne({ _id: doc._id });
      return undefined;
    }
    const separator = doc._id.indexOf(':');
    return {
      kind: doc.kind,
      id: doc._id.slice(separator + 1),
      payload: JSON.parse(doc.payload) as Record<string, unknown>,
      expiresAt: doc.expiresAt ?? null,
      consumedAt: doc.consumedAt ?? null,
    };
  }
}

const LOOKUP_FIELDS: readonly LookupField[] = ['uid', 'userCode'];

function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && err.code === 11000;
}

function recordKey(kind: string, id: string): string {
  return `${kind}:${id}`;
}

/** The `_id` of the pointer from a lookup value to its record, e.g. "Session#uid:abc". */
function pointerKey(kind: string, field: LookupField, value: string): string {
  return `${kind}#${field}:${value}`;
}

/**
 * Reads a piece of key material kept in the database, creating it on first use. Concurrent
 * first starts (two processes) agree: the loser of the insert reads the winner's value.
 */
export async function getOrCreateKeyMaterial(db: Database, id: string, create: () => Promise<string>): Promise<string> {
  const existing = await db.models.oauthKeys.findOne({ _id: id }).lean<{ value: string }>();
  if (existing) return existing.value;
  const value = await create();
  try {
    await db.models.oauthKeys.create({ _id: id, value, createdAt: new Date() });
    return value;
  } catch (err) {
    const winner = await db.models.oauthKeys.findOne({ _id: id }).lean<{ value: string }>();
    if (winner) return winner.value;
    throw err;
  }
}
