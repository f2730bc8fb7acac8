import { createHash } from 'node:crypto';
import { academicYearOf, fromCompactDate } from '../calendar.js';
import type { MealRecord, MealType } from '../data/models/meal.model.js';
import type { ScheduleRecord } from '../data/models/schedule.model.js';
import type { TimetableRecord } from '../data/models/timetable.model.js';
import type { NeisRow } from './client.js';

/**
 * Pure mappers from NEIS rows to our records (docs/decisions.md, docs/neis.md). A row that cannot be
 * mapped is skipped with a warning; it never fails the whole batch.
 */
export interface Mapped<T> {
  readonly records: T[];
  readonly warnings: string[];
}

/** MMEAL_SC_CODE -> meal type. */
export const MEAL_CODES: Readonly<Record<string, MealType>> = { '1': 'BREAKFAST', '2': 'LUNCH', '3': 'DINNER' };

/** A NEIS field as trimmed text; numbers become their decimal text; empty or absent is null. */
export function text(row: NeisRow, field: string): string | null {
  const value = row[field];
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

const BR = /<br\s*\/?>/i;

/** `<br/>`-separated NEIS text with real line breaks; null when nothing is left. */
export function brToNewlines(value: string | null): string | null {
  if (value === null) return null;
  const lines = value
    .split(BR)
    .map((line) => line.trim())
    .filter(Boolean);
  return lines.length === 0 ? null : lines.join('\n');
}

/** MLSV_FGR: a number (530.0) or a string ("967") -> an Int; anything else -> null. */
export function parseServeCount(value: unknown): number | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n) || n < 0) return null;
  const count = Math.round(n);
  return count <= 2_147_483_647 ? count : null;
}

/** Allergy codes are the Korean food allergen numbers 1–19. */
const isAllergyCode = (code: string) => /^\d{1,2}$/.test(code) && Number(code) >= 1 && Number(code) <= 19;

/**
 * Trailing allergy codes of a dish in the forms NEIS uses: `돈까스 (1.2.5.6.)`, `된장국 (5.6)`,
 * `미역국13.16.`. Without parentheses a trailing dot is required, so `떡볶이2` stays a name.
 */
const TRAILING_CODES = /\s*(?:\(\s*(\d{1,2}(?:\.\d{1,2})*)\.?\s*\)|((?:\d{1,2}\.)+))\s*$/;

/** A code group standing alone, as old space-separated menus have it: `(1.2.5.)` or `13.16.`. */
const CODES_ONLY = /^(?:\(\s*\d{1,2}(?:\.\d{1,2})*\.?\s*\)|(?:\d{1,2}\.)+)$/;

