import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Database } from '../database.js';
import { isDuplicateKey } from '../platform/errors.js';
import { deleteMatching } from '../platform/delete-matching.js';
import { GroupedInserts, InsertRefused } from '../platform/grouped-inserts.js';
import { RememberedLookups } from '../platform/remembered.js';
import { cacheTarget, type DataVersions } from '../platform/versions.js';
import type { OAuthRecordDoc } from '../models/oauth-record.model.js';

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

/** A record to store: what `upsert` takes. */
export interface NewRecord {
  readonly id: string;
  readonly payload: Record<string, unknown>;
  /** Undefined: it does not expire. */
  readonly expiresInSeconds: number | undefined;
  readonly keys: OAuthRecordKeys;
}

/**
 * What became of a rotation (see rotate): the used token was claimed and its successor stored;
 * or it had been claimed already and this is a retry within the grace, answered with a new
 * successor; or it had been claimed already and this is reuse; or it is gone (revoked meanwhile).
 */
export type RotationOutcome = 'rotated' | 'retried' | 'reused' | 'gone';

/** Grants, and refresh tokens issued here, remembered per process (of each). */
const MAX_REMEMBERED = 10000;

/**
 * Storage of the authorization server's artifacts (codes, tokens, grants, sessions, interactions).
 * FerretDB has no TTL indexes, so every read checks `expiresAt` against the injected clock and
 * `sweepExpired()` deletes what has lapsed; queries stay within find/update/delete/insert.
 */
export class OAuthStore {
  /** The expiry of single-use records found lately, for their claim (see consume). */
  private readonly foundExpiry = new LRUCache<string, { expiresAt: Date | null }>({ max: 1000, ttl: 60_000 });
  /**
   * Grants as stored, remembered until a change names them: every change of a grant names it, its
   * account or its client (an expiry needs no news: it is checked), so a refresh and a userinfo
   * call read no grant.
   * The stored document is kept and parsed on each use, so no caller can change what another reads.
   */
  private readonly grants: RememberedLookups<string, OAuthRecordDoc>;
  /**
   * Refresh tokens and authorization codes this process issued, remembered the same way (written
   * through when stored), for the token request that presents them. A record is never changed
   * once stored (its use is a claim of its own): only whether it was used is read, and for a
   * refresh not even that, its claim's insert finding out by itself (see rotate); a revocation
   * moves the version.
   */
  private readonly singleUse: RememberedLookups<string, OAuthRecordDoc>;
  /** Retries of a used refresh token under way here, by its key (see retryWithinGrace). */
  private readonly retries = new Map<string, Promise<void>>();
  /** The claims of codes and tokens, with their successors, inserted a group at a time (see rotate). */
  private readonly claims = new GroupedInserts<OAuthRecordDoc>((docs) => this.records.insertMany(docs, { lean: true }));

  constructor(
    private readonly db: Database,
    private readonly now: () => Date = () => new Date(),
  ) {
    // One memory per database handle, whichever surface made this store (the pages, the
    // authorization server, userinfo): what one has written, the others need not read.
    let shared = rememberedRecords.get(db);
    if (!shared) {
      const remembered = () =>
        new RememberedLookups<string, OAuthRecordDoc>(
          db.versions,
          'oauth',
          MAX_REMEMBERED,
          async (key) => (await db.models.oauthRecords.findOne({ _id: key }).lean<OAuthRecordDoc>()) ?? undefined,
          (_key, doc) => recordTargets(doc),
          (doc) => !isExpired(doc, new Date()),
        );
      shared = { grants: remembered(), singleUse: remembered() };
      rememberedRecords.set(db, shared);
    }
    this.grants = shared.grants;
    this.singleUse = shared.singleUse;
  }

  private get records() {
    return this.db.models.oauthRecords;
  }

  /** Where records of `kind` live: interactions apart (src/data/models/oauth-record.model.ts says why). */
  private collectionOf(kind: string) {
    return kind === 'Interaction' ? this.db.models.oauthInteractions : this.records;
  }

