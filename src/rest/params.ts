import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { isCalendarDate } from '../calendar.js';
import { invalidParameter } from '../errors/index.js';
import { MAX_TEXT_LENGTH, type Range } from '../limits.js';

/**
 * Strict query-string parsers (docs/decisions.md, "Parameter parsing is strict"): plain base-10
 * integers, true/false in any case, exact enum names, real YYYY-MM-DD dates. Every failure names
 * the parameter and what it allows. Each parser carries, as zod metadata, the JSON Schema of the
 * value it accepts, which is what the OpenAPI document shows (src/rest/openapi.ts).
 */

const single = z.string({ error: 'must be given only once' });

/** An integer within `range`; anything else (format or range) is one message. */
export function intParam(range: Range) {
  const expectation = `must be an integer from ${range.min} to ${range.max}`;
  return single
    .transform((raw, ctx) => {
      const value = /^[+-]?\d{1,16}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
      if (!Number.isSafeInteger(value) || value < range.min || value > range.max) {
        ctx.addIssue({ code: 'custom', message: expectation });
        return z.NEVER;
      }
      return value;
    })
    .meta({ type: 'integer', minimum: range.min, maximum: range.max });
}

export function boolParam() {
  return single
    .transform((raw, ctx) => {
      const value = raw.trim().toLowerCase();
      if (value !== 'true' && value !== 'false') {
        ctx.addIssue({ code: 'custom', message: 'must be true or false' });
        return z.NEVER;
      }
      return value === 'true';
    })
    .meta({ type: 'boolean' });
}

/** One of an enum's values, exactly (the schema's enums: src/data/__generated__/enums.ts). */
export function enumParam<T extends string>(values: Readonly<Record<string, T>> | readonly T[]) {
  const allowed: readonly T[] = Array.isArray(values) ? values : Object.values(values);
  return single
    .transform((raw, ctx) => {
      if (!(allowed as readonly string[]).includes(raw)) {
        ctx.addIssue({ code: 'custom', message: `must be one of ${allowed.join(', ')}` });
        return z.NEVER;
      }
      return raw as T;
    })
    .meta({ type: 'string', enum: [...allowed] });
}

/** Free text for substring filters; empty means "not applied", over the limit is refused. */
export function textParam() {
  return single
    .transform((raw, ctx) => {
      if (raw.length > MAX_TEXT_LENGTH) {
        ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_TEXT_LENGTH} characters` });
        return z.NEVER;
      }
      return raw === '' ? undefined : raw;
    })
    .meta({ type: 'string', maxLength: MAX_TEXT_LENGTH });
}

export function dateParam() {
  return single
    .transform((raw, ctx) => {
      if (!isCalendarDate(raw)) {
        ctx.addIssue({ code: 'custom', message: 'must be a real calendar date written YYYY-MM-DD' });
        return z.NEVER;
      }
      return raw;
    })
    .meta({ type: 'string', format: 'date' });
}

export type Query = Record<string, string | string[] | undefined>;

/** Parses a query object; unknown parameters are ignored, the first problem is a 400. */
export function parseQuery<S extends z.ZodObject>(schema: S, query: Query): z.output<S> {
  const result = schema.safeParse(query);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = String(issue?.path[0] ?? 'query');
  throw invalidParameter(name, issue?.message ?? 'is invalid', query[name]);
}

/** Drops undefined entries, so GraphQL applies its own argument defaults. */
export function defined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Memoises a query-string parser: a repeated query string skips validation. Only successful
 * parses are kept (a bad query throws each time), the least recently used dropped first.
 */
export function memoByQueryString<T extends object>(parse: (query: Query) => T, max = 1000) {
  const memo = new LRUCache<string, T>({ max });
  return (querystring: string, query: () => Query): T => {
    const hit = memo.get(querystring);
    if (hit !== undefined) return hit;
    const value = parse(query());
    memo.set(querystring, value);
    return value;
  };
}
