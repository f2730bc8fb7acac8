import { BadRequestError, invalidParameter } from '../errors/index.js';
import { daysInclusive } from '../calendar.js';
import { MAX_RANGE_DAYS, RANGES } from '../limits.js';
import { checkRange } from './args.js';

export interface DateArgs {
  date?: string | null | undefined;
  fromDate?: string | null | undefined;
  toDate?: string | null | undefined;
}

export interface DateRange {
  fromDate: string;
  toDate: string;
}

/**
 * The date rules of docs/decisions.md, for REST and GraphQL alike: `date` alone, or `fromDate` with
 * `toDate`; none means `today`. Each refusal is a 400 naming the parameter at fault.
 */
export function resolveDateRange(args: DateArgs, today: string): DateRange {
  const { date, fromDate, toDate } = args;
  if (date != null) {
    if (fromDate != null || toDate != null) {
      throw invalidParameter('date', 'must not be combined with fromDate or toDate; give either date or fromDate and toDate', date);
    }
    return { fromDate: date, toDate: date };
  }
  if (fromDate == null && toDate == null) return { fromDate: today, toDate: today };
  if (toDate == null)
    throw new BadRequestError("Missing parameter 'toDate': a range needs both fromDate and toDate (YYYY-MM-DD).", 'toDate');
  if (fromDate == null)
    throw new BadRequestError("Missing parameter 'fromDate': a range needs both fromDate and toDate (YYYY-MM-DD).", 'fromDate');
  if (fromDate > toDate) throw invalidParameter('fromDate', `must not be after toDate (${toDate})`, fromDate);
  if (daysInclusive(fromDate, toDate) > MAX_RANGE_DAYS) {
    throw invalidParameter('toDate', `must be at most ${MAX_RANGE_DAYS} days from fromDate (${fromDate}), both included`, toDate);
  }
  return { fromDate, toDate };
}

/** grade 1-3 and classNum 1-4, both required, for timetables (REST and GraphQL alike). */
export function requireClass(grade: number | null | undefined, classNum: number | null | undefined): { grade: number; classNum: number } {
  if (grade == null) throw new BadRequestError("Missing parameter 'grade': an integer from 1 to 3 is required.", 'grade');
  if (classNum == null) throw new BadRequestError("Missing parameter 'classNum': an integer from 1 to 4 is required.", 'classNum');
  checkRange('grade', grade, RANGES.grade);
  checkRange('classNum', classNum, RANGES.classNum);
  return { grade, classNum };
}
