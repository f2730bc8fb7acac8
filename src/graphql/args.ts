import { BadRequestError } from '../errors/index.js';

/** Ranges of the spec and DECISIONS.md, checked for GraphQL and REST callers alike. */
export const LIMITS = {
  page: { min: 0, max: 2_147_483_647 },
  size: { min: 1, max: 1000 },
  grade: { min: 1, max: 3 },
  classNum: { min: 1, max: 4 },
  number: { min: 1, max: 18 },
  id: { min: 1, max: Number.MAX_SAFE_INTEGER },
} as const;

/** The one wording of a bad parameter: it names the parameter, the expectation and the value. */
export function invalidParameter(name: string, expectation: string, got: unknown): BadRequestError {
  const quote = (v: string) => `'${v.length > 64 ? `${v.slice(0, 64)}…` : v}'`;
  const shown = typeof got === 'string' ? quote(got) : Array.isArray(got) ? got.map((v) => quote(String(v))).join(', ') : String(got);
  return new BadRequestError(`Invalid parameter '${name}': ${expectation} (got ${shown}).`, name);
}

/** Throws 400 unless `value` (when given) is an integer within `range`. */
export function checkRange(name: string, value: number | null | undefined, range: { min: number; max: number }): void {
  if (value == null) return;
  if (!Number.isInteger(value) || value < range.min || value > range.max) {
    throw invalidParameter(name, `must be an integer from ${range.min} to ${range.max}`, value);
  }
}

/** Validates paging and returns concrete values (GraphQL defaults fill omitted ones). */
export function checkPaging(page: number | null | undefined, size: number | null | undefined, defaultSize: number) {
  const p = page ?? 0;
  const s = size ?? defaultSize;
  checkRange('page', p, LIMITS.page);
  checkRange('size', s, LIMITS.size);
  return { page: p, size: s };
}

/** Maps SortDirection to MongoDB's 1/-1. */
export function direction(value: 'ASC' | 'DESC' | null | undefined): 1 | -1 {
  return value === 'DESC' ? -1 : 1;
}
