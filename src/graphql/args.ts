import { invalidParameter } from '../errors/index.js';
import { DEFAULT_PAGE, DEFAULT_PAGE_SIZE, RANGES, type Range } from '../limits.js';

/** Throws 400 unless `value` (when given) is an integer within `range` (src/limits.ts). */
export function checkRange(name: string, value: number | null | undefined, range: Range): void {
  if (value == null) return;
  if (!Number.isInteger(value) || value < range.min || value > range.max) {
    throw invalidParameter(name, `must be an integer from ${range.min} to ${range.max}`, value);
  }
}

/** Validates paging and returns concrete values (an explicit null means the list's default). */
export function checkPaging(page: number | null | undefined, size: number | null | undefined, list: keyof typeof DEFAULT_PAGE_SIZE) {
  const p = page ?? DEFAULT_PAGE;
  const s = size ?? DEFAULT_PAGE_SIZE[list];
  checkRange('page', p, RANGES.page);
  checkRange('size', s, RANGES.size);
  return { page: p, size: s };
}

/** Maps SortDirection to MongoDB's 1/-1. */
export function direction(value: 'ASC' | 'DESC' | null | undefined): 1 | -1 {
  return value === 'DESC' ? -1 : 1;
}
