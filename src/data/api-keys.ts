import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Types } from 'mongoose';
import type { Database } from './database.js';
import { API_SCOPES, type ApiKeyDoc, type ApiScope } from './models/api-key.model.js';

export { API_SCOPES, type ApiScope } from './models/api-key.model.js';

/** API keys are valid for 30 days from issue or renewal (the spec). */
export const API_KEY_VALIDITY_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** SHA-256 of the canonical (lower-case) key: the only form a key is stored in. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key.toLowerCase()).digest('hex');
}

/** Constant-time comparison of two hex hashes (lookups are by hash; this guards the final match). */
export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
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
}

export interface IssueOptions {
  scopes: ApiScope[];
  days?: number;
  label?: string | null;
  rateLimit?: { points: number; durationSeconds: number } | null;
  /** Only the demo seed passes a fixed key, so the README's examples work as written. */
  key?: string;
  now?: Date;
}

/** Issues, renews, rotates, revokes and looks up API keys. */
export class ApiKeyService {
  constructor(private readonly db: Database) {}

  /** Creates a key and returns its value; the value is never retrievable again. */
  async issue(options: IssueOptions): Promise<{ key: string; summary: ApiKeySummary }> {
    const key = (options.key ?? randomUUID()).toLowerCase();
    const now = options.now ?? new Date();
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
    });
    await this.db.versions.bump('keys');
    return { key, summary: summarise(doc.toObject(), now) };
  }

  /** Finds the stored record of a presented key (revoked and expired ones included). */
  async findByKey(key: string): Promise<ApiKeyDoc | null> {
    const hash = hashApiKey(key);
    const doc = await this.db.models.apiKeys.findOne({ hash }).lean<ApiKeyDoc>();
    return doc && hashesEqual(doc.hash, hash) ? doc : null;
  }

  async list(now = new Date()): Promise<ApiKeySummary[]> {
    const docs = await this.db.models.apiKeys.find().sort({ createdAt: 1, _id: 1 }).lean<ApiKeyDoc[]>();
    return docs.map((d) => summarise(d, now));
  }

  /** Extends the same key by another validity period from now. */
  async renew(idOrPrefix: string, days = API_KEY_VALIDITY_DAYS, now = new Date()): Promise<ApiKeySummary> {
    const doc = await this.resolve(idOrPrefix);
    if (doc.revokedAt) throw new ApiKeyCommandError(`API key ${doc.prefix} is revoked and cannot be renewed.`);
    const updated = await this.db.models.apiKeys
      .findByIdAndUpdate(doc._id, { renewedAt: now, expiresAt: new Date(now.getTime() + days * DAY_MS) }, { new: true })
      .lean<ApiKeyDoc>();
    await this.db.versions.bump('keys');
    return summarise(updated ?? doc, now);
  }

  /** Issues a new value with the same scopes and limit, and ends the old one now. */
  async rotate(idOrPrefix: string, now = new Date()): Promise<{ key: string; summary: ApiKeySummary }> {
    const doc = await this.resolve(idOrPrefix);
    if (doc.revokedAt) throw new ApiKeyCommandError(`API key ${doc.prefix} is revoked and cannot be rotated.`);
    const issued = await this.issue({
      scopes: doc.scopes as ApiScope[],
      label: doc.label,
      rateLimit: doc.rateLimitPoints && doc.rateLimitSeconds ? { points: doc.rateLimitPoints, durationSeconds: doc.rateLimitSeconds } : null,
      now,
    });
    await this.db.models.apiKeys.updateOne({ _id: doc._id }, { revokedAt: now });
    await this.db.versions.bump('keys');
    return issued;
  }

  async revoke(idOrPrefix: string, now = new Date()): Promise<ApiKeySummary> {
    const doc = await this.resolve(idOrPrefix);
    await this.db.models.apiKeys.updateOne({ _id: doc._id }, { revokedAt: doc.revokedAt ?? now });
    await this.db.versions.bump('keys');
    return summarise({ ...doc, revokedAt: doc.revokedAt ?? now }, now);
  }

  /** Accepts the record id or the display prefix shown by `campus keys list`. */
  private async resolve(idOrPrefix: string): Promise<ApiKeyDoc> {
    const byId = /^[0-9a-f]{24}$/i.test(idOrPrefix)
      ? await this.db.models.apiKeys.findById(idOrPrefix).lean<ApiKeyDoc>()
      : null;
    if (byId) return byId;
    const byPrefix = await this.db.models.apiKeys.find({ prefix: idOrPrefix.toLowerCase() }).limit(2).lean<ApiKeyDoc[]>();
    if (byPrefix.length === 1 && byPrefix[0]) return byPrefix[0];
    if (byPrefix.length > 1) throw new ApiKeyCommandError(`Several keys start with ${idOrPrefix}; use the id from \`campus keys list\`.`);
    throw new ApiKeyCommandError(`No API key with id or prefix ${idOrPrefix}.`);
  }
}

/** A `campus keys` command could not be carried out (unknown key, revoked key). */
export class ApiKeyCommandError extends Error {
  override name = 'ApiKeyCommandError';
}

function summarise(doc: ApiKeyDoc & { _id: Types.ObjectId }, now: Date): ApiKeySummary {
  return {
    id: String(doc._id),
    prefix: doc.prefix,
    label: doc.label ?? null,
    scopes: doc.scopes as ApiScope[],
    rateLimit: doc.rateLimitPoints && doc.rateLimitSeconds ? { points: doc.rateLimitPoints, durationSeconds: doc.rateLimitSeconds } : null,
    createdAt: doc.createdAt,
    expiresAt: doc.expiresAt,
    revokedAt: doc.revokedAt ?? null,
    state: doc.revokedAt ? 'revoked' : doc.expiresAt <= now ? 'expired' : 'active',
  };
}

/** Parses a comma-separated scope list, naming any unknown scope. */
export function parseScopes(value: string): ApiScope[] {
  const scopes = value.split(',').map((s) => s.trim().toUpperCase()).filter(Boolean);
  const unknown = scopes.filter((s) => !(API_SCOPES as readonly string[]).includes(s));
  if (scopes.length === 0 || unknown.length > 0) {
    throw new ApiKeyCommandError(`Unknown scope ${unknown.join(', ') || '(none given)'}; allowed: ${API_SCOPES.join(', ')}.`);
  }
  return scopes as ApiScope[];
}
