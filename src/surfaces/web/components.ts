import { Html, html } from './html.js';
import type { Texts } from './texts/index.js';

/*
 * The component kit of every page (one set of CSS classes, web/assets/web.css): form fields with
 * their label, hint and error (aria-invalid, aria-describedby), the error summary that takes the
 * focus after a refused submit, tables that become stacked cards on a phone, the pager, facts,
 * a value shown once. Every page works without JavaScript.
 */

/** A problem with one field of a form, in the page's language. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

/** The id of a field's input (the forms of one page use distinct names). */
export function fieldId(name: string): string {
  return `f-${name}`;
}

interface FieldBase {
  readonly name: string;
  readonly label: string;
  readonly hint?: string | undefined;
  readonly errors?: readonly FieldError[] | undefined;
  readonly required?: boolean | undefined;
  /** Focus this field when the page opens (when the form has no error; else the first field with one). */
  readonly autofocus?: boolean | undefined;
  /** The field's own id when a page shows two fields of one name (defaults to f-<name>). */
  readonly id?: string | undefined;
}

/** The messages of one field, its described-by ids, and what follows the control (hint, error). */
function describe(o: FieldBase): { id: string; invalid: boolean; attrs: Html; after: Html; focus: boolean } {
  const id = o.id ?? fieldId(o.name);
  const messages = (o.errors ?? []).filter((e) => e.field === o.name).map((e) => e.message);
  const invalid = messages.length > 0;
  const describedBy = [o.hint ? `${id}-hint` : '', invalid ? `${id}-error` : ''].filter(Boolean).join(' ');
  const firstError = o.errors?.[0];
  const focus = firstError ? firstError.field === o.name : o.autofocus === true;
  return {
    id,
    invalid,
    focus,
    attrs: html`${invalid ? html` aria-invalid="true"` : ''}${describedBy ? html` aria-describedby="${describedBy}"` : ''}${
      focus ? html` autofocus` : ''
    }${o.required ? html` required` : ''}`,
    after: html`${o.hint ? html`<p class="hint" id="${id}-hint">${o.hint}</p>` : ''}${
      invalid ? html`<p class="field-error" id="${id}-error">${messages.join(' ')}</p>` : ''
    }`,
  };
}

/** A field's label; a required field's mark stands beside it, out of its accessible name ("required" is said by the input). */
function labelOf(o: FieldBase, id: string): Html {
  return html`<label for="${id}">${o.label}</label>${o.required ? html` <span class="req" aria-hidden="true">*</span>` : ''}`;
}

export interface InputField extends FieldBase {
  readonly value?: string | number | null | undefined;
  readonly type?: 'text' | 'email' | 'password' | 'url' | 'number' | 'search' | 'date' | 'datetime-local';
  readonly autocomplete?: string;
  readonly inputmode?: 'numeric' | 'email' | 'text';
  readonly maxlength?: number;
  readonly pattern?: string;
  readonly min?: number;
  readonly max?: number;
}

/** A labelled input with its hint and its error. */
export function field(o: InputField): Html {
  const d = describe(o);
  return html`<div class="field">
    ${labelOf(o, d.id)}
    <input
      id="${d.id}"
      name="${o.name}"
      type="${o.type ?? 'text'}"
      value="${o.value ?? ''}"
      autocomplete="${o.autocomplete ?? 'off'}"
      ${o.inputmode ? html`inputmode="${o.inputmode}"` : ''}
      ${o.maxlength ? html`maxlength="${o.maxlength}"` : ''}
      ${o.pattern ? html`pattern="${o.pattern}"` : ''}
      ${o.min !== undefined ? html`min="${o.min}"` : ''}
      ${o.max !== undefined ? html`max="${o.max}"` : ''}
      ${d.attrs}
    />
    ${d.after}
  </div>`;
}

