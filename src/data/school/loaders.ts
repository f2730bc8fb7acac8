import DataLoader from 'dataloader';
import { daysInclusive } from '../../calendar.js';
import type { Database } from '../database.js';
import type { MealDoc } from '../models/meal.model.js';
import type { ScheduleDoc } from '../models/schedule.model.js';
import type { StudentDoc } from '../models/student.model.js';
import type { ClubDoc } from '../models/club.model.js';
import type { TimetableDoc } from '../models/timetable.model.js';
import { NeisStore } from '../neis/store.js';

/**
 * Per-request batch loaders. Students and clubs come from the school held in memory at the
 * current data version (src/data/school/read-model.ts): a student's clubs, a club's leader and members,
 * a project's participants are look-ups, not queries. Every date range of meals, schedules or
 * timetables asked in one request becomes one read per kind (per 366 days of dates), whatever
 * the number of fields or aliases asking.
 */
export function createLoaders(db: Database) {
  const neis = new NeisStore(db);
  const school = () => db.school.snapshot();
  return {
    studentById: new DataLoader<number, StudentDoc | null>(async (ids) => {
      const snapshot = await school();
      return ids.map((id) => snapshot.students.get(id) ?? null);
    }),
    clubById: new DataLoader<number, ClubDoc | null>(async (ids) => {
      const snapshot = await school();
      return ids.map((id) => snapshot.clubs.get(id) ?? null);
    }),
    /** Members of each club (through the student's major or autonomous club), ordered by id. */
    membersByClubId: new DataLoader<number, StudentDoc[]>(async (clubIds) => {
      const snapshot = await school();
      return clubIds.map((id) => [...snapshot.membersOf(id)]);
    }),
    mealsByRange: rangeLoader<DateRange, MealDoc>(
      (from, to) => neis.meals(from, to),
      (m) => m.mealDate,
    ),
    schedulesByRange: rangeLoader<DateRange, ScheduleDoc>(
      (from, to) => neis.schedules(from, to),
      (s) => s.scheduleDate,
    ),
    /** One class's periods in a range; all classes asked are read together. */
    timetablesByRange: rangeLoader<ClassRange, TimetableDoc>(
      (from, to, keys) => neis.timetablesOfClasses(from, to, distinctClasses(keys)),
      (t) => t.timetableDate,
      (t, key) => t.grade === key.grade && t.classNum === key.classNum,
    ),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;

export interface DateRange {
  readonly from: string;
  readonly to: string;
}

export interface ClassRange extends DateRange {
  readonly grade: number;
  readonly classNum: number;
}

/** The longest span one batched NEIS read covers: the range limit of a single request. */
const MAX_READ_DAYS = 366;

/**
 * A loader of rows by date range: the ranges asked in one tick are grouped into spans of at
 * most MAX_READ_DAYS, each span is read once, and each range gets its rows back (in the
 * store's order) by date and, for timetables, by class.
 */
function rangeLoader<K extends DateRange, T>(
  read: (from: string, to: string, keys: readonly K[]) => Promise<T[]>,
  dateOf: (row: T) => string,
  belongs: (row: T, key: K) => boolean = () => true,
): DataLoader<K, T[], string> {
  return new DataLoader<K, T[], string>(
    async (keys) => {
      const answers = new Map<K, T[]>();
      for (const span of spans(keys)) {
        const rows = await read(span.from, span.to, span.keys);
        for (const key of span.keys) {
          answers.set(
            key,
            rows.filter((row) => dateOf(row) >= key.from && dateOf(row) <= key.to && belongs(row, key)),
          );
        }
      }
      return keys.map((key) => answers.get(key) ?? []);
    },
    { cacheKeyFn: (key) => JSON.stringify(key) },
  );
}

/** Groups ranges, earliest first, into spans of at most MAX_READ_DAYS days. */
function spans<K extends DateRange>(keys: readonly K[]): { from: string; to: string; keys: K[] }[] {
  const groups: { from: string; to: string; keys: K[] }[] = [];
  for (const key of [...keys].sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0))) {
    const last = groups[groups.length - 1];
    const to = last && last.to > key.to ? last.to : key.to;
    if (last && daysInclusive(last.from, to) <= MAX_READ_DAYS) {
      last.keys.push(key);
      last.to = to;
    } else {
      groups.push({ from: key.from, to: key.to, keys: [key] });
    }
  }
  return groups;
}

function distinctClasses(keys: readonly ClassRange[]): { grade: number; classNum: number }[] {
  const seen = new Map(keys.map((k) => [`${k.grade}:${k.classNum}`, { grade: k.grade, classNum: k.classNum }]));
  return [...seen.values()];
}
