import { Types } from 'mongoose';
import type { Database } from '../database.js';

/** Counts of one key on one day, gathered in memory since the last flush. */
export interface UsageCounts {
  requests: number;
  clientErrors: number;
  throttled: number;
}

/** What one flush writes: counts per (key, day), and the last request time per key. */
export interface UsageBatch {
  readonly counts: ReadonlyMap<string, { readonly keyId: string; readonly day: string; readonly counts: UsageCounts }>;
  readonly lastUsed: ReadonlyMap<string, Date>;
}

/**
 * Writes gathered usage: one `$inc` upsert per (key, day) and one `$max` of `lastUsedAt` per key,
 * in two unordered bulk writes. Increments add up, so any number of processes may flush into the
 * same documents; a key's `lastUsedAt` only moves forward.
 */
export async function writeUsage(db: Database, batch: UsageBatch): Promise<void> {
  const counts = [...batch.counts.values()].map(({ keyId, day, counts: c }) => ({
    updateOne: {
      filter: { _id: `${keyId}:${day}` },
      update: { $inc: { requests: c.requests, clientErrors: c.clientErrors, throttled: c.throttled }, $setOnInsert: { keyId, day } },
      upsert: true,
    },
  }));
  const lastUsed = [...batch.lastUsed]
    .filter(([keyId]) => Types.ObjectId.isValid(keyId))
    .map(([keyId, at]) => ({ updateOne: { filter: { _id: new Types.ObjectId(keyId) }, update: { $max: { lastUsedAt: at } } } }));
  if (counts.length > 0) await db.models.apiKeyUsage.bulkWrite(counts, { ordered: false });
  if (lastUsed.length > 0) await db.models.apiKeys.bulkWrite(lastUsed, { ordered: false });
}