/** A labelled multi-line text field. */
export function textArea(o: FieldBase & { readonly value?: string | null | undefined; readonly rows?: number }): Html {
  const d = describe(o);
  return html`<div class="field">
    ${labelOf(o, d.id)}
    <textarea id="${d.id}" name="${o.name}" rows="${o.rows ?? 4}" ${d.attrs}>${o.value ?? ''}</textarea>
    ${d.after}
  </div>`;
}

export interface Option {
  readonly value: string;
  readonly label: string;
}

/** A labelled select. */
export function select(o: FieldBase & { readonly value?: string | number | null | undefined; readonly options: readonly Option[] }): Html {
  const d = describe(o);
  const current = o.value == null ? '' : String(o.value);
  return html`<div class="field">
    ${labelOf(o, d.id)}
    <select id="${d.id}" name="${o.name}" ${d.attrs}>
      ${o.options.map((opt) => html`<option value="${opt.value}" ${opt.value === current ? html`selected` : ''}>${opt.label}</option>`)}
    </select>
    ${d.after}
  </div>`;
}

/** A group of checkboxes or radio buttons with its legend (and the group's error). */
export function choices(o: {
  readonly name: string;
  readonly legend: string;
  readonly type: 'checkbox' | 'radio';
  readonly options: readonly (Option & { readonly hint?: string })[];
  readonly checked: readonly string[];
  readonly errors?: readonly FieldError[] | undefined;
}): Html {
  const messages = (o.errors ?? []).filter((e) => e.field === o.name).map((e) => e.message);
  const errorId = `${fieldId(o.name)}-error`;
  const focus = o.errors?.[0]?.field === o.name;
  return html`<fieldset ${messages.length > 0 ? html`aria-describedby="${errorId}"` : ''}>
    <legend>${o.legend}</legend>
    ${o.options.map((option, index) => {
      const id = `${fieldId(o.name)}-${index}`;
      return html`<label class="check" for="${id}"
        ><input
          id="${id}"
          type="${o.type}"
          name="${o.name}"
          value="${option.value}"
          ${o.checked.includes(option.value) ? html`checked` : ''}
          ${messages.length > 0 && index === 0 ? html`aria-invalid="true"` : ''}
          ${focus && index === 0 ? html`autofocus` : ''}
        />
        <span>${option.label}${option.hint ? html` <span class="muted">${option.hint}</span>` : ''}</span></label
      >`;
    })}
    ${messages.length > 0 ? html`<p class="field-error" id="${errorId}">${messages.join(' ')}</p>` : ''}
  </fieldset>`;
}

/**
 * The summary of a form's errors at its top: a heading and a link to each field with a problem
 * (in the order of `inputs`, the form's fields; errors of other fields are listed as text). It
 * takes the focus when the page opens (autofocus on a tabindex=-1 box), so keyboard and
 * screen-reader users start at the problems after a refused submit.
 */
export function errorSummary(t: Texts, errors: readonly FieldError[], inputs?: readonly string[]): Html {
  if (errors.length === 0) return html``;
  const linked = (name: string) => !inputs || inputs.includes(name);
  const order = (name: string) => (inputs?.includes(name) ? inputs.indexOf(name) : (inputs?.length ?? 0));
  const sorted = [...errors].sort((a, b) => order(a.field) - order(b.field));
  return html`<div class="error-summary" role="alert" tabindex="-1" id="error-summary" autofocus>
    <h2>${t.kit.problems(errors.length)}</h2>
    <ul>
      ${sorted.map((e) => html`<li>${linked(e.field) ? html`<a href="#${fieldId(e.field)}">${e.message}</a>` : e.message}</li>`)}
    </ul>
  </div>`;
}

/** The hidden CSRF field every form carries (./csrf.ts). */
export function csrfField(token: string): Html {
  return html`<input type="hidden" name="csrf" value="${token}" />`;
}

/** A cell of a table: content, or content with a class, or the row's header cell. */
export type Cell =
  Html | string | number | { readonly content: Html | string | number; readonly className?: string; readonly rowHeader?: boolean };

