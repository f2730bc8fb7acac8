import bodyParser from 'koa-bodyparser';
import { z } from 'zod';
import type { AppContext, AppMiddleware } from '../../http/context.js';
import type { FieldError } from './components.js';

/** A submitted form: each field's text, or texts for a repeated field (checkboxes). */
export type FormFields = Readonly<Record<string, string | readonly string[]>>;

/** A field's value as shown again in its form: '' when absent, the first when repeated. */
export function formValue(fields: FormFields, name: string): string {
  const value = fields[name];
  return typeof value === 'string' ? value : (value?.[0] ?? '');
}

/** A repeated field's values (the boxes ticked of a group of checkboxes): [] when none. */
export function formList(fields: FormFields, name: string): readonly string[] {
  const value = fields[name];
  return typeof value === 'string' ? (value ? [value] : []) : (value ?? []);
}

/** Parses an urlencoded form post into `ctx.request.body` (multipart posts: ./multipart.ts). */
export function urlencodedForm(): AppMiddleware {
  const parse = bodyParser({ enableTypes: ['form'], formLimit: '1mb' });
  return (ctx, next) => parse(ctx, next);
}

/** The fields of the request's parsed form (none for a request without one). */
export function formFields(ctx: AppContext): FormFields {
  const body: unknown = ctx.request.body;
  const fields: Record<string, string | readonly string[]> = {};
  if (typeof body !== 'object' || body === null) return fields;
  for (const [name, value] of Object.entries(body)) {
    if (typeof value === 'string') fields[name] = value;
    else if (Array.isArray(value)) fields[name] = value.filter((v): v is string => typeof v === 'string');
  }
  return fields;
}

/** A field's text ('' when absent; the first when repeated), trimmed unless it is a secret. */
export const text = (options: { trim?: boolean; max?: number } = {}) =>
  z.preprocess(
    (value) => {
      const first = Array.isArray(value) ? value[0] : value;
      const raw = typeof first === 'string' ? first : '';
      return options.trim === false ? raw : raw.trim();
    },
    options.max === undefined ? z.string() : z.string().max(options.max),
  );

/** Every value of a repeated field (checkboxes): [] when none is ticked. */
export const list = () =>
  z.preprocess((value) => (Array.isArray(value) ? value : typeof value === 'string' ? [value] : []), z.array(z.string()));

/** A ticked checkbox (`value="yes"`). */
export const ticked = () => z.preprocess((value) => (Array.isArray(value) ? value[0] : value) === 'yes', z.boolean());

/** The outcome of parsing a form: its typed values, or the errors of its fields (messages from the schema). */
export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: FieldError[] };

/**
 * Parses a form with a zod schema whose messages are the page's texts: the typed value, or one
 * error per field that failed (under the field's name, so it shows at that field and in the summary).
 */
export function parseForm<S extends z.ZodType>(schema: S, fields: FormFields): Parsed<z.output<S>> {
  const parsed = schema.safeParse(fields);
  if (parsed.success) return { ok: true, value: parsed.data };
  const errors: FieldError[] = [];
  for (const issue of parsed.error.issues) {
    const field = String(issue.path[0] ?? '');
    if (!errors.some((e) => e.field === field)) errors.push({ field, message: issue.message });
  }
  return { ok: false, errors };
}

/** A field whose empty text means "none": the trimmed text, or null. */
export const textOrNull = () => text().transform((value) => value || null);

/** One of `values`, or null (empty, or anything else: the data layer says what is missing). */
export const oneOf = <T extends string>(values: readonly T[]) => text().transform((value) => values.find((v) => v === value) ?? null);

/**
 * A whole number, or null when empty; any other text is refused with `message(text)` (the only
 * rule a form checks itself: the schema of the operation could not take it).
 */
export const integerOrNull = (message: (got: string) => string) =>
  text().transform((value, ctx): number | null => {
    if (value === '') return null;
    if (/^-?\d{1,9}$/.test(value)) return Number(value);
    ctx.addIssue({ code: 'custom', message: message(value) });
    return z.NEVER;
  });
