import { createHash, randomUUID } from 'node:crypto';
import { sameSecret } from '../../compare.js';
import type { Types } from 'mongoose';
import type { Database } from '../database.js';
import { cacheTarget } from '../platform/versions.js';
import { API_SCOPES, type ApiKeyDoc, type ApiScope } from '../models/api-key.model.js';
import { containsInsensitive } from '../school/queries/page.js';
import { BadRequestError } from '../../errors/index.js';
import {
  keyScopes,
  splitKeyRequest,
  type AccountStanding,
  type KeyScopeRecord,
  type KeyScopes,
  type PolicySettings,
} from '../../auth/policy.js';
import { standingsOf } from '../accounts/standing.js';

export { API_SCOPES, type ApiScope } from '../models/api-key.model.js';

/** API keys are valid for 30 days from issue or renewal (docs/spec.md). */
export const API_KEY_VALIDITY_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** SHA-256 of the canonical (lower-case) key: the only form a key is stored in. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key.toLowerCase()).digest('hex');
}

/** Constant-time comparison of two hex hashes (lookups are by hash; this guards the final match). */
export function hashesEqual(a: string, b: string): boolean {
  return sameSecret(a, b);
}

export interface ApiKeySummary {
  id: string;
  prefix: string;
  label: string | null;
  scopes: ApiScope[];
  rateLimit: { points: number; durationSeconds: number } | null;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  state: 'active' | 'expired' | 'revoked';
  /** The account that created it in the developer console; null for keys of `campus keys`. */
  ownerAccountId: number | null;
  /** The last request made with it (written every few seconds by the usage counter). */
  lastUsedAt: Date | null;
  /** The value a rotation replaced, while its grace period lasts. */
  previous: { prefix: string; expiresAt: Date } | null;
  /** Everything the key asked for; `scopes` is what it reads with now (src/auth/policy.ts, keyScopes). */
  requestedScopes: ApiScope[];
  /** Asked for and awaiting an admin's approval under the owner's current role. */
  pendingScopes: ApiScope[];
  /** Refused by an admin, or not open to the owner's current role. */
  refusedScopes: ApiScope[];
  /** Each scope the key holds or asked for, and where it stands. */
  scopeStates: Partial<Record<ApiScope, ScopeState>>;
  /** What the person wrote the data is for (null: nothing needed approval). */
  purpose: string | null;
}

/** Where one scope of a key stands. */
export type ScopeState = 'approved' | 'pending' | 'refused';

/** Characters of the purpose written with a request that needs approval. */
export const MAX_PURPOSE_LENGTH = 500;

export interface IssueOptions {
  /** What the key asks for (an operator's key: what it reads with). */
  scopes: ApiScope[];
  /**
   * The scopes approved on issue: by default, for a key an operator issues to an account, every
   * scope it was given (the operator decided); keys an account asks for start with none.
   */
  approvedScopes?: ApiScope[];
  days?: number;
  label?: string | null;
  rateLimit?: { points: number; durationSeconds: number } | null;
  /** The account creating it in the developer console. */
  ownerAccountId?: number | null;
  /** The purpose written for the scopes that need an admin's approval. */
  purpose?: string | null;
  /** Only the demo seed passes a fixed key, so the examples of docs/data-api.md work as written. */
  key?: string;
  now?: Date;
}

/** Changes made in the developer console name the account, which must own the key. */
export interface OwnerOption {
  ownerAccountId?: number;
}

/**
 * Keys one account may hold at once (neither revoked nor expired) in the developer console: each
 * key has its own rate limit, so an unbounded number would be an unbounded budget.
 */
export const MAX_ACTIVE_KEYS_PER_ACCOUNT = 10;
/** Characters of a key's label. */
export const MAX_KEY_LABEL_LENGTH = 100;

/** The longest a replaced value may keep working after a rotation (docs/decisions.md, "API keys"). */
export const MAX_ROTATION_GRACE_SECONDS = 24 * 3600;

/** A stored key found by a presented value: the current value, or the one a rotation replaced. */
export interface KeyMatch {
  readonly doc: ApiKeyDoc;
  /** True when the value is the replaced one (it works until `doc.previousExpiresAt`). */
  readonly previous: boolean;
}

/** One day of a key's usage (missing days had no requests). */
export interface KeyUsageDay {
  day: string;
  requests: number;
  clientErrors: number;
  throttled: number;
}

