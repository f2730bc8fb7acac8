import type { Collection } from 'mongodb';
import { addDays } from '../../calendar.js';
import type { Database } from '../database.js';

/*
 * What the status page remembers (docs/operations.md, "The status page"): the state of each part,
 * minute by minute, kept in the database and shared by every process. One document per day of the
 * school's calendar (`status_days`, `_id` the date), holding per part one character per minute of
 * the day (U up, G degraded, D down, `.` nothing recorded) and the counts of each. A slot is
 * written once: the first process to record a minute has it, so there is at most one record per
 * part per minute whichever process writes it, and a process that recorded minutes while the
 * database was away (it keeps them, src/data/operations/status.ts) fills only the minutes nobody
 * else recorded. Writes are made under the `status-recorder` lease (one writer at a time: a
 * FerretDB update is a read and a write without isolation). After a week a day keeps only its
 * counts (its minutes are dropped); after 90 days it goes.
 */

/** A part's recorded state in a minute (OFF, a part not running, is not recorded). */
export type RecordedState = 'UP' | 'DEGRADED' | 'DOWN';

/** One minute's states, as a process observed them. */
export interface Observation {
  readonly at: Date;
  readonly states: Readonly<Record<string, RecordedState>>;
}

/** A part's day: how many minutes it was in each state, and (for a week) which. */
export interface PartDay {
  up: number;
  degraded: number;
  down: number;
  /** One character per minute of the day (MINUTE_CODES), `.` where nothing was recorded; absent once the day is compacted. */
  minutes?: string;
}

export interface StatusDayDoc {
  /** The school's date, YYYY-MM-DD. */
  _id: string;
  parts: Record<string, PartDay>;
}

/** Days whose minutes are kept; older days keep their counts only. */
export const MINUTE_DAYS = 7;
/** Days kept at all: the status page's availability window. */
export const HISTORY_DAYS = 90;
/** The lease under which the history is written. */
export const RECORDER_LEASE = 'status-recorder';

const MINUTE_CODES: Readonly<Record<RecordedState, string>> = { UP: 'U', DEGRADED: 'G', DOWN: 'D' };
const COUNT_OF: Readonly<Record<RecordedState, 'up' | 'degraded' | 'down'>> = { UP: 'up', DEGRADED: 'degraded', DOWN: 'down' };
const EMPTY = '.';

function days(db: Database): Collection<StatusDayDoc> {
  return db.client.db().collection<StatusDayDoc>('status_days');
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The school's date of `at` and the minute of that day (0..1439, by the wall clock). */
export function minuteOf(at: Date, timeZone: string): { day: string; minute: number } {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, format);
  }
  const parts = format.formatToParts(at);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '00';
  return { day: `${part('year')}-${part('month')}-${part('day')}`, minute: Number(part('hour')) * 60 + Number(part('minute')) };
}

/**
 * Writes observations into their days: each part's minute only where nothing is recorded yet.
 * Call under the RECORDER_LEASE; `fence` checks it before each write. Minutes of compacted days
 * (older than MINUTE_DAYS) are dropped.
 */
export async function recordObservations(
  db: Database,
  observations: readonly Observation[],
  timeZone: string,
  fence: () => Promise<void>,
): Promise<void> {
  const byDay = new Map<string, { minute: number; states: Observation['states'] }[]>();
  for (const observation of observations) {
    const { day, minute } = minuteOf(observation.at, timeZone);
    byDay.set(day, [...(byDay.get(day) ?? []), { minute, states: observation.states }]);
  }
  for (const [day, minutes] of byDay) {
    const doc = (await days(db).findOne({ _id: day })) ?? { _id: day, parts: {} };
    let changed = false;
    for (const { minute, states } of minutes) {
      for (const [part, state] of Object.entries(states)) {
        const record = (doc.parts[part] ??= { up: 0, degraded: 0, down: 0, minutes: '' });
        if (record.minutes === undefined) continue;
        if ((record.minutes[minute] ?? EMPTY) !== EMPTY) continue;
        record.minutes = record.minutes.padEnd(minute, EMPTY).slice(0, minute) + MINUTE_CODES[state] + record.minutes.slice(minute + 1);
        record[COUNT_OF[state]] += 1;
        changed = true;
      }
    }
    if (!changed) continue;
    await fence();
    await days(db).replaceOne({ _id: day }, doc, { upsert: true });
  }
}

/**
 * Aggregates the days older than MINUTE_DAYS (their minutes go, their counts stay) and removes
 * those older than HISTORY_DAYS. Call under the RECORDER_LEASE.
 */
export async function compactHistory(db: Database, today: string, fence: () => Promise<void>): Promise<void> {
  const keepMinutesFrom = addDays(today, -(MINUTE_DAYS - 1));
  for (const doc of await days(db)
    .find({ _id: { $lt: keepMinutesFrom } })
    .toArray()) {
    const parts = Object.entries(doc.parts);
    if (parts.every(([, record]) => record.minutes === undefined)) continue;
    const counts = Object.fromEntries(parts.map(([part, { up, degraded, down }]) => [part, { up, degraded, down }]));
    await fence();
    await days(db).replaceOne({ _id: doc._id }, { parts: counts });
  }
  await fence();
  await days(db).deleteMany({ _id: { $lt: addDays(today, -(HISTORY_DAYS - 1)) } });
}

/** The recorded days from `from` (YYYY-MM-DD) on, in date order. */
export async function readHistory(db: Database, from: string): Promise<StatusDayDoc[]> {
  return days(db)
    .find({ _id: { $gte: from } })
    .sort({ _id: 1 })
    .toArray();
}

/** The share of a part's recorded minutes in which it was not down; null when none was recorded. */
export function availabilityOf(record: Pick<PartDay, 'up' | 'degraded' | 'down'> | undefined): number | null {
  if (!record) return null;
  const total = record.up + record.degraded + record.down;
  return total === 0 ? null : (record.up + record.degraded) / total;
}