  /** Creates or replaces a record; `expiresInSeconds` undefined means it does not expire. */
  async upsert(
    kind: string,
    id: string,
    payload: Record<string, unknown>,
    expiresInSeconds: number | undefined,
    keys: OAuthRecordKeys,
    options: { exists?: boolean } = {},
  ): Promise<void> {
    const doc = this.recordDoc(kind, { id, payload, expiresInSeconds, keys });
    const pointers = LOOKUP_FIELDS.flatMap((field) => {
      const value = keys[field];
      return value === undefined ? [] : [pointerDoc(kind, field, value, id, doc.expiresAt ?? null)];
    });
    // A record known to exist (an interaction saved again) is replaced outright, skipping the insert meant for new ones.
    if (options.exists) await this.replace(doc, true);
    else await this.putWithPointers(doc, pointers);
    // What this process has just written it need not read back: the token endpoint's grant and
    // refresh token are remembered as saved (until a change names them, as any remembered value).
    if (kind === 'RefreshToken' || kind === 'AuthorizationCode') await this.singleUse.remember(doc._id, doc);
    if (kind === 'Grant') await this.grants.remember(doc._id, doc);
  }

  /**
   * A new record and its lookup pointers (a session's `uid`) go in one ordered insert, one
   * database operation; a record saved again stops that insert at its own duplicate key, and is
   * then replaced and its pointers put one by one (they may or may not exist yet).
   */
  private async putWithPointers(doc: OAuthRecordDoc, pointers: OAuthRecordDoc[]): Promise<void> {
    // Pointers live with the records; an interaction (in a collection of its own) has none.
    if (pointers.length > 0 && this.collectionOf(doc.kind) === this.records) {
      try {
        await this.records.insertMany([doc, ...pointers], { lean: true, ordered: true });
        return;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      await this.replace(doc);
    } else {
      await this.put(doc);
    }
    for (const pointer of pointers) await this.put(pointer);
  }

  /**
   * The live record, or undefined when it is absent or expired (an expired one is deleted). A
   * code's or token's claim (its first use, see consume) is read beside it, at the same time,
   * unless `claim` is false: where the caller goes on to claim the record, the claim's insert
   * finds out by itself (see consume and rotate). A grant comes from memory while the `oauth`
   * version stands still.
   */
  async find(kind: string, id: string, options: { claim?: boolean } = {}): Promise<OAuthRecord | undefined> {
    const key = recordKey(kind, id);
    if (kind === 'Grant') return this.live((await this.grants.get(key)) ?? null, id);
    if (kind === 'RefreshToken' && options.claim === false) {
      const record = await this.live((await this.singleUse.get(key)) ?? null, id);
      if (record) this.foundExpiry.set(key, { expiresAt: record.expiresAt });
      return record;
    }
    const readClaim = HASHED_KINDS.has(kind) && options.claim !== false;
    const [doc, claim] = await Promise.all([
      kind === 'AuthorizationCode'
        ? this.singleUse.get(key).then((found) => found ?? null)
        : this.collectionOf(kind).findOne({ _id: key }).lean<OAuthRecordDoc>(),
      readClaim ? this.records.findOne({ _id: claimKey(key) }, { claimedAt: 1 }).lean<OAuthRecordDoc>() : null,
    ]);
    const record = await this.live(doc, id, claim?.claimedAt ?? null);
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
    const found = await this.expiryOf(kind, key);
    if (!found) return false;
    try {
      await this.claims.insert([claimDoc(key, found.expiresAt ?? null, null, this.now())]);
      return true;
    } catch (err) {
      if (err instanceof InsertRefused && isDuplicateKey(err.cause)) return false;
      throw err;
    }
  }

  /**
   * A refresh with rotation in one write: the used token's claim, naming its successor, and the
   * successor, inserted together in that order (RFC 9700: a refresh token is used once). FerretDB
   * inserts a batch in one transaction, so a crash leaves both or neither; MongoDB inserts them in
   * order, so the successor never exists without the claim. Refreshes under way at the same time
   * share that write (src/data/platform/grouped-inserts.ts); each is answered once its own pair is stored.
   * When the claim exists already, this is either a retry of a refresh whose answer was lost, or
   * reuse: see retryWithinGrace.
   */
  async rotate(kind: string, usedId: string, next: NewRecord, graceSeconds: number): Promise<RotationOutcome> {
    const usedKey = recordKey(kind, usedId);
    const found = await this.expiryOf(kind, usedKey);
    if (!found) return 'gone';
    const successor = this.recordDoc(kind, next);
    try {
      await this.claims.insert([claimDoc(usedKey, found.expiresAt ?? null, successor._id, this.now()), successor]);
    } catch (err) {
      if (!(err instanceof InsertRefused && err.index === 0 && isDuplicateKey(err.cause))) throw err;
      const outcome = await this.retryWithinGrace(usedKey, successor, graceSeconds);
      if (outcome === 'retried') await this.singleUse.remember(successor._id, successor);
      return outcome;
    }
    this.singleUse.forget(usedKey);
    await this.singleUse.remember(successor._id, successor);
    return 'rotated';
  }

  /**
   * A used refresh token presented again: a client whose answer was lost retries with it. Within
   * `graceSeconds` of its use, and while its successor has not been used itself, the successor
   * (which the client never received) is retired, by a claim marked so, and `successor` takes its
   * place, so the person stays signed in. Otherwise it is reuse, and the caller revokes
   * the grant: so is a retired successor presented later (only someone who intercepted the lost
   * answer can hold it). Retries of one token at the same moment (a client sending twice) take
   * turns in this process, so each finds the successor the one before it left; see
   * replaceLostSuccessor for retries in several processes.
   */
  private retryWithinGrace(usedKey: string, successor: OAuthRecordDoc, graceSeconds: number): Promise<RotationOutcome> {
    const previous = this.retries.get(usedKey) ?? Promise.resolve();
    const turn = previous.then(() => this.replaceLostSuccessor(usedKey, successor, graceSeconds));
    const done = turn.then(
      () => undefined,
      () => undefined,
    );
    this.retries.set(usedKey, done);
    void done.then(() => {
      if (this.retries.get(usedKey) === done) this.retries.delete(usedKey);
    });
    return turn;
  }

  /**
   * One retry's turn. A successor found retired already was retired by a retry in another process
   * that has not named its own successor yet: the claim is read again, a few times, before the
   * retry counts as reuse.
   */
  private async replaceLostSuccessor(usedKey: string, successor: OAuthRecordDoc, graceSeconds: number): Promise<RotationOutcome> {
    for (let attempt = 0; attempt < RETIREMENT_ATTEMPTS; attempt++) {
      const claim = await this.records.findOne({ _id: claimKey(usedKey) }).lean<OAuthRecordDoc>();
      const lost = claim?.successor;
      const claimedAt = claim?.claimedAt?.getTime();
      if (!lost || claimedAt === undefined || this.now().getTime() - claimedAt > graceSeconds * 1000) return 'reused';
      try {
        await this.records.insertMany([claimDoc(lost, successor.expiresAt ?? null, null, this.now(), RETIRED)], { lean: true });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        const held = await this.records.findOne({ _id: claimKey(lost) }, { payload: 1 }).lean<OAuthRecordDoc>();
        if (held?.payload !== RETIRED) return 'reused';
        await new Promise((done) => setTimeout(done, RETIREMENT_WAIT_MS));
        continue;
      }
      this.singleUse.forget(lost);
      await this.records.insertMany([successor], { lean: true });
      await this.records.updateOne({ _id: claimKey(usedKey) }, { $set: { successor: successor._id } });
      return 'retried';
    }
    return 'reused';
  }

  /** The expiry of a single-use record: as its find read it moments ago, else from the database. */
  private async expiryOf(kind: string, key: string): Promise<{ expiresAt?: Date | null } | null> {
    return this.foundExpiry.get(key) ?? (await this.collectionOf(kind).findOne({ _id: key }, { expiresAt: 1 }).lean<OAuthRecordDoc>());
  }

  /** The stored form of a provider artifact (see storedForm). */
  private recordDoc(kind: string, record: NewRecord): OAuthRecordDoc {
    const { id, payload, expiresInSeconds, keys } = record;
    return storedForm({
      _id: recordKey(kind, id),
      kind,
      payload: JSON.stringify(HASHED_KINDS.has(kind) ? withoutJti(payload) : payload),
      grantId: keys.grantId,
      uid: keys.uid,
      userCode: keys.userCode,
      clientId: keys.clientId,
      accountId: keys.accountId,
      expiresAt: expiresInSeconds === undefined ? null : new Date(this.now().getTime() + expiresInSeconds * 1000),
    });
  }

  async destroy(kind: string, id: string): Promise<void> {
    await this.collectionOf(kind).deleteOne({ _id: recordKey(kind, id) });
    if (REMEMBERED_KINDS.has(kind))
      await this.grantsChanged([cacheTarget.record(recordKey(kind, id)), ...(kind === 'Grant' ? [cacheTarget.grant(id)] : [])]);
  }

  /** Deletes every record of `kind` issued under a grant. */
  async revokeByGrantId(kind: string, grantId: string): Promise<void> {
    await this.collectionOf(kind).deleteMany({ kind, grantId });
    if (REMEMBERED_KINDS.has(kind)) await this.grantsChanged([cacheTarget.grant(grantId)]);
  }

  /**
   * Deletes a grant and everything issued under it (every kind). Claims stay until they expire:
   * a redemption that read the record before the revocation must still lose its claim after it.
   */
  async revokeGrant(grantId: string): Promise<void> {
    await deleteMatching(this.records.collection, { grantId });
    await deleteMatching(this.db.models.oauthInteractions.collection, { grantId });
    await this.records.deleteOne({ _id: recordKey('Grant', grantId) });
    await this.grantsChanged([cacheTarget.grant(grantId)]);
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
      .lean<{ accountId?: string | null }[]>();
    return new Set(docs.map((doc) => doc.accountId).filter((id) => typeof id === 'string')).size;
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
      .lean<{ grantId?: string | null; payload: string }[]>();
    for (const doc of docs) {
      const iat: unknown = (JSON.parse(doc.payload) as Record<string, unknown>)['iat'];
      if (doc.grantId && typeof iat === 'number' && iat > (last.get(doc.grantId) ?? 0)) last.set(doc.grantId, iat);
    }
    return last;
  }

  /** Deletes an account's records of one kind (e.g. its login sessions); returns how many. */
  async revokeKindOf(kind: string, accountId: string): Promise<number> {
    const result = await this.collectionOf(kind).deleteMany({ kind, accountId });
    if (REMEMBERED_KINDS.has(kind) && result.deletedCount > 0) await this.grantsChanged([cacheTarget.account(accountId)]);
    return result.deletedCount;
  }

  /** Deletes every artifact of an account or a client (when it is deleted); returns how many. */
  async revokeAllOf(owner: { accountId: string } | { clientId: string }): Promise<number> {
    // Its logins under way go too (an interaction names its client and, once signed in, its account).
    await deleteMatching(this.db.models.oauthInteractions.collection, owner);
    const deleted = await deleteMatching(this.records.collection, owner);
    if (deleted > 0) {
      await this.grantsChanged(['accountId' in owner ? cacheTarget.account(owner.accountId) : cacheTarget.client(owner.clientId)]);
    }
    return deleted;
  }

  /**
   * Moves the `oauth` version after grants or refresh tokens were deleted, or a grant saved again,
   * naming what changed (cacheTarget): processes that remember those records (this store, for the
   * provider and for userinfo) forget them, here at once and elsewhere as soon as they hear of the
   * change (src/data/platform/version-bus.ts); what they remember of other grants stays. An expired record
   * needs no such news: what is remembered carries its expiry.
   */
  private async grantsChanged(targets: readonly string[]): Promise<void> {
    await this.db.versions.bump('oauth', targets);
  }

  /** The clock of changes, for callers that remember what they read here. */
  get versions(): DataVersions {
    return this.db.versions;
  }

  /** Deletes every expired record, claims of expired records included; returns how many. */
  async sweepExpired(): Promise<number> {
    const expired = { expiresAt: { $ne: null, $lte: this.now() } };
    const deleted = await deleteMatching(this.records.collection, expired);
    await deleteMatching(this.db.models.oauthInteractions.collection, expired);
    return deleted;
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
      await this.replace(doc);
    }
  }