/**
 * Issues, renews, rotates, revokes and looks up API keys. What an owned key reads with is worked
 * out from its owner's standing now (src/auth/policy.ts), in every summary as at the data API.
 */
export class ApiKeyService {
  constructor(
    private readonly db: Database,
    private readonly settings: PolicySettings,
  ) {}

  /** Creates a key and returns its value; the value is never retrievable again. */
  async issue(options: IssueOptions): Promise<{ key: string; summary: ApiKeySummary }> {
    const key = (options.key ?? randomUUID()).toLowerCase();
    const now = options.now ?? new Date();
    const ownerAccountId = options.ownerAccountId ?? null;
    const doc = await this.db.models.apiKeys.create({
      hash: hashApiKey(key),
      prefix: key.slice(0, 8),
      label: options.label ?? null,
      scopes: [...new Set(options.scopes)],
      rateLimitPoints: options.rateLimit?.points ?? null,
      rateLimitSeconds: options.rateLimit?.durationSeconds ?? null,
      createdAt: now,
      renewedAt: now,
      expiresAt: new Date(now.getTime() + (options.days ?? API_KEY_VALIDITY_DAYS) * DAY_MS),
      revokedAt: null,
      ownerAccountId,
      approvedScopes: [...new Set(options.approvedScopes ?? (ownerAccountId === null ? [] : options.scopes))],
      refusedScopes: [],
      purpose: options.purpose ?? null,
    });
    // A value presented before it was issued may be remembered as no key: every targeted change of keys forgets those.
    await this.db.versions.bump('keys', [cacheTarget.key(String(doc._id))]);
    return { key, summary: await this.summary(doc.toObject(), now) };
  }

  /**
   * A key created in the developer console: the account's, with the default validity and rate
   * limit; refused past MAX_ACTIVE_KEYS_PER_ACCOUNT (counted again after the insert, so that
   * parallel requests cannot pass the cap together).
   */
  private async issueOwned(
    accountId: number,
    options: { scopes: ApiScope[]; label: string | null; pending: ApiScope[]; purpose?: string | null },
    now = new Date(),
  ): Promise<{ key: string; summary: ApiKeySummary }> {
    const label = options.label?.trim() ?? '';
    if (label.length > MAX_KEY_LABEL_LENGTH) throw new ApiKeyCommandError(`The label must be at most ${MAX_KEY_LABEL_LENGTH} characters.`);
    const pending = options.pending;
    if (options.scopes.length === 0) throw new ApiKeyCommandError(`Choose at least one scope (${API_SCOPES.join(', ')}).`);
    const purpose = options.purpose?.trim() ?? '';
    if (purpose.length > MAX_PURPOSE_LENGTH) throw new ApiKeyCommandError(`The purpose must be at most ${MAX_PURPOSE_LENGTH} characters.`);
    if (pending.length > 0 && purpose.length === 0)
      throw new ApiKeyCommandError(
        `${pending.join(', ')} needs an administrator's approval: write what you need the data for (the purpose).`,
      );
    if ((await this.countActiveOwnedBy(accountId, now)) >= MAX_ACTIVE_KEYS_PER_ACCOUNT) throw tooManyKeys();
    const issued = await this.issue({
      scopes: options.scopes,
      approvedScopes: [],
      purpose: purpose || null,
      label: label || null,
      ownerAccountId: accountId,
      now,
    });
    if ((await this.countActiveOwnedBy(accountId, now)) > MAX_ACTIVE_KEYS_PER_ACCOUNT) {
      await this.db.models.apiKeys.deleteOne({ _id: issued.summary.id });
      await this.db.versions.bump('keys', [cacheTarget.key(issued.summary.id)]);
      throw tooManyKeys();
    }
    return issued;
  }

  /**
   * A key an account asks for (the developer console, and `campus keys issue --owner`): under the
   * owner's standing now (src/auth/policy.ts, splitKeyRequest) some scopes are granted at once and
   * others wait for an admin's approval, which needs a purpose; a scope the role may not ask for is
   * refused (400). The key records what it asked for: what it reads is worked out at each use.
   */
  async request(
    owner: AccountStanding,
    options: { scopes: ApiScope[]; label: string | null; purpose?: string | null },
    now = new Date(),
  ): Promise<{ key: string; summary: ApiKeySummary }> {
    const split = splitKeyRequest(owner, options.scopes, this.settings);
    if (split.refused.length > 0)
      throw new ApiKeyCommandError(`An account with the role ${owner.role} may not ask for ${split.refused.join(', ')}.`);
    return this.issueOwned(
      owner.id,
      { scopes: [...split.granted, ...split.pending], pending: split.pending, label: options.label, purpose: options.purpose ?? null },
      now,
    );
  }