export interface TableInput<T> {
  readonly columns: readonly string[];
  readonly rows: readonly T[];
  readonly cells: (row: T) => readonly Cell[];
  readonly rowClass?: (row: T) => string;
  readonly caption?: string;
  /** A class of the table (e.g. `audit` for wider change columns). */
  readonly className?: string;
  /** Said when there is no row (the kit's "nothing matches" by default). */
  readonly empty?: string;
  /** A few narrow columns that fit a phone as they are (kept a table instead of becoming cards). */
  readonly compact?: boolean;
}

/**
 * A table of records. On a phone (web/assets/web.css) each row becomes a card whose cells stand
 * beside their column's name (data-label), so no column or button is ever off-screen. A cell's
 * content is one box (div.value), so the card's grid keeps it whole.
 */
export function table<T>(t: Texts, o: TableInput<T>): Html {
  if (o.rows.length === 0) return html`<p>${o.empty ?? t.kit.noRows}</p>`;
  const cell = (value: Cell, column: string) => {
    const c = typeof value === 'object' && !(value instanceof Html) ? value : { content: value };
    const className = 'className' in c && c.className ? html` class="${c.className}"` : '';
    return 'rowHeader' in c && c.rowHeader
      ? html`<th scope="row" data-label="${column}" ${className}>${c.content}</th>`
      : html`<td data-label="${column}" ${className}><div class="value">${c.content}</div></td>`;
  };
  return html`<div class="table">
    <table class="${o.compact ? 'compact' : 'stack'}${o.className ? ` ${o.className}` : ''}">
      ${
        o.caption
          ? html`<caption class="visually-hidden">
              ${o.caption}
            </caption>`
          : ''
      }
      <thead>
        <tr>
          ${o.columns.map((c) => html`<th scope="col">${c}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${o.rows.map((row) => {
          const rowClass = o.rowClass?.(row);
          return html`<tr ${rowClass ? html`class="${rowClass}"` : ''}>
            ${o.cells(row).map((value, i) => cell(value, o.columns[i] ?? ''))}
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}

/** Previous / next links of a paged list (page is 0-based, shown 1-based). */
export function pager(t: Texts, page: number, totalPages: number, hrefOf: (page: number) => string): Html {
  if (totalPages <= 1) return html``;
  return html`<nav class="pager" aria-label="${t.kit.pager}">
    ${page > 0 ? html`<a href="${hrefOf(page - 1)}" rel="prev">${t.kit.previous}</a>` : ''}
    <span>${t.kit.page(page + 1, totalPages)}</span>
    ${page + 1 < totalPages ? html`<a href="${hrefOf(page + 1)}" rel="next">${t.kit.next}</a>` : ''}
  </nav>`;
}

/** Facts about a record as a definition list (label, value). */
export function facts(rows: readonly (readonly [string, Html | string | number])[]): Html {
  return html`<dl class="facts">
    ${rows.map(
      ([label, value]) =>
        html`<dt>${label}</dt>
          <dd>${value}</dd>`,
    )}
  </dl>`;
}

/** A value shown once (an API key, a client secret), with a copy button (web/assets/web.js). */
export function secretBox(t: Texts, id: string, label: string, value: string): Html {
  return html`<div class="secret" role="status">
    <p class="secret-label"><strong>${label}</strong> ${t.kit.shownOnce}</p>
    <code id="${id}" class="secret-value">${value}</code>
    <button type="button" class="secondary" data-copy="${id}" data-copied="${t.kit.copied}">${t.kit.copy}</button>
  </div>`;
}

/** Text to copy as it is (a command, a code sample), with a copy button (web/assets/web.js). */
export function snippet(t: Texts, id: string, label: string, code: string): Html {
  return html`<div class="snippet">
    <p class="snippet-label"><strong>${label}</strong></p>
    <pre><code id="${id}">${code}</code></pre>
    <button type="button" class="secondary" data-copy="${id}" data-copied="${t.kit.copied}">${t.kit.copy}</button>
  </div>`;
}

/**
 * A card that does one thing to what the page shows: its heading, what doing it means, and a form
 * with one button named as the heading (the fields it asks for, if any, before the button).
 */
export function actionCard(o: {
  readonly id: string;
  readonly title: string;
  readonly hint: string;
  readonly action: string;
  readonly csrf: string;
  readonly kind: 'primary' | 'secondary' | 'danger';
  readonly fields?: Html;
}): Html {
  const button = html`<button type="submit" ${o.kind === 'primary' ? '' : html` class="${o.kind}"`}>${o.title}</button>`;
  return html`<section class="card" aria-labelledby="${o.id}">
    <h2 id="${o.id}">${o.title}</h2>
    <p class="hint">${o.hint}</p>
    <form method="post" action="${o.action}" ${o.fields ? html` novalidate` : ''}>
      ${csrfField(o.csrf)}
      ${
        o.fields
          ? html`${o.fields}
              <div class="actions">${button}</div>`
          : button
      }
    </form>
  </section>`;
}

/** A link that looks like a button. */
export function linkButton(href: string, label: string, kind: 'primary' | 'secondary' = 'primary'): Html {
  return html`<a class="button${kind === 'secondary' ? ' secondary' : ''}" href="${href}">${label}</a>`;
}

/** A date and time in the school's time zone, as people there read it; `never` when there is none. */
export function formatDateTime(t: Texts, date: Date | null | undefined, timeZone: string): string {
  if (!date) return t.kit.never;
  return new Intl.DateTimeFormat(t.locale === 'ko-KR' ? 'ko-KR' : 'en-GB', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hour12: false,
  }).format(date);
}

/** A date of the consoles, in the school's time zone (SCHOOL_TIMEZONE). */
export function when(deps: { readonly config: { readonly schoolTimeZone: string } }, t: Texts, date: Date | null | undefined): string {
  return formatDateTime(t, date, deps.config.schoolTimeZone);
}

/** A URL of `path` with the non-empty parameters. */
export function withQuery(path: string, params: Readonly<Record<string, string | number | null | undefined>>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') query.set(k, String(v));
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

/** A list page's filters: a GET form to the list itself, each field a cell of the grid, Search and Reset. */
export function filterForm(t: Texts, path: string, fields: readonly Html[], hidden: Html = html``): Html {
  return html`<form class="filters card" method="get" action="${path}" role="search">
    ${hidden} ${fields.map((f) => html`<div>${f}</div>`)}
    <div class="actions"><button type="submit">${t.kit.search}</button>${linkButton(path, t.kit.reset, 'secondary')}</div>
  </form>`;
}

export interface ListPage {
  /** The list's address: its filters submit to it and its pages link to it. */
  readonly path: string;
  /** What stands above the filters (an add button, an introduction). */
  readonly before: Html;
  readonly filters: readonly Html[];
  /** A filter the form keeps without a field of its own. */
  readonly hidden?: Html;
  /** The line that counts what was found (role="status"), if the list has one. */
  readonly status?: Html | string;
  readonly table: Html;
  readonly page: number;
  readonly totalPages: number;
  /** The filters as query parameters, kept by the pager's links. */
  readonly params: Readonly<Record<string, string | number | null | undefined>>;
}

/** The body of every list page: what comes first, filters, the count, the table, the pager. */
export function listPage(t: Texts, o: ListPage): Html {
  return html`${o.before} ${filterForm(t, o.path, o.filters, o.hidden)}
  ${o.status === undefined ? '' : html`<p role="status">${o.status}</p>`} ${o.table}
  ${pager(t, o.page, o.totalPages, (p) => withQuery(o.path, { ...o.params, page: p }))}`;
}

/** A "choose one" filter's options: All (no filter) first. */
export function anyOption(t: Texts, options: readonly Option[]): Option[] {
  return [{ value: '', label: t.kit.all }, ...options];
}