  /** Replaces a stored record (`upsert`: or stores it, should it have gone meanwhile). */
  private async replace(doc: OAuthRecordDoc, upsert = false): Promise<void> {
    await this.collectionOf(doc.kind).replaceOne({ _id: doc._id }, doc, { upsert });
    // A grant saved again (a consent that adds scopes) is new news for whoever remembers it.
    if (doc.kind === 'Grant') await this.grantsChanged(recordTargets(doc));
  }

  /** The record if it is live; `id` is the one asked for (a hashed kind's key holds only its hash). */
  private async live(doc: OAuthRecordDoc | null, id?: string, claimedAt: Date | null = null): Promise<OAuthRecord | undefined> {
    if (!doc) return undefined;
    if (isExpired(doc, this.now()) && !READ_WHEN_EXPIRED.has(doc.kind.split('#')[0] ?? '')) {
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
      consumedAt: claimedAt ? Math.floor(claimedAt.getTime() / 1000) : null,
    };
  }
}

const LOOKUP_FIELDS: readonly LookupField[] = ['uid', 'userCode'];

/** The pointer from a record's lookup field (a session's uid) to its id. */
function pointerDoc(kind: string, field: LookupField, value: string, id: string, expiresAt: Date | null): OAuthRecordDoc {
  return storedForm({ _id: pointerKey(kind, field, value), kind: `${kind}#${field}`, payload: JSON.stringify({ id }), expiresAt });
}