  /** Finds the stored record of a presented key (revoked and expired ones included). */
  async findByKey(key: string): Promise<ApiKeyDoc | null> {
    return (await this.match(key))?.doc ?? null;
  }

  /**
   * The record of a presented value: by its current hash, else by the hash a rotation replaced
   * (whether the grace period still runs is the caller's check, on its own clock).
   */
  async match(key: string): Promise<KeyMatch | null> {
    const hash = hashApiKey(key);
    // One round trip for both: a value is a key's current one or, during a rotation's grace
    // period, the one it replaced.
    const doc = await this.db.models.apiKeys.findOne({ $or: [{ hash }, { previousHash: hash }] }).lean<ApiKeyDoc>();
    if (!doc) return null;
    if (hashesEqual(doc.hash, hash)) return { doc, previous: false };
    if (doc.previousHash && hashesEqual(doc.previousHash, hash)) return { doc, previous: true };
    return null;
  }

  async list(now = new Date()): Promise<ApiKeySummary[]> {
    const docs = await this.db.models.apiKeys.find().sort({ createdAt: 1, _id: 1 }).lean<ApiKeyDoc[]>();
    return this.summaries(docs, now);
  }

  /** The keys an account created, newest first. */
  async listOwnedBy(accountId: number, now = new Date()): Promise<ApiKeySummary[]> {
    const docs = await this.db.models.apiKeys.find({ ownerAccountId: accountId }).sort({ createdAt: -1, _id: -1 }).lean<ApiKeyDoc[]>();
    return this.summaries(docs, now);
  }

  /** Keys an account holds that are neither revoked nor expired (the developer console's cap counts these). */
  async countActiveOwnedBy(accountId: number, now = new Date()): Promise<number> {
    return this.db.models.apiKeys.countDocuments({ ownerAccountId: accountId, revokedAt: null, expiresAt: { $gt: now } });
  }

  /**
   * The admin console's list: every key, newest first, optionally those whose prefix or label
   * contains `text` or whose owner is one of `ownerAccountIds`.
   */
  async search(
    search: { text?: string; ownerAccountIds?: number[]; skip: number; limit: number },
    now = new Date(),
  ): Promise<{ keys: ApiKeySummary[]; total: number }> {
    const text = search.text?.trim();
    const any: Record<string, unknown>[] = [];
    if (text) any.push({ prefix: containsInsensitive(text) }, { label: containsInsensitive(text) });
    if (search.ownerAccountIds && search.ownerAccountIds.length > 0) any.push({ ownerAccountId: { $in: search.ownerAccountIds } });
    const filter = any.length > 0 ? { $or: any } : {};
    const [docs, total] = await Promise.all([
      this.db.models.apiKeys.find(filter).sort({ createdAt: -1, _id: -1 }).skip(search.skip).limit(search.limit).lean<ApiKeyDoc[]>(),
      this.db.models.apiKeys.countDocuments(filter),
    ]);
    return { keys: await this.summaries(docs, now), total };
  }

  /** One key by its record id, or null; with `ownerAccountId`, only that account's key. */
  async get(id: string, options: OwnerOption = {}, now = new Date()): Promise<ApiKeySummary | null> {
    const doc = await this.findById(id);
    if (!doc || !ownedBy(doc, options)) return null;
    return this.summary(doc, now);
  }

  /**
   * Keys with scopes awaiting approval under their owners' roles now, oldest request first (the
   * admin console's list): asked for at issue, or left waiting by a lowered role.
   */
  async listPending(now = new Date()): Promise<ApiKeySummary[]> {
    const docs = await this.db.models.apiKeys
      .find({ ownerAccountId: { $ne: null }, revokedAt: null })
      .sort({ createdAt: 1, _id: 1 })
      .lean<ApiKeyDoc[]>();
    return (await this.summaries(docs, now)).filter((k) => k.pendingScopes.length > 0);
  }

