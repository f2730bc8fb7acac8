/*
 * The rules every list query of the data API follows (docs/decisions.md, "Data API"), as pure
 * predicates and comparators over records held in memory (src/data/school/read-model.ts):
 * - text filters match substrings, case-insensitively for Latin letters, taking the text
 *   literally;
 * - every other filter is an exact match; an omitted filter is not applied;
 * - text sorts by code point (the binary order of MongoDB and FerretDB); nulls sort last in
 *   both directions; the id ascending breaks every tie, so pages never overlap or skip.
 */

export type Compare<T> = (a: T, b: T) => number;

/** A sort: its name (one cached order per name, src/data/school/read-model.ts) and its total comparator. */
export interface SortRule<T> {
  readonly key: string;
  readonly compare: Compare<T>;
}

/** One list query: which records, in which order; `id` names the one record a query asks for. */
export interface ListQuery<T> {
  readonly matches: (record: T) => boolean;
  /**
   * What `matches` tests, as a string (criteriaKey): queries with the same key match the same
   * records, so the read model keeps the records that match per key and order (src/data/school/read-model.ts).
   */
  readonly filterKey: string;
  readonly sort: SortRule<T>;
  /** The id filter (studentId, clubId, projectId): a look-up rather than a scan. */
  readonly id?: number | undefined;
  /** Projects of one club: its own short list rather than a scan. */
  readonly clubId?: number | undefined;
}

/**
 * A query's criteria as a key: the value of every criterion, in the order of `fields`, omitted ones
 * as null. `fields` is each kind's complete list of criteria (checked by its type where it is
 * declared), so two queries with the same key have the same test.
 */
export function criteriaKey<C extends object>(criteria: C, fields: readonly (keyof C)[]): string {
  return JSON.stringify(fields.map((field) => criteria[field] ?? null));
}

/** One page of records that match, from records already in the query's order, and the total. */
export function pageOf<T>(
  ordered: readonly T[],
  matches: (record: T) => boolean,
  page: number,
  size: number,
): { items: T[]; total: number } {
  const skip = page * size;
  const items: T[] = [];
  let total = 0;
  for (const record of ordered) {
    if (!matches(record)) continue;
    if (total >= skip && items.length < size) items.push(record);
    total += 1;
  }
  return { items, total };
}

/** Every test in `tests` (an empty list matches everything). */
export function allOf<T>(tests: readonly ((record: T) => boolean)[]): (record: T) => boolean {
  if (tests.length === 0) return () => true;
  if (tests.length === 1) return tests[0] as (record: T) => boolean;
  return (record) => {
    for (const test of tests) if (!test(record)) return false;
    return true;
  };
}

/** A case-insensitive (Latin letters) substring test of one text field, the text taken literally. */
export function containsText<T>(field: (record: T) => string | null | undefined, text: string): (record: T) => boolean {
  const needle = foldLatin(text);
  return (record) => {
    const value = field(record);
    return typeof value === 'string' && foldCached(value).includes(needle);
  };
}

/** Uppercase and titlecase letters; the Latin ones among them are folded. */
const CASED = /[\p{Lu}\p{Lt}]/gu;
const LATIN = /^\p{Script=Latin}$/u;

/**
 * Lowercases the Latin letters of `text` and nothing else (docs/decisions.md: "case-insensitively
 * for Latin letters"); a letter whose lowercase is longer (U+0130) is kept, so positions agree.
 */
export function foldLatin(text: string): string {
  return text.replace(CASED, (letter) => {
    if (!LATIN.test(letter)) return letter;
    const lower = letter.toLowerCase();
    return lower.length === letter.length ? lower : letter;
  });
}

/** Folded field values, kept between queries (names repeat; bounded by clearing when full). */
const folded = new Map<string, string>();
const FOLDED_MAX = 200_000;

function foldCached(value: string): string {
  let result = folded.get(value);
  if (result === undefined) {
    if (folded.size >= FOLDED_MAX) folded.clear();
    result = foldLatin(value);
    folded.set(value, result);
  }
  return result;
}

/** An exact-match test of one field (MongoDB's `{ field: value }`: a missing field never matches). */
export function equals<T, V>(field: (record: T) => V | null | undefined, value: V): (record: T) => boolean {
  return (record) => field(record) === value;
}

/**
 * Text in code point order, the binary UTF-8 order MongoDB and FerretDB sort strings by. JavaScript
 * compares UTF-16 code units, which differs only where a surrogate pair (a character beyond
 * U+FFFF) meets a character from U+E000 to U+FFFF; such units are ranked by code point.
 */
export function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codeUnitRank(x) - codeUnitRank(y);
  }
  return a.length - b.length;
}

function codeUnitRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}

function compareValues(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return compareText(String(a), String(b));
}

/** Orders by one field in `direction`, with records lacking a value after all others both ways. */
export function nullsLast<T>(field: (record: T) => string | number | null | undefined, direction: 1 | -1): Compare<T> {
  return (a, b) => {
    const x = field(a);
    const y = field(b);
    if (x == null || y == null) return x == null ? (y == null ? 0 : 1) : -1;
    return direction * compareValues(x, y);
  };
}

/**
 * A total sort named `key`: the comparators in turn, then the id ascending as the final
 * tie-breaker; sorting by the id itself takes the requested direction.
 */
export function sortRule<T extends { _id: number }>(key: string, direction: 1 | -1, ...parts: Compare<T>[]): SortRule<T> {
  const byId: Compare<T> = (a, b) => a._id - b._id;
  if (parts.length === 0) return { key: `${key}:${direction}`, compare: (a, b) => direction * byId(a, b) };
  const compare: Compare<T> = (a, b) => {
    for (const part of parts) {
      const order = part(a, b);
      if (order !== 0) return order;
    }
    return byId(a, b);
  };
  return { key: `${key}:${direction}`, compare };
}

/** Per criterion of a kind's queries, the test a given value makes; null for one applied apart. */
export type CriterionTests<C, T> = { readonly [K in keyof C]-?: ((value: NonNullable<C[K]>) => (record: T) => boolean) | null };

/**
 * A kind's list queries from the table of its criteria and its orders: a query's test (each
 * criterion given, omitted ones not applied, and `also`), its key (criteriaKey: the table names
 * every criterion, the type refuses one that misses any) and its order per sort name.
 */
export function listQueries<C extends object, T extends { _id: number }, S extends string>(o: {
  readonly tests: CriterionTests<C, T>;
  readonly orders: (direction: 1 | -1) => Readonly<Record<S, Compare<T>[]>>;
  readonly defaultOrder: S;
}) {
  const fields = Object.keys(o.tests) as (keyof C)[];
  return {
    matcher(c: C, also: readonly ((record: T) => boolean)[] = []): (record: T) => boolean {
      const given = fields.flatMap((field) => {
        const value = c[field];
        const test = o.tests[field];
        return value == null || test === null ? [] : [test(value as NonNullable<C[typeof field]>)];
      });
      return allOf([...given, ...also]);
    },
    key: (c: C): string => criteriaKey(c, fields),
    sort(sortBy: S | null | undefined, direction: 1 | -1): SortRule<T> {
      const key = sortBy ?? o.defaultOrder;
      return sortRule(key, direction, ...o.orders(direction)[key]);
    },
  };
}

/** A MongoDB filter of a case-insensitive substring match, with the user's text taken literally. */
export function containsInsensitive(text: string): { $regex: string; $options: string } {
  return { $regex: text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), $options: 'i' };
}
