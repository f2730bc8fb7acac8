import { z } from 'zod';
import { invalidParameter } from '../../graphql/args.js';
import { isLocalDate } from '../../graphql/resolvers/scalars.js';

/**
 * Strict query-string parsers (DECISIONS.md): plain base-10 integers, true/false in any case,
 * exact enum names, real YYYY-MM-DD dates. Every failure names the parameter and what it allows.
 */
type Range = { readonly min: number; readonly max: number };

const single = z.string({ error: 'must be given only once' });

/** An integer within `range`; anything else (format or range) is one message. */
export function intParam(range: Range) {
  const expectation = `must be an integer from ${range.min} to ${range.max}`;
  return single.transform((raw, ctx) => {
    const value = /^[+-]?\d{1,16}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
    if (!Number.isSafeInteger(value) || value < range.min || value > range.max) {
      ctx.addIssue({ code: 'custom', message: expectation });
      return z.NEVER;
    }
    return value;
  });
}

export function boolParam() {
  return single.transform((raw, ctx) => {
    const value = raw.trim().toLowerCase();
    if (value !== 'true' && value !== 'false') {
      ctx.addIssue({ code: 'custom', message: 'must be true or false' });
      return z.NEVER;
    }
    return value === 'true';
  });
}

export function enumParam<const T extends readonly [string, ...string[]]>(values: T) {
  return single.transform((raw, ctx) => {
    if (!(values as readonly string[]).includes(raw)) {
      ctx.addIssue({ code: 'custom', message: `must be one of ${values.join(', ')}` });
      return z.NEVER;
    }
    return raw as T[number];
  });
}

/** Free text for substring filters; empty means "not applied", over 100 characters is refused. */
export function textParam() {
  return single.transform((raw, ctx) => {
    if (raw.length > 100) {
      ctx.addIssue({ code: 'custom', message: 'must be at most 100 characters' });
      return z.NEVER;
    }
    return raw === '' ? undefined : raw;
  });
}

export function dateParam() {
  return single.transform((raw, ctx) => {
    if (!isLocalDate(raw)) {
      ctx.addIssue({ code: 'custom', message: 'must be a real calendar date written YYYY-MM-DD' });
      return z.NEVER;
    }
    return raw;
  });
}

/** Parses a query object; unknown parameters are ignored, the first problem is a 400. */
export function parseQuery<S extends z.ZodObject>(schema: S, query: Record<string, string | string[] | undefined>): z.output<S> {
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
 * Memoises a query-string parser: a repeated query string skips validation and key building.
 * Only successful parses are kept (a bad query throws each time); bounded, oldest dropped first.
 */
export function memoByQueryString<T>(parse: (query: Record<string, string | string[] | undefined>) => T, max = 1000) {
  const memo = new Map<string, T>();
  return (querystring: string, query: () => Record<string, string | string[] | undefined>): T => {
    const hit = memo.get(querystring);
    if (hit !== undefined) return hit;
    const value = parse(query());
    if (memo.size >= max) memo.delete(memo.keys().next().value ?? '');
    memo.set(querystring, value);
    return value;
  };
}
