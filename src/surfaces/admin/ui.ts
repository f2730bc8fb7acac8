import {
  ACTION_LABELS,
  CLUB_STATUS_LABELS,
  CLUB_TYPE_LABELS,
  MAJOR_LABELS,
  PROJECT_STATUS_LABELS,
  ROLE_LABELS,
  SEX_LABELS,
  fieldLabel,
  labelOf,
  type Lang,
} from '../../data/school/labels.js';
import { issueMessage } from '../../data/school/messages.js';
import type { SchoolEntity } from '../../data/school/types.js';
import { NotFoundError } from '../../errors/index.js';
import { runOperation } from '../../graphql/server.js';
import type { AppContext } from '../../http/context.js';
import { html, type Html } from '../../http/web/html.js';
import type { WebKit } from '../web/index.js';

/*
 * What the pages of the admin console share: running their typed operations, form fields with
 * inline errors (aria-invalid, aria-describedby) and the summary above a form (role="alert"),
 * list pages (filters, table, paging), a record's actions, query parameters and redirects.
 * Every page works without JavaScript.
 */

/** Runs one of the console's typed operations (src/surfaces/admin/operations) as the signed-in account. */
export function op<TData, TVariables extends Record<string, unknown>>(
  kit: WebKit,
  ctx: AppContext,
  query: string,
  variables: TVariables,
): Promise<TData> {
  return runOperation<TData>(kit.graphql, { query, variables }, kit.context(ctx));
}

/** The GraphQL Language of a page's language (for the messages operations ask for). */
export function language(lang: Lang): 'KO' | 'EN' {
  return lang === 'ko' ? 'KO' : 'EN';
}

export interface FieldMessage {
  readonly field: string;
  readonly message: string;
}

/** Messages by form field; `aliases` maps an error's field to the input that shows it. */
export function errorsByField(errors: readonly FieldMessage[], aliases: Readonly<Record<string, string>> = {}): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const e of errors) {
    const field = aliases[e.field] ?? e.field;
    map.set(field, [...(map.get(field) ?? []), e.message]);
  }
  return map;
}

const SHARED = {
  ko: {
    problems: (n: number) => `고칠 것이 ${n}개 있습니다`,
    previous: '이전',
    next: '다음',
    page: (p: number, total: number) => `${p} / ${total} 쪽`,
    none: '없음',
    search: '찾기',
    reset: '초기화',
    all: '전체',
    noRows: '해당하는 항목이 없습니다.',
    confirm: '확인했습니다',
    confirmMissing: '삭제하려면 확인란을 선택하세요.',
  },
  en: {
    problems: (n: number) => `${n} ${n === 1 ? 'thing needs' : 'things need'} fixing`,
    previous: 'Previous',
    next: 'Next',
    page: (p: number, total: number) => `Page ${p} of ${total}`,
    none: 'None',
    search: 'Search',
    reset: 'Reset',
    all: 'All',
    noRows: 'Nothing matches.',
    confirm: 'I understand',
    confirmMissing: 'Tick the confirmation box to delete.',
  },
} as const;

export function shared(lang: Lang) {
  return SHARED[lang];
}

const inputId = (name: string) => `f-${name}`;

/**
 * The error summary at the top of a form: a heading and a link to each field with a problem
 * (errors of fields the form has no input for are listed as text). It takes the focus when the
 * page loads (autofocus on a tabindex=-1 box), so keyboard and screen-reader users start at the
 * problems after a refused submit instead of at the top of the page.
 */
export function errorSummary(lang: Lang, errors: ReadonlyMap<string, string[]>, inputs: readonly string[]): Html | '' {
  // In the order of the form's inputs (the data layer reports missing fields first), the rest after.
  const order = (field: string) => (inputs.includes(field) ? inputs.indexOf(field) : inputs.length);
  const all = [...errors]
    .sort(([a], [b]) => order(a) - order(b))
    .flatMap(([field, messages]) => messages.map((message) => ({ field, message })));
  if (all.length === 0) return '';
  return html`<div class="error summary" role="alert" tabindex="-1" id="error-summary" autofocus>
    <h2>${SHARED[lang].problems(all.length)}</h2>
    <ul>
      ${all.map((e) => html`<li>${inputs.includes(e.field) ? html`<a href="#${inputId(e.field)}">${e.message}</a>` : e.message}</li>`)}
    </ul>
  </div>`;
}

interface FieldBase {
  readonly name: string;
  readonly label: string;
  readonly errors: ReadonlyMap<string, string[]>;
  readonly hint?: string;
  readonly required?: boolean;
}