  /**
   * An admin (or an operator: `by` null) decides a key's pending scopes: approved ones join the
   * scopes the key works for, refused ones are kept as refused. Refused with 400 when nothing is
   * pending.
   */
  async decide(
    idOrPrefix: string,
    approve: boolean,
    by: number | null,
    now = new Date(),
  ): Promise<{ before: ApiKeySummary; after: ApiKeySummary; decided: ApiScope[] }> {
    const doc = await this.resolve(idOrPrefix);
    const before = await this.summary(doc, now);
    const pending = before.pendingScopes;
    if (pending.length === 0) throw new ApiKeyCommandError(`API key ${doc.prefix} has no scope awaiting approval.`);
    const approved = decidedScopes(doc, 'approvedScopes');
    const refused = decidedScopes(doc, 'refusedScopes');
    // Conditional on the decisions as read: of two decisions at once, one wins and the other is refused.
    const result = await this.db.models.apiKeys.updateOne(
      { _id: doc._id, approvedScopes: approved, refusedScopes: refused },
      {
        $set: {
          approvedScopes: approve ? [...approved, ...pending] : approved,
          refusedScopes: approve ? refused : [...refused, ...pending],
          decidedAt: now,
          decidedBy: by,
        },
      },
    );
    if (result.matchedCount !== 1) throw new ApiKeyCommandError(`API key ${doc.prefix} was decided meanwhile.`);
    await this.db.versions.bump('keys', [cacheTarget.key(String(doc._id))]);
    const updated = await this.findById(String(doc._id));
    if (!updated) throw new ApiKeyCommandError(`API key ${doc.prefix} was deleted meanwhile.`);
    return { before, after: await this.summary(updated, now), decided: pending };
  }

  /** Extends the same key by another validity period from now. */
  async renew(idOrPrefix: string, days = API_KEY_VALIDITY_DAYS, now = new Date(), options: OwnerOption = {}): Promise<ApiKeySummary> {
    const doc = await this.resolve(idOrPrefix, options);
    if (doc.revokedAt) throw new ApiKeyCommandError(`API key ${doc.prefix} is revoked and cannot be renewed.`);
    const updated = await this.db.models.apiKeys
      .findByIdAndUpdate(doc._id, { renewedAt: now, expiresAt: new Date(now.getTime() + days * DAY_MS) }, { new: true })
      .lean<ApiKeyDoc>();
    await this.db.versions.bump('keys', [cacheTarget.key(String(doc._id))]);
    return this.summary(updated ?? doc, now);
  }

  /**
   * Gives the key a new value, valid for a full period, with the same record, scopes, limit and
   * usage. The old value stops now, or, with `graceSeconds` (at most 24 hours), at the end of
   * that grace period (never later than it would have expired anyway), so that an app can be
   * switched over without an outage. A value replaced earlier stops now.
   */
  async rotate(
    idOrPrefix: string,
    now = new Date(),
    options: OwnerOption & { graceSeconds?: number } = {},
  ): Promise<{ key: string; summary: ApiKeySummary }> {
    const grace = options.graceSeconds ?? 0;
    if (!Number.isInteger(grace) || grace < 0 || grace > MAX_ROTATION_GRACE_SECONDS) {
      throw new ApiKeyCommandError(
        `The grace period must be a whole number of seconds from 0 to ${MAX_ROTATION_GRACE_SECONDS} (24 hours).`,
      );
    }
    const doc = await this.resolve(idOrPrefix, options);
    if (doc.revokedAt) throw new ApiKeyCommandError(`API key ${doc.prefix} is revoked and cannot be rotated.`);
    const key = randomUUID();
    const graceEnd = Math.min(now.getTime() + grace * 1000, doc.expiresAt.getTime());
    const keepsOld = grace > 0 && graceEnd > now.getTime();
    // Conditional on the value read above: of two rotations at once, one wins and the other is refused.
    const result = await this.db.models.apiKeys.updateOne(
      { _id: doc._id, hash: doc.hash },
      {
        $set: {
          hash: hashApiKey(key),
          prefix: key.slice(0, 8),
          previousHash: keepsOld ? doc.hash : null,
          previousPrefix: keepsOld ? doc.prefix : null,
          previousExpiresAt: keepsOld ? new Date(graceEnd) : null,
          renewedAt: now,
          expiresAt: new Date(now.getTime() + API_KEY_VALIDITY_DAYS * DAY_MS),
        },
      },
    );
    if (result.matchedCount !== 1) throw new ApiKeyCommandError(`API key ${doc.prefix} was changed meanwhile; try again.`);
    await this.db.versions.bump('keys', [cacheTarget.key(String(doc._id))]);
    const updated = await this.findById(String(doc._id));
    if (!updated) throw new ApiKeyCommandError(`API key ${doc.prefix} was deleted meanwhile.`);
    return { key, summary: await this.summary(updated, now) };
  }

