import { MongoServerError, type Collection, type Document, type Filter } from 'mongodb';

/**
 * Documents deleted by `_id` at a time once a filter matched too many for one statement: well
 * under SQLite's limit, and few enough for PostgreSQL's.
 */
const CHUNK = 10_000;

/**
 * Deletes every document matching `filter`; returns how many.
 *
 * FerretDB 1.24 deletes what a filter matched with one SQL statement naming each document, and a
 * statement holds at most 32,766 parameters over SQLite (65,535 over PostgreSQL): a `deleteMany`
 * matching more fails with an internal error ("too many SQL variables"), every time, so a sweep
 * that fell behind (a month of expired tokens, a pruned event backlog) would never catch up.
 * One `deleteMany` is tried first, the usual case; when FerretDB refuses it, the matching
 * documents are deleted CHUNK at a time by `_id`. (MongoDB has no such limit.)
 */
export async function deleteMatching<T extends Document>(collection: Collection<T>, filter: Filter<T>): Promise<number> {
  try {
    return (await collection.deleteMany(filter)).deletedCount;
  } catch (err) {
    if (!isInternalError(err)) throw err;
  }
  let deleted = 0;
  for (;;) {
    const ids = (
      await collection
        .find(filter, { projection: { _id: 1 } })
        .limit(CHUNK)
        .toArray()
    ).map((doc) => doc._id);
    if (ids.length === 0) return deleted;
    deleted += (await collection.deleteMany({ _id: { $in: ids } } as Filter<T>)).deletedCount;
  }
}

/** FerretDB's answer to a statement its storage refused (code 1, InternalError). */
function isInternalError(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 1;
}
