import type { z } from 'zod';
import type { SchoolEntity } from '../../data/school/types.js';
import { NotFoundError } from '../../errors/index.js';
import { csrfField, errorSummary, withQuery, type FieldError } from '../web/components.js';
import { parseForm } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type { Texts } from '../web/texts/index.js';
import type { AdminClubChoicesQuery, AdminClubChoicesQueryVariables, Language } from './__generated__/operations.js';
import type { AdminDeps } from './deps.js';
import { ADMIN_CLUB_CHOICES } from './operations/records.js';
import { atInputs, formValues, idParam, language, unconfirmed } from './ui.js';

/*
 * The pages of a school record (a student, a club, a project) take one way through: a record's
 * page (or a new one's) is its form and, once saved, its status actions; a posted form is
 * parsed, its mutation run, and answered with the record's page and a flash, or the form again
 * (422) with each refusal under its input.
 */

export type Values = Readonly<Record<string, string>>;

/** A form as a record's page shows it. */
export interface FormState {
  readonly values: Values;
  readonly errors: readonly FieldError[];
}

/** A record's page: the record (null on a new record's page) and the choices of its selects. */
export interface Shown<R, X> {
  readonly record: R | null;
  readonly choices: X;
}

/**
 * What a kind of record's pages need: where they are, how a page is found, filled and drawn, and
 * the flashes of its form (created, updated, unchanged) and of its status actions (`A`).
 */
export interface Pages<R extends { readonly id: number }, X, A extends string> {
  /** The list: a record's page is `${list}/${id}`. */
  readonly list: string;
  done(t: Texts): Readonly<Record<'created' | 'updated' | 'unchanged' | A, string>>;
  /** The values a new record's form starts with. */
  readonly defaults: Values;
  /** The data layer's field → the form's input that shows its error. */
  readonly aliases?: Readonly<Record<string, string>>;
  /** The choices a new record's page offers. */
  choices(req: PageRequest, deps: AdminDeps): Promise<X>;
  /** The record of the id in the path, with its page's choices (a 404 when there is no such record). */
  load(req: PageRequest, deps: AdminDeps): Promise<{ readonly record: R; readonly choices: X }>;
  /** The form's values of a saved record. */
  values(record: R): Values;
  show(req: PageRequest, shown: Shown<R, X>, form: FormState, status?: number): Outcome;
}

/** What a create answered: its refusals, or the record it wrote. */
export interface Created {
  readonly errors: readonly FieldError[];
  readonly id: number | null;
}

/** What an update answered: its refusals, and the batch it wrote (none when nothing changed). */
export interface Updated {
  readonly errors: readonly FieldError[];
  readonly batchId?: string | null;
}

/** A kind of record's form: its fields (zod: the mutation's input) and its two mutations. */
export interface Writes<R, F extends z.ZodType> {
  form(req: PageRequest, record: R | null): F;
  create(req: PageRequest, deps: AdminDeps, input: z.output<F>): Promise<Created>;
  update(req: PageRequest, deps: AdminDeps, record: R, input: z.output<F>): Promise<Updated>;
}

/** The handlers of a record's form: its page, a new one's, and the create and update they post. */
export function forms<R extends { readonly id: number }, X, A extends string, F extends z.ZodType>(
  pages: Pages<R, X, A>,
  writes: Writes<R, F>,
) {
  const blankPage = async (req: PageRequest, deps: AdminDeps) => ({ record: null, choices: await pages.choices(req, deps) });
  const detail: Handler<AdminDeps> = async (req, deps) => {
    const shown = await pages.load(req, deps);
    return pages.show(req, shown, { values: pages.values(shown.record), errors: [] });
  };
  const blank: Handler<AdminDeps> = async (req, deps) =>
    pages.show(req, await blankPage(req, deps), { values: pages.defaults, errors: [] });
  const create: Handler<AdminDeps> = async (req, deps) => {
    const again = async (errors: readonly FieldError[]) =>
      pages.show(req, await blankPage(req, deps), { values: formValues(req), errors }, 422);
    const parsed = parseForm(writes.form(req, null), req.form);
    if (!parsed.ok) return again(parsed.errors);
    const created = await writes.create(req, deps, parsed.value);
    if (created.errors.length === 0 && created.id !== null)
      return redirect(`${pages.list}/${created.id}`, { kind: 'ok', text: pages.done(req.t).created });
    return again(atInputs(created.errors, pages.aliases));
  };
  const update: Handler<AdminDeps> = async (req, deps) => {
    const shown = await pages.load(req, deps);
    const again = (errors: readonly FieldError[]) => pages.show(req, shown, { values: formValues(req), errors }, 422);
    const parsed = parseForm(writes.form(req, shown.record), req.form);
    if (!parsed.ok) return again(parsed.errors);
    const updated = await writes.update(req, deps, shown.record, parsed.value);
    if (updated.errors.length > 0) return again(atInputs(updated.errors, pages.aliases));
    const texts = pages.done(req.t);
    return redirect(`${pages.list}/${shown.record.id}`, { kind: 'ok', text: updated.batchId ? texts.updated : texts.unchanged });
  };
  return { detail, blank, create, update };
}

/**
 * A status action of a record's page (graduate, abolish, end, delete, ...): the mutation, then the
 * record's page (the list, after a delete) with a flash; or the record's page again with the
 * refusals, its form as posted (a reactivation's class and number). A delete first asks for its
 * confirmation box.
 */