  /** Ends the key now: its current value and any value still in a rotation's grace period. */
  async revoke(idOrPrefix: string, now = new Date(), options: OwnerOption = {}): Promise<ApiKeySummary> {
    const doc = await this.resolve(idOrPrefix, options);
    const revokedAt = doc.revokedAt ?? now;
    await this.db.models.apiKeys.updateOne({ _id: doc._id }, { revokedAt });
    await this.db.versions.bump('keys', [cacheTarget.key(String(doc._id))]);
    return this.summary({ ...doc, revokedAt }, now);
  }

  /** A key's counted usage from `fromDay` to `toDay` (YYYY-MM-DD, both included), by day. */
  async usage(keyId: string, fromDay: string, toDay: string): Promise<KeyUsageDay[]> {
    const docs = await this.db.models.apiKeyUsage
      .find({ keyId, day: { $gte: fromDay, $lte: toDay } })
      .sort({ day: 1 })
      .lean<KeyUsageDay[]>();
    return docs.map((d) => ({ day: d.day, requests: d.requests ?? 0, clientErrors: d.clientErrors ?? 0, throttled: d.throttled ?? 0 }));
  }

  /** Summaries of stored keys, their owners' standings read together. */
  private async summaries(docs: readonly ApiKeyDoc[], now: Date): Promise<ApiKeySummary[]> {
    const owners = await standingsOf(
      this.db,
      docs.flatMap((d) => (d.ownerAccountId == null ? [] : [d.ownerAccountId])),
    );
    return docs.map((d) => summarise(d, ownerOf(d, owners), this.settings, now));
  }

  private async summary(doc: ApiKeyDoc, now: Date): Promise<ApiKeySummary> {
    const [summary] = await this.summaries([doc], now);
    if (!summary) throw new Error('no summary');
    return summary;
  }

  private async findById(id: string): Promise<ApiKeyDoc | null> {
    return /^[0-9a-f]{24}$/i.test(id) ? this.db.models.apiKeys.findById(id).lean<ApiKeyDoc>() : null;
  }

  /**
   * Accepts the record id or the display prefix shown by `campus keys list`. The developer
   * console passes the account, and then only that account's key, by id, is found.
   */
  private async resolve(idOrPrefix: string, options: OwnerOption = {}): Promise<ApiKeyDoc> {
    const byId = await this.findById(idOrPrefix);
    if (options.ownerAccountId !== undefined) {
      if (byId && ownedBy(byId, options)) return byId;
      throw new ApiKeyCommandError(`No API key with id ${idOrPrefix}.`);
    }
    if (byId) return byId;
    const byPrefix = await this.db.models.apiKeys.find({ prefix: idOrPrefix.toLowerCase() }).limit(2).lean<ApiKeyDoc[]>();
    if (byPrefix.length === 1 && byPrefix[0]) return byPrefix[0];
    if (byPrefix.length > 1) throw new ApiKeyCommandError(`Several keys start with ${idOrPrefix}; use the id from \`campus keys list\`.`);
    throw new ApiKeyCommandError(`No API key with id or prefix ${idOrPrefix}.`);
  }
}

/** Deletes every key an account created, and their usage (the account is being deleted); returns how many. */
export async function deleteKeysOwnedBy(db: Database, accountId: number): Promise<number> {
  const ids = (await db.models.apiKeys.find({ ownerAccountId: accountId }, { _id: 1 }).lean<{ _id: Types.ObjectId }[]>()).map((d) =>
    String(d._id),
  );
  if (ids.length === 0) return 0;
  const result = await db.models.apiKeys.deleteMany({ ownerAccountId: accountId });
  await db.models.apiKeyUsage.deleteMany({ keyId: { $in: ids } });
  await db.versions.bump('keys', [cacheTarget.account(accountId), ...ids.map((id) => cacheTarget.key(id))]);
  return result.deletedCount;
}

/**
 * The scopes an account's active keys read now, together (what its webhooks receive): none for a
 * disabled or deleted account.
 */