/** What a remembered record rests on (cacheTarget): itself, its grant, its account and its client. */
function recordTargets(doc: OAuthRecordDoc): string[] {
  const grantId = doc.kind === 'Grant' ? doc._id.slice(doc._id.indexOf(':') + 1) : doc.grantId;
  return [
    cacheTarget.record(doc._id),
    ...(grantId ? [cacheTarget.grant(grantId)] : []),
    ...(doc.accountId ? [cacheTarget.account(doc.accountId)] : []),
    ...(doc.clientId ? [cacheTarget.client(doc.clientId)] : []),
  ];
}

/**
 * Kinds read until the sweep deletes them, expired or not: the provider checks a device code's
 * expiry itself and says so (RFC 8628: `expired_token` to the device, "expired" at /device), where
 * a code gone would read as wrong. (A pointer to one, `DeviceCode#userCode`, too.)
 */
const READ_WHEN_EXPIRED: ReadonlySet<string> = new Set(['DeviceCode']);

/** Kinds remembered per process (see OAuthStore.grants and singleUse). */
const REMEMBERED_KINDS: ReadonlySet<string> = new Set(['Grant', 'RefreshToken']);

/** The kind of a claim record (see claimDoc). */
const CLAIM_KIND = 'Claim';
/** The payload of a claim that retired a token rather than used it (see retryWithinGrace). */
const RETIRED = '{"retired":true}';
/** How often a retry looks again at a successor retired in another process, and how long it waits between. */
const RETIREMENT_ATTEMPTS = 5;
const RETIREMENT_WAIT_MS = 20;

