/**
 * Calendar arithmetic on `YYYY-MM-DD` strings and wall-clock times in IANA time zones. Pure
 * functions over Intl: "today" and every school date are computed in the school's zone, never
 * in the server's (docs/decisions.md), and a date string has no zone, so day arithmetic is exact.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

/** True for a real calendar date written YYYY-MM-DD. */
export function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [, y, m, d] = match.map(Number) as [number, number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** The calendar date at `now` in `timeZone` (en-CA formats as YYYY-MM-DD). */
export function todayIn(timeZone: string, now: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

function utcMidnight(date: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return Date.UTC(y, m - 1, d);
}

function fromUtc(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** `date` moved by `days` (negative moves back). */
export function addDays(date: string, days: number): string {
  return fromUtc(utcMidnight(date) + days * DAY_MS);
}

/** Number of days from `from` to `to`, both included (1 for a single day). */
export function daysInclusive(from: string, to: string): number {
  return Math.round((utcMidnight(to) - utcMidnight(from)) / DAY_MS) + 1;
}

/** Every date from `from` to `to`, both included. */
export function eachDate(from: string, to: string): string[] {
  const dates: string[] = [];
  for (let date = from; date <= to; date = addDays(date, 1)) dates.push(date);
  return dates;
}

/** ISO day of week: 1 Monday … 7 Sunday. */
export function isoWeekday(date: string): number {
  const day = new Date(utcMidnight(date)).getUTCDay();
  return day === 0 ? 7 : day;
}

/** `2026-03-02` -> `20260302` (NEIS's format). */
export function toCompactDate(date: string): string {
  return date.replaceAll('-', '');
}

/** `20260302` -> `2026-03-02`, or undefined when it is not a real date. */
export function fromCompactDate(value: string): string | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})$/.exec(value.trim());
  if (!match) return undefined;
  const date = `${match[1]}-${match[2]}-${match[3]}`;
  return isCalendarDate(date) ? date : undefined;
}

/** The Korean academic year of a date: it starts on 1 March. */
export function academicYearOf(date: string): number {
  const [y, m] = date.split('-').map(Number) as [number, number];
  return m >= 3 ? y : y - 1;
}

/** The academic year containing `date`: 1 March to the end of February. */
export function academicYearWindow(date: string): { from: string; to: string } {
  const year = academicYearOf(date);
  return { from: `${year}-03-01`, to: addDays(`${year + 1}-03-01`, -1) };
}

/** Milliseconds `timeZone` is ahead of UTC at `instant`. */
function zoneOffsetMs(timeZone: string, instant: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(instant));
  const get = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - (instant - (instant % 1000));
}

/** The instant at which clocks in `timeZone` show `date` `HH:MM` (the later one in a DST gap). */
export function zonedInstant(date: string, time: string, timeZone: string): Date {
  const [hh, mm] = time.split(':').map(Number) as [number, number];
  const wall = utcMidnight(date) + (hh * 60 + mm) * 60_000;
  // Two passes: the offset at the first guess may differ from the offset at the answer (DST).
  const first = wall - zoneOffsetMs(timeZone, wall);
  return new Date(wall - zoneOffsetMs(timeZone, first));
}

/** The next instant after `now` at which clocks in `timeZone` show `time` (HH:MM). */
export function nextDailyRun(now: Date, time: string, timeZone: string): Date {
  const today = todayIn(timeZone, now);
  const candidate = zonedInstant(today, time, timeZone);
  return candidate.getTime() > now.getTime() ? candidate : zonedInstant(addDays(today, 1), time, timeZone);
}
