import type { Collection } from 'mongodb';
import { openDatabase } from '../src/data/database.js';
import { benchDatabase, report, type Figures } from './lib.js';

/** Collection sizes compared: the cost of an operation by `_id` must not grow with the collection. */
const SMALL = 100;
const LARGE = 20_000;
/** Rounds per operation and size, alternating between the sizes, and operations per round. */
const ROUNDS = 5;
const PER_ROUND = 100;
/** The target: update and delete by `_id` at LARGE within 2x of SMALL, i.e. at least half the rate. */
const TARGET = 0.5;

interface Doc {
  _id: string;
  n: number;
  filler: string;
}

/** One timed operation on a document, and what puts the collection back as it was (not timed). */
interface Operation {
  readonly name: string;
  readonly run: (collection: Collection<Doc>, id: string, k: number) => Promise<unknown>;
  readonly undo?: (collection: Collection<Doc>, id: string, k: number) => Promise<unknown>;
  readonly target?: number;
}

const FILLER = 'x'.repeat(380);
// An insert is deleted again and a delete inserted again, untimed: every operation meets a
// collection of its size, and a deleted document is there to be deleted in the next round.
const OPERATIONS: readonly Operation[] = [
  { name: 'find by _id', run: (c, id) => c.findOne({ _id: id }) },
  {
    name: 'insert',
    run: (c, _id, k) => c.insertOne({ _id: `new-${k}`, n: -k, filler: FILLER }),
    undo: (c, _id, k) => c.deleteOne({ _id: `new-${k}` }),
  },
  { name: 'update by _id', run: (c, id, k) => c.updateOne({ _id: id }, { $set: { n: -k } }), target: TARGET },
  {
    name: 'delete by _id',
    run: (c, id) => c.deleteOne({ _id: id }),
    undo: (c, id, k) => c.insertOne({ _id: id, n: k, filler: FILLER }),
    target: TARGET,
  },
];

/**
 * The database alone, one client, 400-byte documents: find, insert, update and delete by `_id` in
 * a collection of SMALL and of LARGE documents, alternating between the two in rounds so that load
 * from elsewhere hits both alike. Without the indexes the launcher makes (tools/ferretdb/indexes.go)
 * FerretDB 1.24 scans the whole collection for each update and delete (docs/benchmarks.md, "The
 * embedded database's indexes"); with them, the LARGE collection must answer at least TARGET of
 * the SMALL one's rate.
 */
export async function runDatabaseBench(): Promise<boolean> {
  const database = await benchDatabase('bench');
  const db = await openDatabase(database.uri, { backendIndexes: database.indexer });
  const sizes = [SMALL, LARGE] as const;
  const collections = sizes.map((size) => db.client.db().collection<Doc>(`bench_by_id_${size}`));
  try {
    for (const [i, collection] of collections.entries()) {
      const size = sizes[i] ?? 0;
      await collection.drop().catch(() => undefined);
      for (let at = 0; at < size; at += 1000) {
        await collection.insertMany(
          Array.from({ length: Math.min(1000, size - at) }, (_, j) => ({ _id: `doc-${at + j}`, n: at + j, filler: FILLER })),
        );
      }
    }
    // The storage indexes of the new collections, as `campus serve` makes them (ensureIndexes).
    await database.indexer?.(db.name);
    const rows: { figures: Figures; baseline?: Figures; target?: number }[] = [];
    let k = 0;
    for (const operation of OPERATIONS) {
      const rounds: Figures[][] = sizes.map(() => []);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [i, collection] of collections.entries()) {
          const size = sizes[i] ?? 0;
          // Spread over the whole collection, and a different document each time (deletes remove theirs).
          const pick = (j: number) => `doc-${Math.floor(((round * PER_ROUND + j + 0.5) * size) / (ROUNDS * PER_ROUND))}`;
          const label = `${operation.name}, ${size.toLocaleString('en')} documents`;
          rounds[i]?.push(
            await timed(label, async (j) => {
              const id = pick(j);
              const n = k++;
              const started = performance.now();
              await operation.run(collection, id, n);
              const ms = performance.now() - started;
              await operation.undo?.(collection, id, n);
              return ms;
            }),
          );
        }
      }
      const [small, large] = rounds.map(median);
      if (!small || !large) continue;
      rows.push({ figures: small }, { figures: large, baseline: small, ...(operation.target ? { target: operation.target } : {}) });
    }
    return report(
      `Database operations by _id (one client, 400-byte documents; median of ${ROUNDS} alternating rounds of ${PER_ROUND}; p50/p99 of one operation)`,
      rows,
    );
  } finally {
    for (const collection of collections) await collection.drop().catch(() => undefined);
    await db.close();
    await database.stop();
  }
}

/** Runs `operation` PER_ROUND times, one after the other: operations per second of the timed parts, and their percentiles. */
async function timed(label: string, operation: (j: number) => Promise<number>): Promise<Figures> {
  const times: number[] = [];
  for (let j = 0; j < PER_ROUND; j++) times.push(await operation(j));
  const elapsed = times.reduce((sum, ms) => sum + ms, 0) / 1000;
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0;
  return { label, rps: PER_ROUND / elapsed, p50: q(0.5), p99: q(0.99), failures: 0 };
}

/** The round with the median rate. */
function median(rounds: Figures[]): Figures | undefined {
  return [...rounds].sort((a, b) => a.rps - b.rps)[Math.floor(rounds.length / 2)];
}