/** The `_id` of the claim of the record keyed `key`. */
function claimKey(key: string): string {
  return `${key}#claim`;
}

/**
 * The claim of the record keyed `key` (its first use). It outlives its record's revocation (a
 * redemption that read the record just before must still lose, so it names no grant that a
 * revocation would match) and is swept once the record would have expired.
 */
function claimDoc(key: string, expiresAt: Date | null, successor: string | null, claimedAt: Date, payload = '{}'): OAuthRecordDoc {
  return storedForm({ _id: claimKey(key), kind: CLAIM_KIND, payload, expiresAt, claimedAt, successor });
}

/**
 * A record as stored: without the fields it has no value for. Most records leave most of the
 * indexed fields empty (a claim all of them), and FerretDB stores every field with a description
 * of its type beside it: a refresh's claim and new token took about 1,700 bytes with them, 1,400
 * without. Over PostgreSQL a field that is absent is also no entry in the launcher's indexes on it
 * (tools/ferretdb/indexes.go).
 * A filter on null matches an absent field as it matches null (MongoDB's rule, FerretDB's too),
 * so every query reads the same records.
 */
function storedForm(doc: OAuthRecordDoc): OAuthRecordDoc {
  const stored: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(doc)) if (value !== null && value !== undefined) stored[field] = value;
  return stored as OAuthRecordDoc;
}

