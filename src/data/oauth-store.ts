import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Database } from './database.js';
import { isDuplicateKey } from './errors.js';
import type { DataVersions } from './versions.js';
import type { OAuthClaimDoc } from './models/oauth-claim.model.js';
import type { OAuthRecordDoc } from './models/oauth-record.model.js';

/** A provider artifact as stored: its JSON payload plus the fields the store queries by. */
export interface OAuthRecord {
  readonly kind: string;
  readonly id: string;
  readonly payload: Record<string, unknown>;
  readonly expiresAt: Date | null;
  /** Epoch seconds of first use (its claim), or null. */
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
  /** The expiry of single-use records found lately, for their claim (see consume). */
  private readonly foundExpiry = new LRUCache<string, { expiresAt: Date | null }>({ max: 1000, ttl: 60_000 });

  constructor(
    private readonly db: Database,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private get records() {
    return this.db.models.oauthRecords;
  }

  /** Where records of `kind` live: interactions apart (src/data/models/oauth-record.model.ts says why). */
  private collectionOf(kind: string) {
    return kind === 'Interaction' ? this.db.models.oauthInteractions : this.records;
  }

  private get claims() {
    return this.db.models.oauthClaims;
  }

  /** Creates or replaces a record; `expiresInSeconds` undefined means it does not expire. */
  async upsert(
    kind: string,
    id: string,
    payload: Record<string, unknown>,
    expiresInSeconds: number | undefined,
    keys: OAuthRecordKeys,
  ): Promise<void> {
    const expiresAt = expiresInSeconds === undefined ? null : new Date(this.now().getTime() + expiresInSeconds * 1000);
    const doc: OAuthRecordDoc = {
      _id: recordKey(kind, id),
      kind,
      payload: JSON.stringify(HASHED_KINDS.has(kind) ? withoutJti(payload) : payload),
      grantId: keys.grantId ?? null,
      uid: keys.uid ?? null,
      userCode: keys.userCode ?? null,
      clientId: keys.clientId ?? null,
      accountId: keys.accountId ?? null,
      expiresAt,
    };
    await this.put(doc);
    for (const field of LOOKUP_FIELDS) {
      const value = keys[field];
      if (value !== undefined) await this.putPointer(kind, field, value, id, expiresAt);
    }
  }

  /**
   * The live record, or undefined when it is absent or expired (an expired one is deleted). A
   * code's or token's claim (its first use, see consume) is read beside it, at the same time.
   */
  async find(kind: string, id: string): Promise<OAuthRecord | undefined> {
    const key = recordKey(kind, id);
    const [doc, claim] = await Promise.all([
      this.collectionOf(kind).findOne({ _id: key }).lean<OAuthRecordDoc>(),
      HASHED_KINDS.has(kind) ? this.claims.findOne({ _id: key }, { claimedAt: 1 }).lean<OAuthClaimDoc>() : null,
    ]);
    const record = await this.live(doc, id, claim);
    if (record && HASHED_KINDS.has(kind)) this.foundExpiry.set(key, { expiresAt: record.expiresAt });
    return record;
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
   * Marks a record used: true for the first caller, false when it was already used (or is
   * gone). The first use is decided by inserting a claim keyed by the record: of concurrent
   * callers exactly one insert succeeds, the others get a duplicate key. (FerretDB's
   * findAndModify cannot decide this: concurrent callers can all see the record unused.) Reads
   * see the use through the claim (see find); the record itself is not touched. The provider
   * finds a record just before it consumes it; the expiry that find read is reused for the
   * claim, so a redemption makes no second read.
   */
  async consume(kind: string, id: string): Promise<boolean> {
    const key = recordKey(kind, id);
    const found =
      this.foundExpiry.get(key) ?? (await this.collectionOf(kind).findOne({ _id: key }, { expiresAt: 1 }).lean<OAuthRecordDoc>());
    if (!found) return false;
    try {
      await this.claims.insertMany([{ _id: key, expiresAt: found.expiresAt ?? null, claimedAt: this.now() }], { lean: true });
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async destroy(kind: string, id: string): Promise<void> {
    await this.collectionOf(kind).deleteOne({ _id: recordKey(kind, id) });
    if (kind === 'Grant') await this.grantsRevoked();
  }

  /** Deletes every record of `kind` issued under a grant. */
  async revokeByGrantId(kind: string, grantId: string): Promise<void> {
    await this.collectionOf(kind).deleteMany({ kind, grantId });
  }

  /**
   * Deletes a grant and everything issued under it (every kind). Claims stay until they expire:
   * a redemption that read the record before the revocation must still lose its claim after it.
   */
  async revokeGrant(grantId: string): Promise<void> {
    await this.records.deleteMany({ grantId });
    await this.db.models.oauthInteractions.deleteMany({ grantId });
    await this.records.deleteOne({ _id: recordKey('Grant', grantId) });
    await this.grantsRevoked();
  }

  /** The live records of `kind` that belong to an account or a client (e.g. the grants a person gave). */
  async listOf(kind: string, owner: { accountId: string } | { clientId: string }): Promise<OAuthRecord[]> {
    const docs = await this.collectionOf(kind)
      .find({ kind, ...owner, ...liveFilter(this.now()) })
      .lean<OAuthRecordDoc[]>();
    const records = await Promise.all(docs.map((doc) => this.live(doc)));
    return records.filter((record): record is OAuthRecord => record !== undefined);
  }

  /** How many distinct accounts hold a live grant for a client. */
  async countGrantingAccounts(clientId: string): Promise<number> {
    const docs = await this.records
      .find({ kind: 'Grant', clientId, ...liveFilter(this.now()) }, { accountId: 1 })
      .lean<{ accountId: string | null }[]>();
    return new Set(docs.map((doc) => doc.accountId).filter((id) => id !== null)).size;
  }

  /**
   * When tokens were last issued under each grant (epoch seconds): the newest refresh token's
   * `iat` (every sign-in and every refresh issues one, and used ones stay until they expire).
   */
  async lastIssued(grantIds: readonly string[]): Promise<Map<string, number>> {
    const last = new Map<string, number>();
    if (grantIds.length === 0) return last;
    const docs = await this.records
      .find({ kind: 'RefreshToken', grantId: { $in: [...grantIds] } }, { grantId: 1, payload: 1 })
      .lean<{ grantId: string | null; payload: string }[]>();
    for (const doc of docs) {
      const iat: unknown = (JSON.parse(doc.payload) as Record<string, unknown>)['iat'];
      if (doc.grantId && typeof iat === 'number' && iat > (last.get(doc.grantId) ?? 0)) last.set(doc.grantId, iat);
    }
    return last;
  }

  /** Deletes an account's records of one kind (e.g. its login sessions); returns how many. */
  async revokeKindOf(kind: string, accountId: string): Promise<number> {
    const result = await this.collectionOf(kind).deleteMany({ kind, accountId });
    if (kind === 'Grant' && result.deletedCount > 0) await this.grantsRevoked();
    return result.deletedCount;
  }

  /** Deletes every artifact of an account or a client (when it is deleted); returns how many. */
  async revokeAllOf(owner: { accountId: string } | { clientId: string }): Promise<number> {
    // Its logins under way go too (an interaction names its client and, once signed in, its account).
    await this.db.models.oauthInteractions.deleteMany(owner);
    const result = await this.records.deleteMany(owner);
    if (result.deletedCount > 0) await this.grantsRevoked();
    return result.deletedCount;
  }

  /**
   * Moves the `oauth` version after grants were deleted: processes that remember which grants
   * are alive (src/oauth/access-token.ts) forget it, here at once and elsewhere as soon as they
   * hear of the change (src/data/version-bus.ts). An expired grant needs no such news: what is
   * remembered carries its expiry.
   */
  private async grantsRevoked(): Promise<void> {
    await this.db.versions.bump('oauth');
  }

  /** The clock of changes, for callers that remember what they read here. */
  get versions(): DataVersions {
    return this.db.versions;
  }

  /** Deletes every expired record, and the claims of expired records; returns how many records. */
  async sweepExpired(): Promise<number> {
    const expired = { expiresAt: { $ne: null, $lte: this.now() } };
    const result = await this.records.deleteMany(expired);
    await this.db.models.oauthInteractions.deleteMany(expired);
    await this.claims.deleteMany(expired);
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
    };
    await this.put(doc);
  }

  /**
   * Most artifacts are written once under a fresh id, so an insert is tried first (on FerretDB
   * several times cheaper than an upsert); a record saved again (sessions, grants) is replaced.
   */
  private async put(doc: OAuthRecordDoc): Promise<void> {
    try {
      await this.collectionOf(doc.kind).insertMany([doc], { lean: true });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      await this.collectionOf(doc.kind).replaceOne({ _id: doc._id }, doc);
    }
  }

  /** The record if it is live; `id` is the one asked for (a hashed kind's key holds only its hash). */
  private async live(
    doc: OAuthRecordDoc | null,
    id?: string,
    claim?: Pick<OAuthClaimDoc, 'claimedAt'> | null,
  ): Promise<OAuthRecord | undefined> {
    if (!doc) return undefined;
    if (doc.expiresAt && doc.expiresAt.getTime() <= this.now().getTime()) {
      await this.collectionOf(doc.kind).deleteOne({ _id: doc._id });
      return undefined;
    }
    const recordId = id ?? doc._id.slice(doc._id.indexOf(':') + 1);
    const payload = JSON.parse(doc.payload) as Record<string, unknown>;
    return {
      kind: doc.kind,
      id: recordId,
      payload: HASHED_KINDS.has(doc.kind) ? { ...payload, jti: recordId } : payload,
      expiresAt: doc.expiresAt ?? null,
      consumedAt: claim ? Math.floor(claim.claimedAt.getTime() / 1000) : null,
    };
  }
}

const LOOKUP_FIELDS: readonly LookupField[] = ['uid', 'userCode'];

/** Records that have not expired at `now` (expired ones are also refused by `live`). */
function liveFilter(now: Date): Record<string, unknown> {
  return { $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] };
}

/**
 * Kinds whose id is a bearer credential presented on its own (a code, a refresh token, an opaque
 * token): the database holds only its SHA-256, in the key and nowhere in the payload, so a copy
 * of the database (a backup, a leaked dump) redeems nothing. Sessions and interactions are named
 * by signed cookies (a valid signature needs the cookie keys, which the database does not hold)
 * and are looked up by their uid; a grant id is in every access token.
 */
export const HASHED_KINDS: ReadonlySet<string> = new Set([
  'AuthorizationCode',
  'RefreshToken',
  'AccessToken',
  'ClientCredentials',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);

/** Marks a hashed key; a provider id never holds a colon, so a key with it cannot be a raw one. */
const HASH_PREFIX = 'sha256:';

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** The `_id` of a record, e.g. "Grant:abc" or, for a hashed kind, "RefreshToken:sha256:<hash of the id>". */
export function recordKey(kind: string, id: string): string {
  return HASHED_KINDS.has(kind) ? `${kind}:${HASH_PREFIX}${sha256(id)}` : `${kind}:${id}`;
}

function withoutJti(payload: Record<string, unknown>): Record<string, unknown> {
  const { jti: _jti, ...rest } = payload;
  return rest;
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

/**
 * Migration (src/data/migrations.ts): records and claims of hashed kinds written by earlier code
 * under their raw id are moved to their hashed key, without the id in the payload. Idempotent:
 * a key that already holds the hash prefix is left alone.
 */
export async function hashStoredCredentials(db: Database): Promise<void> {
  const { oauthRecords: records, oauthClaims: claims } = db.models;
  for (const kind of HASHED_KINDS) {
    const raw = (doc: { _id: string }) => !doc._id.startsWith(`${kind}:${HASH_PREFIX}`);
    const rawId = (doc: { _id: string }) => doc._id.slice(kind.length + 1);
    const docs = (await records.find({ kind }).lean<OAuthRecordDoc[]>()).filter(raw);
    for (const doc of docs) {
      const payload = JSON.stringify(withoutJti(JSON.parse(doc.payload) as Record<string, unknown>));
      const _id = recordKey(kind, rawId(doc));
      await records.replaceOne({ _id }, { ...doc, _id, payload }, { upsert: true });
      await records.deleteOne({ _id: doc._id });
    }
    const claimed = (await claims.find({ _id: new RegExp(`^${kind}:`) }).lean<OAuthClaimDoc[]>()).filter(raw);
    for (const claim of claimed) {
      const _id = recordKey(kind, rawId(claim));
      await claims.replaceOne({ _id }, { ...claim, _id }, { upsert: true });
      await claims.deleteOne({ _id: claim._id });
    }
  }
}