/** One dish: its clean name (codes and `*`/`#` markers removed) and its allergy codes. */
export function cleanDish(raw: string): { name: string; codes: string[] } {
  let rest = raw.replace(/[*#]/g, ' ').trim();
  const codes: string[] = [];
  // A dish may carry more than one group (e.g. `(5.6)13.`); read them from the end.
  for (let match = TRAILING_CODES.exec(rest); match; match = TRAILING_CODES.exec(rest)) {
    const group = (match[1] ?? match[2] ?? '').split('.').filter(Boolean);
    if (group.length === 0 || !group.every(isAllergyCode)) break;
    codes.unshift(...group.map((c) => String(Number(c))));
    rest = rest.slice(0, match.index).trim();
  }
  return { name: rest.replace(/\s+/g, ' ').trim(), codes };
}

/**
 * DDISH_NM -> clean dish names and the meal's distinct allergy codes in first-seen order (null
 * when none). Dishes are separated by `<br/>`; older answers separate them by spaces instead.
 */
export function parseDishes(value: string | null): { menu: string[]; allergies: string[] | null } {
  const parts = value === null ? [] : BR.test(value) ? value.split(BR) : splitOldStyle(value);
  const menu: string[] = [];
  const allergies: string[] = [];
  for (const part of parts) {
    const { name, codes } = cleanDish(part);
    for (const code of codes) if (!allergies.includes(code)) allergies.push(code);
    if (name) menu.push(name);
  }
  return { menu, allergies: allergies.length > 0 ? allergies : null };
}

/** Space-separated menus: a code group on its own belongs to the dish before it. */
function splitOldStyle(value: string): string[] {
  const dishes: string[] = [];
  for (const token of value.split(/\s+/).filter(Boolean)) {
    const last = dishes.length - 1;
    if (CODES_ONLY.test(token) && last >= 0) dishes[last] = `${dishes[last]} ${token}`;
    else dishes.push(token);
  }
  return dishes;
}

/** The school fields every NEIS row carries; undefined when a code is missing. */
function schoolOf(row: NeisRow) {
  const schoolCode = text(row, 'SD_SCHUL_CODE');
  const officeCode = text(row, 'ATPT_OFCDC_SC_CODE');
  if (!schoolCode || !officeCode) return undefined;
  return { schoolCode, schoolName: text(row, 'SCHUL_NM') ?? '', officeCode, officeName: text(row, 'ATPT_OFCDC_SC_NM') ?? '' };
}

/** Maps one mealServiceDietInfo row, or says why it is skipped. */
export function toMeal(row: NeisRow): MealRecord | string {
  const school = schoolOf(row);
  if (!school) return 'meal row without office or school code';
  const ymd = text(row, 'MLSV_YMD') ?? '';
  const mealDate = fromCompactDate(ymd);
  if (!mealDate) return `meal row with an invalid MLSV_YMD '${ymd}'`;
  const code = text(row, 'MMEAL_SC_CODE') ?? '';
  const mealType = MEAL_CODES[code];
  if (!mealType) return `meal of ${mealDate} with an unknown MMEAL_SC_CODE '${code}' (${text(row, 'MMEAL_SC_NM') ?? 'no name'})`;
  const { menu, allergies } = parseDishes(text(row, 'DDISH_NM'));
  return {
    mealId: `${school.schoolCode}_${ymd.trim()}_${code}`,
    ...school,
    mealDate,
    mealType,
    mealMenu: menu,
    mealAllergyInfo: allergies,
    mealCalories: text(row, 'CAL_INFO'),
    originInfo: brToNewlines(text(row, 'ORPLC_INFO')),
    nutritionInfo: brToNewlines(text(row, 'NTR_INFO')),
    mealServeCount: parseServeCount(row['MLSV_FGR']),
  };
}

/** Maps meal rows; unknown meal codes and broken rows are skipped with a warning. */
export function mapMeals(rows: readonly NeisRow[]): Mapped<MealRecord> {
  const records: MealRecord[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    const meal = toMeal(row);
    if (typeof meal === 'string') warnings.push(`skipped ${meal}`);
    else if (seen.has(meal.mealId)) warnings.push(`skipped a second meal ${meal.mealId}`);
    else {
      seen.add(meal.mealId);
      records.push(meal);
    }
  }
  return { records: sortByDate(records, (m) => m.mealDate), warnings };
}

/** Grade flag prefixes as real NEIS answers spell them (TW, FR, FIV), plus the full words. */
const GRADE_FLAGS: readonly (readonly string[])[] = [['ONE'], ['TW', 'TWO'], ['THREE'], ['FR', 'FOUR'], ['FIV', 'FIVE'], ['SIX']];

/** ONE_GRADE_EVENT_YN … SIX_GRADE_EVENT_YN = "Y" -> the grade numbers; [] when none. */
export function targetGrades(row: NeisRow): number[] {
  return GRADE_FLAGS.flatMap((names, i) =>
    names.some((name) => text(row, `${name}_GRADE_EVENT_YN`)?.toUpperCase() === 'Y') ? [i + 1] : [],
  );
}

/** Short stable hash of an event name: ids survive NEIS listing the day's events in another order. */
function nameHash(name: string): string {
  return createHash('sha256').update(name).digest('hex').slice(0, 8);
}

/**
 * Maps SchoolSchedule rows. Several events on one day are several records; each id is
 * `{schoolCode}_{YYYYMMDD}_{hash of the event name}`, with `_2`, `_3` … for a repeated name.
 */
export function mapSchedules(rows: readonly NeisRow[]): Mapped<ScheduleRecord> {
  const records: ScheduleRecord[] = [];
  const warnings: string[] = [];
  const used = new Set<string>();
  for (const row of rows) {
    const school = schoolOf(row);
    const ymd = text(row, 'AA_YMD') ?? '';
    const scheduleDate = fromCompactDate(ymd);
    const eventName = text(row, 'EVENT_NM');
    if (!school) warnings.push('skipped schedule row without office or school code');
    else if (!scheduleDate) warnings.push(`skipped schedule row with an invalid AA_YMD '${ymd}'`);
    else if (!eventName) warnings.push(`skipped schedule row of ${scheduleDate} without EVENT_NM`);
    else {
      const base = `${school.schoolCode}_${ymd.trim()}_${nameHash(eventName)}`;
      let scheduleId = base;
      for (let n = 2; used.has(scheduleId); n++) scheduleId = `${base}_${n}`;
      used.add(scheduleId);
      records.push({
        scheduleId,
        ...school,
        scheduleDate,
        academicYear: text(row, 'AY') ?? String(academicYearOf(scheduleDate)),
        eventName,
        eventContent: text(row, 'EVENT_CNTNT'),
        dayCategory: text(row, 'SBTR_DD_SC_NM'),
        schoolCourseType: text(row, 'SCHUL_CRSE_SC_NM'),
        dayNightType: text(row, 'DGHT_CRSE_SC_NM'),
        targetGrades: targetGrades(row),
      });
    }
  }
  return { records: sortByDate(records, (s) => s.scheduleDate), warnings };
}

/** A positive integer field (GRADE, CLASS_NM, PERIO), or undefined. */
function positiveInt(row: NeisRow, field: string): number | undefined {
  const value = text(row, field);
  return value !== null && /^\d{1,4}$/.test(value) && Number(value) > 0 ? Number(value) : undefined;
}

/** Maps hisTimetable rows: one record per class, day and period. */
export function mapTimetables(rows: readonly NeisRow[]): Mapped<TimetableRecord> {
  const records: TimetableRecord[] = [];
  const warnings: string[] = [];
  const used = new Set<string>();
  for (const row of rows) {
    const school = schoolOf(row);
    const ymd = text(row, 'ALL_TI_YMD') ?? '';
    const timetableDate = fromCompactDate(ymd);
    const grade = positiveInt(row, 'GRADE');
    const classNum = positiveInt(row, 'CLASS_NM');
    const period = positiveInt(row, 'PERIO');
    // NEIS pads empty periods with '-' or nothing; such a row is no lesson.
    const subject =
      text(row, 'ITRT_CNTNT')
        ?.replace(/^-+\s*/, '')
        .trim() ?? '';
    if (!school) warnings.push('skipped timetable row without office or school code');
    else if (!timetableDate) warnings.push(`skipped timetable row with an invalid ALL_TI_YMD '${ymd}'`);
    else if (grade === undefined || classNum === undefined || period === undefined) {
      warnings.push(`skipped timetable row of ${timetableDate} with GRADE, CLASS_NM or PERIO not a positive integer`);
    } else if (!subject) warnings.push(`skipped timetable row of ${timetableDate} ${grade}-${classNum} period ${period} without a subject`);
    else {
      const base = `${school.schoolCode}_${ymd.trim()}_${grade}_${classNum}_${period}`;
      let timetableId = base;
      for (let n = 2; used.has(timetableId); n++) timetableId = `${base}_${n}`;
      used.add(timetableId);
      records.push({
        timetableId,
        ...school,
        timetableDate,
        academicYear: text(row, 'AY') ?? String(academicYearOf(timetableDate)),
        semester: text(row, 'SEM'),
        grade,
        classNum,
        period,
        subject,
        departmentName: text(row, 'DDDEP_NM'),
        classroomName: text(row, 'CLRM_NM'),
      });
    }
  }
  return { records: sortByDate(records, (t) => t.timetableDate), warnings };
}

/** Stable sort by a date key: equal dates keep NEIS's order. */
function sortByDate<T>(records: T[], date: (record: T) => string): T[] {
  return records
    .map((record, index) => ({ record, index }))
    .sort((a, b) => (date(a.record) < date(b.record) ? -1 : date(a.record) > date(b.record) ? 1 : a.index - b.index))
    .map(({ record }) => record);
}