function isExpired(doc: Pick<OAuthRecordDoc, 'expiresAt'>, now: Date): boolean {
  return !!doc.expiresAt && doc.expiresAt.getTime() <= now.getTime();
}

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
/** Grants and single-use records remembered per database handle (see OAuthStore's constructor). */
const rememberedRecords = new WeakMap<
  Database,
  { grants: RememberedLookups<string, OAuthRecordDoc>; singleUse: RememberedLookups<string, OAuthRecordDoc> }
>();

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
 * a key that already holds the hash prefix is left alone. Claims were kept in a collection of
 * their own then (moved by moveClaimsToRecords).
 */
export async function hashStoredCredentials(db: Database): Promise<void> {
  const records = db.models.oauthRecords;
  const claims = db.connection.collection<LegacyClaim>(LEGACY_CLAIMS);
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
    const claimed = (await claims.find({ _id: new RegExp(`^${kind}:`) }).toArray()).filter(raw);
    for (const claim of claimed) {
      const _id = recordKey(kind, rawId(claim));
      await claims.replaceOne({ _id }, { expiresAt: claim.expiresAt, claimedAt: claim.claimedAt }, { upsert: true });
      await claims.deleteOne({ _id: claim._id });
    }
  }
}

/** The collection claims were kept in before migration 4, and a claim as it was kept there. */
const LEGACY_CLAIMS = 'oauth_claims';
interface LegacyClaim {
  _id: string;
  expiresAt: Date | null;
  claimedAt: Date;
}

/**
 * Migration (src/data/migrations.ts): claims move from their own collection into oauth_records,
 * beside the records they claim, so that a refresh writes its claim and the new token in one
 * insert (see rotate). Idempotent: a claim already moved is skipped; the old collection is
 * dropped last.
 */
export async function moveClaimsToRecords(db: Database): Promise<void> {
  const legacy = db.connection.collection<LegacyClaim>(LEGACY_CLAIMS);
  for (const claim of await legacy.find({}).toArray()) {
    const doc = claimDoc(claim._id, claim.expiresAt ?? null, null, claim.claimedAt);
    await db.models.oauthRecords.replaceOne({ _id: doc._id }, doc, { upsert: true });
  }
  await legacy.drop().catch((err: unknown) => {
    // Already gone: a database created after the move, or a second run.
    if (!(typeof err === 'object' && err !== null && 'codeName' in err && err.codeName === 'NamespaceNotFound')) throw err;
  });
}