function described(base: FieldBase): { invalid: boolean; describedBy: string; after: Html } {
  const messages = base.errors.get(base.name) ?? [];
  const id = inputId(base.name);
  const ids = [messages.length > 0 ? `${id}-error` : null, base.hint ? `${id}-hint` : null].filter(Boolean).join(' ');
  return {
    invalid: messages.length > 0,
    describedBy: ids,
    after: html`${base.hint ? html`<p class="hint" id="${id}-hint">${base.hint}</p>` : ''}${
      messages.length > 0 ? html`<p class="field-error" id="${id}-error">${messages.join(' ')}</p>` : ''
    }`,
  };
}

/** A labelled input with its hint and inline error. */
export function inputField(
  o: FieldBase & {
    value: string | number | null | undefined;
    type?: string;
    inputmode?: string;
    autocomplete?: string;
    min?: number;
    max?: number;
  },
): Html {
  const d = described(o);
  const id = inputId(o.name);
  return html`<div class="field">
    <label for="${id}">${o.label}${o.required ? html` <span class="req" aria-hidden="true">*</span>` : ''}</label>
    <input
      id="${id}"
      name="${o.name}"
      type="${o.type ?? 'text'}"
      value="${o.value ?? ''}"
      ${o.required ? html`required` : ''}
      ${o.inputmode ? html`inputmode="${o.inputmode}"` : ''}
      ${o.autocomplete ? html`autocomplete="${o.autocomplete}"` : html`autocomplete="off"`}
      ${o.min !== undefined ? html`min="${o.min}"` : ''}
      ${o.max !== undefined ? html`max="${o.max}"` : ''}
      ${d.invalid ? html`aria-invalid="true"` : ''}
      ${d.describedBy ? html`aria-describedby="${d.describedBy}"` : ''}
    />
    ${d.after}
  </div>`;
}

/** A labelled select. */
export function selectField(
  o: FieldBase & { value: string | number | null | undefined; options: readonly { value: string; label: string }[] },
): Html {
  const d = described(o);
  const id = inputId(o.name);
  const current = o.value == null ? '' : String(o.value);
  return html`<div class="field">
    <label for="${id}">${o.label}${o.required ? html` <span class="req" aria-hidden="true">*</span>` : ''}</label>
    <select
      id="${id}"
      name="${o.name}"
      ${o.required ? html`required` : ''}
      ${d.invalid ? html`aria-invalid="true"` : ''}
      ${d.describedBy ? html`aria-describedby="${d.describedBy}"` : ''}
    >
      ${o.options.map((opt) => html`<option value="${opt.value}" ${opt.value === current ? html`selected` : ''}>${opt.label}</option>`)}
    </select>
    ${d.after}
  </div>`;
}

/** A labelled textarea. */
export function textareaField(o: FieldBase & { value: string | null | undefined; rows?: number }): Html {
  const d = described(o);
  const id = inputId(o.name);
  return html`<div class="field">
    <label for="${id}">${o.label}${o.required ? html` <span class="req" aria-hidden="true">*</span>` : ''}</label>
    <textarea
      id="${id}"
      name="${o.name}"
      rows="${o.rows ?? 4}"
      ${d.invalid ? html`aria-invalid="true"` : ''}
      ${d.describedBy ? html`aria-describedby="${d.describedBy}"` : ''}
    >
${o.value ?? ''}</textarea>
    ${d.after}
  </div>`;
}

/** Previous / next links of a paged list (page is 0-based, shown 1-based). */
export function pager(lang: Lang, page: number, totalPages: number, hrefOf: (page: number) => string): Html | '' {
  if (totalPages <= 1) return '';
  const t = SHARED[lang];
  return html`<nav class="pager" aria-label="${t.page(page + 1, totalPages)}">
    ${page > 0 ? html`<a href="${hrefOf(page - 1)}" rel="prev">${t.previous}</a>` : ''}
    <span>${t.page(page + 1, totalPages)}</span>
    ${page + 1 < totalPages ? html`<a href="${hrefOf(page + 1)}" rel="next">${t.next}</a>` : ''}
  </nav>`;
}

/** A query parameter as trimmed text ('' when absent). */
export function queryText(ctx: AppContext, name: string): string {
  const value = ctx.query[name];
  return typeof value === 'string' ? value.trim().slice(0, 200) : '';
}

/** A query parameter as an integer within [min, max], else null. */
export function queryInt(ctx: AppContext, name: string, min: number, max: number): number | null {
  const text = queryText(ctx, name);
  if (!/^\d{1,9}$/.test(text)) return null;
  const n = Number(text);
  return n >= min && n <= max ? n : null;
}

