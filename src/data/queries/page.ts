import type { Model } from 'mongoose';

export type SortSpec = Record<string, 1 | -1>;

/**
 * One page of a filtered, sorted collection plus the total: a count and a find, run together.
 * Only find, sort, skip, limit and count: what both MongoDB and FerretDB serve.
 */
export async function findPage<T>(
  model: Model<T>,
  filter: Record<string, unknown>,
  sort: SortSpec,
  page: number,
  size: number,
): Promise<{ items: T[]; total: number }> {
  const skip = page * size;
  const [total, items] = await Promise.all([
    model.countDocuments(filter),
    model.find(filter).sort(sort).skip(skip).limit(size).batchSize(size).lean<T[]>(),
  ]);
  return { items, total };
}

/** A case-insensitive substring match, with the user's text taken literally. */
export function containsInsensitive(text: string): { $regex: string; $options: string } {
  return { $regex: text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), $options: 'i' };
}

/** Adds id as the final tie-breaker so that pages never overlap or skip records. */
export function withIdTieBreaker(sort: SortSpec, idDirection: 1 | -1 = 1): SortSpec {
  return '_id' in sort ? sort : { ...sort, _id: idDirection };
}
