import type { Collection } from 'mongodb';
import type { Database } from '../database.js';
import type { NeisDataset } from '../models/neis-state.model.js';
import { segmentsWithin } from './segments.js';
import { NeisStore } from './store.js';
import { assertLeaseHeld, withSchoolLock } from '../school/engine.js';
import { takeSequence, writeEvents } from '../events/outbox.js';

/*
 * The change feed's NEIS events (docs/data-api.md, "GET /v1/changes"): a sync (src/neis/sync.ts) that changes
 * the meals, schedules or timetables of some dates emits one `neis.<dataset>.updated` naming those
 * dates, in the same outbox as the school's events (src/data/events/outbox.ts), numbered under the
 * same write lease (the sequence is safe with one writer only). It is written right after the
 * dataset's new rows go live; a process killed between the two loses that one event (the rows are
 * served either way, and the next sync finds nothing changed): documented in docs/data-api.md.
 */

/** The field holding the date of a row of each dataset. */
const DATE_FIELD: Record<NeisDataset, string> = { meals: 'mealDate', schedules: 'scheduleDate', timetables: 'timetableDate' };
/** Bookkeeping fields of stored rows, not part of what the API serves. */
const BOOKKEEPING = new Set(['_id', '__v', 'generation', 'seq', 'mealTypeRank']);

/** Per date, what the API serves of it (rows as JSON, sorted): equal strings, nothing changed. */
export function fingerprints(dataset: NeisDataset, rows: readonly Record<string, unknown>[]): Map<string, string> {
  const byDate = new Map<string, string[]>();
  for (const row of rows) {
    const date = String(row[DATE_FIELD[dataset]]);
    const shown = Object.fromEntries(
      Object.entries(row)
        .filter(([key]) => !BOOKKEEPING.has(key))
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    );
    const list = byDate.get(date) ?? [];
    list.push(JSON.stringify(shown));
    byDate.set(date, list);
  }
  return new Map([...byDate].map(([date, list]) => [date, list.sort().join('\n')]));
}

/** The rows of `dataset` served now for `from`..`to` (every class), fingerprinted per date. */
export async function liveFingerprints(db: Database, dataset: NeisDataset, from: string, to: string): Promise<Map<string, string>> {
  const state = await new NeisStore(db).state();
  const collection = db.models[dataset].collection as unknown as Collection<Record<string, unknown>>;
  const field = DATE_FIELD[dataset];
  const rows: Record<string, unknown>[] = [];
  for (const s of segmentsWithin(state?.segments[dataset] ?? [], from, to)) {
    rows.push(...(await collection.find({ generation: s.generation, [field]: { $gte: s.from, $lte: s.to } }).toArray()));
  }
  return fingerprints(dataset, rows);
}

/** The dates whose rows differ, in date order. */
export function changedDates(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const dates = new Set([...before.keys(), ...after.keys()]);
  return [...dates].filter((date) => before.get(date) !== after.get(date)).sort();
}

/** Writes `neis.<dataset>.updated` for the dates a sync changed (nothing when none did). */
export async function recordNeisEvent(
  db: Database,
  dataset: NeisDataset,
  change: { dates: readonly string[]; from: string; to: string },
  at: Date,
): Promise<void> {
  if (change.dates.length === 0) return;
  await withSchoolLock(db, async (lease) => {
    // Numbered under the lease, so written only while it is still this process's.
    await assertLeaseHeld(lease);
    const first = await takeSequence(db, 1);
    await assertLeaseHeld(lease);
    await writeEvents(
      db,
      [
        {
          type: `neis.${dataset}.updated`,
          at,
          actorKind: 'CLI',
          actorId: null,
          batchId: null,
          data: JSON.stringify({ dataset, dates: change.dates, from: change.from, to: change.to }),
        },
      ],
      first,
    );
  });
  // Cached pages of the feed move with the data version (src/data/platform/versions.ts).
  await db.versions.bump('data');
}