/** A URL of `path` with the non-empty parameters. */
export function withQuery(path: string, params: Readonly<Record<string, string | number | null | undefined>>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') query.set(k, String(v));
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

/**
 * Reads a submitted form's integer fields for a mutation: '' is null; text that is no integer
 * (the schema could not take it) is null too, and its message goes to `errors` under `field`
 * (the field the data layer names, when the input is called otherwise). Every other rule is the
 * data layer's.
 */
export function formInts(lang: Lang, values: Readonly<Record<string, string | undefined>>, errors: FieldMessage[]) {
  return (name: string, field = name): number | null => {
    const text = (values[name] ?? '').trim();
    if (text === '') return null;
    if (/^-?\d{1,9}$/.test(text)) return Number(text);
    errors.push({ field, message: issueMessage({ field, code: 'NOT_INTEGER', params: { got: text } }, lang) });
    return null;
  };
}

/** The id of a record's page (/admin/students/:id), or 404 with `notFound`. */
export function idParam(ctx: AppContext, notFound: string): number {
  const id = Number(ctx.params['id']);
  if (!Number.isSafeInteger(id) || id < 1) throw new NotFoundError(notFound);
  return id;
}

/** After a form's change: 303 to the page that shows it (a reload does not post again). */
export function seeOther(ctx: AppContext, location: string): void {
  ctx.status = 303;
  ctx.redirect(location);
}

/** Back to the list a form was posted from (only that list, with its query: never another address). */
export function backToList(list: string, value: string | undefined): string {
  return value?.startsWith(list) && /^(\?[^#\s]*)?$/.test(value.slice(list.length)) ? value : list;
}

/** Enum values shown with their labels, per field. */
const VALUE_LABELS: Readonly<Record<string, Readonly<Record<string, { ko: string; en: string }>>>> = {
  sex: SEX_LABELS,
  major: MAJOR_LABELS,
  role: ROLE_LABELS,
  type: CLUB_TYPE_LABELS,
};

/** A changed value as people read it: enum values by their labels. */
export function displayValue(lang: Lang, field: string, value: string | null | undefined, entity?: SchoolEntity): string {
  if (value == null) return '∅';
  if (field === 'status')
    return entity === 'PROJECT' ? labelOf(PROJECT_STATUS_LABELS, value, lang) : labelOf(CLUB_STATUS_LABELS, value, lang);
  const labels = VALUE_LABELS[field];
  return labels ? labelOf(labels, value, lang) : value;
}

/** A change's field and values as a line: "필드: 전 → 후". */
export function changeLine(
  lang: Lang,
  change: { field: string; before?: string | null; after?: string | null },
  entity?: SchoolEntity,
): Html {
  const show = (value: string | null | undefined) => displayValue(lang, change.field, value, entity);
  return html`<span class="change"
    ><span class="field-name">${fieldLabel(change.field, lang)}</span>: <span class="before">${show(change.before)}</span> →
    <span class="after">${show(change.after)}</span></span
  >`;
}

/** A field's label as a form shows it (capitalized in English). */
export function formLabel(field: string, lang: Lang): string {
  const text = fieldLabel(field, lang);
  return lang === 'en' ? text.charAt(0).toUpperCase() + text.slice(1) : text;
}

/** The label of an audit action. */
export function actionLabel(lang: Lang, action: string): string {
  return (ACTION_LABELS as Record<string, { ko: string; en: string }>)[action]?.[lang] ?? action;
}

/** The flash of a redirect after a change (?done=...), from a fixed table (never echoing the query). */
export function doneFlash(ctx: AppContext, texts: Readonly<Record<string, string>>): { kind: 'ok'; text: string } | undefined {
  const text = texts[queryText(ctx, 'done')];
  return text ? { kind: 'ok', text } : undefined;
}

/** A page's flash, if any, as the page options take it (a property left out when there is none). */
export function withFlash(flash: { kind: 'ok'; text: string } | undefined): { flash?: { kind: 'ok'; text: string } } {
  return flash ? { flash } : {};
}

/** The hidden CSRF field of every form. */
export function csrfField(kit: WebKit, ctx: AppContext): Html {
  return html`<input type="hidden" name="csrf" value="${kit.csrf(ctx)}" />`;
}

/**
 * The table of a list page: a heading row from `columns`, one row per record from `row`, in a
 * scrolling wrapper for narrow screens; the shared "nothing found" line when there is none.
 */
export function listTable<T>(
  lang: Lang,
  className: string | null,
  columns: readonly string[],
  records: readonly T[],
  row: (record: T) => Html,
): Html {
  if (records.length === 0) return html`<p>${shared(lang).noRows}</p>`;
  return html`<div class="table-wrap">
    <table ${className ? html`class="${className}"` : ''}>
      <thead>
        <tr>
          ${columns.map((c) => html`<th scope="col">${c}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${records.map(row)}
      </tbody>
    </table>
  </div>`;
}

/** A list page's filters: a GET form to the list itself, each field a cell of the grid, Search and Reset. */
export function filterForm(lang: Lang, path: string, fields: readonly Html[], hidden: Html | '' = ''): Html {
  const s = SHARED[lang];
  return html`<form class="filters card" method="get" action="${path}" role="search">
    ${hidden} ${fields.map((field) => html`<div>${field}</div>`)}
    <div class="actions"><button type="submit">${s.search}</button><a class="button secondary" href="${path}">${s.reset}</a></div>
  </form>`;
}

export interface ListPage {
  /** The list's address: its filters submit to it and its pages link to it. */
  readonly path: string;
  /** What stands above the filters (an add button, an introduction). */
  readonly before: Html;
  readonly filters: readonly Html[];
  /** A filter the form keeps without a field of its own. */
  readonly hidden?: Html | '';
  /** The line that counts what was found (role="status"), if the list has one. */
  readonly status?: Html | string;
  /** The table of this page's records (listTable). */
  readonly table: Html;
  readonly page: number;
  readonly totalPages: number;
  /** The filters as query parameters, kept by the pager's links. */
  readonly params: Readonly<Record<string, string | number | null | undefined>>;
}

/** The body of every list page of the console: what comes first, filters, the count, the table, the pager. */
export function listPage(lang: Lang, o: ListPage): Html {
  return html`${o.before} ${filterForm(lang, o.path, o.filters, o.hidden)}
  ${o.status === undefined ? '' : html`<p role="status">${o.status}</p>`} ${o.table}
  ${pager(lang, o.page, o.totalPages, (p) => withQuery(o.path, { ...o.params, page: p }))}`;
}

/** A "choose one" filter's options: All (no filter) first. */
export function anyOption(lang: Lang, options: readonly { value: string; label: string }[]): { value: string; label: string }[] {
  return [{ value: '', label: SHARED[lang].all }, ...options];
}

/** Why a delete form is refused when its confirmation box is not ticked (none when it is). */
export function unconfirmed(lang: Lang, fields: Readonly<Record<string, string | undefined>>): FieldMessage[] {
  return fields['confirm'] === 'yes' ? [] : [{ field: 'confirm', message: SHARED[lang].confirmMissing }];
}

export interface RecordActions {
  /** The record's page (/admin/clubs/7): the delete form posts to `${path}/delete`. */
  readonly path: string;
  readonly entity: SchoolEntity;
  readonly recordId: number;
  readonly heading: string;
  /** The forms that change the record's status. */
  readonly body: Html | '';
  readonly deleteLabel: string;
  readonly deleteHint: string;
  readonly history: string;
}

/**
 * The box under a record's form: its status actions, the delete form (a fieldset whose box must
 * be ticked, with what deleting does) and the link to the record's changes in the audit log.
 */
export function recordActions(kit: WebKit, ctx: AppContext, lang: Lang, o: RecordActions): Html {
  return html`<section aria-labelledby="record-actions" class="card">
    <h2 id="record-actions">${o.heading}</h2>
    ${o.body}
    <form method="post" action="${o.path}/delete">
      ${csrfField(kit, ctx)}
      <fieldset>
        <legend>${o.deleteLabel}</legend>
        <p class="hint" id="delete-hint">${o.deleteHint}</p>
        <label class="check"
          ><input type="checkbox" name="confirm" value="yes" required aria-describedby="delete-hint" /> ${SHARED[lang].confirm}</label
        >
        <div class="actions"><button type="submit" class="danger">${o.deleteLabel}</button></div>
      </fieldset>
    </form>
    <p><a href="${withQuery('/admin/audit', { entity: o.entity, recordId: o.recordId })}">${o.history}</a></p>
  </section>`;
}

/**
 * The spreadsheet field of an upload form (imports, the school-year roll-over): required, .xlsx or
 * .csv, with its hint and its errors tied to it for screen readers.
 */
export function spreadsheetField(label: string, hint: string, errors: readonly string[]): Html {
  const invalid = errors.length > 0;
  return html`<div class="field">
    <label for="f-file">${label} <span class="req" aria-hidden="true">*</span></label>
    <input
      id="f-file"
      name="file"
      type="file"
      accept=".xlsx,.csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet,text/csv"
      required
      aria-describedby="f-file-hint${invalid ? ' f-file-error' : ''}"
      ${invalid ? html`aria-invalid="true"` : ''}
    />
    <p class="hint" id="f-file-hint">${hint}</p>
    ${invalid ? html`<p class="field-error" id="f-file-error">${errors.join(' ')}</p>` : ''}
  </div>`;
}