export async function scopesReadByAccount(db: Database, accountId: number, settings: PolicySettings, now: Date): Promise<ApiScope[]> {
  const [docs, owners] = await Promise.all([
    db.models.apiKeys.find({ ownerAccountId: accountId, revokedAt: null, expiresAt: { $gt: now } }).lean<ApiKeyDoc[]>(),
    standingsOf(db, [accountId]),
  ]);
  const owner = owners.get(accountId) ?? null;
  if (!owner || owner.disabled) return [];
  return [...new Set(docs.flatMap((doc) => keyScopes(keyScopeRecord(doc), owner, settings).effective))];
}

/**
 * The owner's standing of a stored key: null for an operator's key; for an owned key whose account
 * is gone, a disabled USER (it reads nothing).
 */
function ownerOf(doc: ApiKeyDoc, owners: ReadonlyMap<number, AccountStanding>): AccountStanding | null {
  if (doc.ownerAccountId == null) return null;
  return owners.get(doc.ownerAccountId) ?? { id: doc.ownerAccountId, role: 'USER', disabled: true, secondFactor: false };
}

/** An admin's decisions stored on a key, as a list (older records may lack the field). */
function decidedScopes(doc: ApiKeyDoc, field: 'approvedScopes' | 'refusedScopes'): ApiScope[] {
  return [...((doc[field] ?? []) as ApiScope[])];
}

function tooManyKeys(): ApiKeyCommandError {
  return new ApiKeyCommandError(`An account may hold at most ${MAX_ACTIVE_KEYS_PER_ACCOUNT} active API keys; revoke one first.`);
}

function ownedBy(doc: ApiKeyDoc, options: OwnerOption): boolean {
  return options.ownerAccountId === undefined || doc.ownerAccountId === options.ownerAccountId;
}

/** A `campus keys` command could not be carried out (unknown key, revoked key). */
export class ApiKeyCommandError extends BadRequestError {}

/** The record a key's scopes are worked out from (src/auth/policy.ts). */
export function keyScopeRecord(doc: ApiKeyDoc): KeyScopeRecord {
  return {
    requested: doc.scopes as ApiScope[],
    approved: decidedScopes(doc, 'approvedScopes'),
    refused: decidedScopes(doc, 'refusedScopes'),
  };
}

function summarise(
  doc: ApiKeyDoc & { _id: Types.ObjectId },
  owner: AccountStanding | null,
  settings: PolicySettings,
  now: Date,
): ApiKeySummary {
  const graceEnd = doc.previousExpiresAt ?? null;
  const scopes = keyScopes(keyScopeRecord(doc), owner, settings);
  return {
    id: String(doc._id),
    prefix: doc.prefix,
    label: doc.label ?? null,
    scopes: [...scopes.effective],
    rateLimit: doc.rateLimitPoints && doc.rateLimitSeconds ? { points: doc.rateLimitPoints, durationSeconds: doc.rateLimitSeconds } : null,
    createdAt: doc.createdAt,
    expiresAt: doc.expiresAt,
    revokedAt: doc.revokedAt ?? null,
    state: doc.revokedAt ? 'revoked' : doc.expiresAt <= now ? 'expired' : 'active',
    ownerAccountId: doc.ownerAccountId ?? null,
    lastUsedAt: doc.lastUsedAt ?? null,
    previous:
      !doc.revokedAt && doc.previousPrefix && graceEnd && graceEnd > now ? { prefix: doc.previousPrefix, expiresAt: graceEnd } : null,
    requestedScopes: [...(doc.scopes as ApiScope[])],
    pendingScopes: [...scopes.pending],
    refusedScopes: [...scopes.refused],
    scopeStates: scopeStatesOf(scopes),
    purpose: doc.purpose ?? null,
  };
}

/** Each scope and where it stands (a key's, or an app's data scopes: src/oauth/apps.ts). */
export function scopeStatesOf(scopes: KeyScopes): Partial<Record<ApiScope, ScopeState>> {
  const states: Partial<Record<ApiScope, ScopeState>> = {};
  for (const scope of scopes.effective) states[scope] = 'approved';
  for (const scope of scopes.pending) states[scope] = 'pending';
  for (const scope of scopes.refused) states[scope] = 'refused';
  return states;
}

/** Parses a comma-separated scope list, naming any unknown scope. */
export function parseScopes(value: string): ApiScope[] {
  const scopes = value
    .split(',')
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !(API_SCOPES as readonly string[]).includes(s));
  if (scopes.length === 0 || unknown.length > 0) {
    throw new ApiKeyCommandError(`Unknown scope ${unknown.join(', ') || '(none given)'}; allowed: ${API_SCOPES.join(', ')}.`);
  }
  return scopes as ApiScope[];
}