export function action<R extends { readonly id: number }, X, A extends string>(
  pages: Pages<R, X, A>,
  done: A,
  run: (req: PageRequest, deps: AdminDeps, id: number) => Promise<{ readonly errors: readonly FieldError[] }>,
  options: { readonly deletes?: boolean } = {},
): Handler<AdminDeps> {
  return async (req, deps) => {
    const shown = await pages.load(req, deps);
    const id = shown.record.id;
    const refused = options.deletes ? unconfirmed(req.t, req) : [];
    const errors = refused.length > 0 ? refused : atInputs((await run(req, deps, id)).errors, pages.aliases);
    if (errors.length === 0)
      return redirect(options.deletes ? pages.list : `${pages.list}/${id}`, { kind: 'ok', text: pages.done(req.t)[done] });
    return pages.show(req, shown, { values: { ...pages.values(shown.record), ...formValues(req) }, errors }, 422);
  };
}

/** Runs a school record's mutation, in the page's language (its messages are in it). */
export async function mutate<TData, TVariables extends { lang: Language }>(
  req: PageRequest,
  deps: AdminDeps,
  document: string,
  variables: Omit<TVariables, 'lang'>,
): Promise<TData> {
  return deps.school.run<TData, TVariables>(req, document, { ...variables, lang: language(req.lang) } as TVariables);
}

/** The fields of a mutation's result that answer with refusals (its payloads). */
type PayloadField<TData> = {
  [K in keyof TData]: TData[K] extends { readonly errors: readonly FieldError[] } ? K : never;
}[keyof TData];

/**
 * A mutation of a record by its id alone (graduate, abolish, reopen, delete, ...), in the page's
 * language, as a status action runs it; its answer is the result's `field`.
 */
export function byId<TData>(
  document: string,
  field: PayloadField<TData>,
): (req: PageRequest, deps: AdminDeps, id: number) => Promise<{ readonly errors: readonly FieldError[] }> {
  return async (req, deps, id) => {
    const data = await mutate<TData, { id: number; lang: Language }>(req, deps, document, { id });
    return data[field] as { readonly errors: readonly FieldError[] };
  };
}

/** The record of the id in the page's path, and its page's choices, from one query (a 404 without the record). */
export function load<TData, R, X>(
  document: string,
  pick: (data: TData) => { readonly record: R | undefined; readonly choices: X },
): (req: PageRequest, deps: AdminDeps) => Promise<{ readonly record: R; readonly choices: X }> {
  return async (req, deps) => {
    const { record, choices } = pick(await deps.school.run<TData, { id: number }>(req, document, { id: idParam(req) }));
    if (record === undefined) throw new NotFoundError('No such record.');
    return { record, choices };
  };
}

export type ClubChoice = AdminClubChoicesQuery['clubs']['clubs'][number];

/** The clubs a student's or a project's selects offer. */
export async function clubChoices(req: PageRequest, deps: AdminDeps): Promise<readonly ClubChoice[]> {
  return (await deps.school.run<AdminClubChoicesQuery, AdminClubChoicesQueryVariables>(req, ADMIN_CLUB_CHOICES, {})).clubs.clubs;
}

/** The texts every kind of record's page has (`t.admin.students`, `.clubs`, `.projects`). */
export interface PageTexts {
  readonly newTitle: string;
  editTitle(name: string): string;
  readonly back: string;
  readonly save: string;
  readonly create: string;
  readonly actions: string;
  readonly delete: string;
  readonly deleteHint: string;
  readonly history: string;
}

export interface Layout {
  readonly list: string;
  readonly entity: SchoolEntity;
  readonly texts: PageTexts;
  /** The saved record (null on a new record's page). */
  readonly record: { readonly id: number; readonly name: string } | null;
  readonly errors: readonly FieldError[];
  /** The form's inputs, in order (the error summary links to them). */
  readonly inputs: readonly string[];
  /** The form's fields. */
  readonly fields: Html;
  /** The forms that change a saved record's status. */
  readonly actions: Html;
}

/**
 * A record's page: back to the list, the error summary, the form (posted to the list for a new
 * record, to the record's page for a saved one), and under it the box of a saved record: its
 * status actions, the delete form (a fieldset whose box must be ticked, with what deleting does)
 * and the link to the record's changes in the audit log.
 */
export function layout(req: PageRequest, o: Layout, status = 200): Outcome {
  const { texts, record } = o;
  const path = record ? `${o.list}/${record.id}` : o.list;
  const form = html`<form method="post" action="${path}" class="card" novalidate>
    ${csrfField(req.csrf)} ${o.fields}
    <div class="actions"><button type="submit">${record ? texts.save : texts.create}</button></div>
  </form>`;
  const box = record
    ? html`<section aria-labelledby="record-actions" class="card">
        <h2 id="record-actions">${texts.actions}</h2>
        ${o.actions}
        <form method="post" action="${path}/delete">
          ${csrfField(req.csrf)}
          <fieldset>
            <legend>${texts.delete}</legend>
            <p class="hint" id="delete-hint">${texts.deleteHint}</p>
            <label class="check"
              ><input type="checkbox" name="confirm" value="yes" required aria-describedby="delete-hint" /> ${req.t.kit.confirm}</label
            >
            <div class="actions"><button type="submit" class="danger">${texts.delete}</button></div>
          </fieldset>
        </form>
        <p><a href="${withQuery('/admin/audit', { entity: o.entity, recordId: record.id })}">${texts.history}</a></p>
      </section>`
    : '';
  return page(
    record ? texts.editTitle(record.name) : texts.newTitle,
    html`<p><a href="${o.list}">← ${texts.back}</a></p>
      ${errorSummary(req.t, o.errors, o.inputs)} ${form} ${box}`,
    status,
  );
}
