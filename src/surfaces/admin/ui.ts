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
} from '../../data/school/labels.js';
import { issueMessage } from '../../data/school/messages.js';
import type { SchoolEntity } from '../../data/school/types.js';
import { NotFoundError } from '../../errors/index.js';
import { anyOption, select, type FieldError, type Option } from '../web/components.js';
import { integerOrNull } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import type { Lang } from '../web/lang.js';
import type { PageRequest } from '../web/routes.js';
import type { Texts } from '../web/texts/index.js';

/*
 * What the admin console's pages add to the kit (src/surfaces/web/components.ts): the section,
 * the language of the operations' messages, integer fields, record ids, changes as people read
 * them, the lists' filters, the spreadsheet field (a school record's pages: ./records.ts). Every page
 * works without JavaScript.
 */

/** The GraphQL Language of a page's language (for the messages operations answer in). */
export function language(lang: Lang): 'KO' | 'EN' {
  return lang === 'ko' ? 'KO' : 'EN';
}

/** Errors of the data layer under the input that shows them (`aliases`: the data layer's field → the form's input). */
export function atInputs(errors: readonly FieldError[], aliases: Readonly<Record<string, string>> = {}): FieldError[] {
  return errors.map((e) => ({ field: aliases[e.field] ?? e.field, message: e.message }));
}

/** The options of an enum, each by its label in the page's language. */
export function enumOptions<T extends string>(
  values: readonly T[],
  labels: Readonly<Record<T, { ko: string; en: string }>>,
  lang: Lang,
): Option[] {
  return values.map((value) => ({ value, label: labels[value][lang] }));
}

/** A filter of a list: a select whose first choice is "all", labelled as the field is in forms unless told. */
export function filterSelect(
  req: PageRequest,
  name: string,
  value: string | number | null,
  options: readonly Option[],
  label = formLabel(name, req.lang),
): Html {
  return select({ name, label, value, options: anyOption(req.t, options) });
}

/** A query parameter as an integer within [min, max], else null. */
export function queryInt(req: PageRequest, name: string, min: number, max: number): number | null {
  const text = req.query(name);
  if (!/^\d{1,9}$/.test(text)) return null;
  const n = Number(text);
  return n >= min && n <= max ? n : null;
}

/** A form's text field ('' when absent). */
export function formText(req: PageRequest, name: string): string {
  const value = req.form[name];
  return typeof value === 'string' ? value : '';
}

/**
 * An integer field of a form (zod, src/surfaces/web/forms.ts): '' is null; text that is no integer
 * is refused with the data layer's message for `field` (the schema of the operation could not take
 * it). Every other rule is the data layer's.
 */
export function intField(lang: Lang, field: string) {
  return integerOrNull((got) => issueMessage({ field, code: 'NOT_INTEGER', params: { got } }, lang));
}

/** The text fields of a submitted form (a repeated field's first value). */
export function formValues(req: PageRequest): Record<string, string> {
  return Object.fromEntries(Object.entries(req.form).map(([name, value]) => [name, typeof value === 'string' ? value : (value[0] ?? '')]));
}

/** The id of a record's page (/admin/students/:id), or a 404. */
export function idParam(req: PageRequest): number {
  const id = Number(req.param('id'));
  if (!Number.isSafeInteger(id) || id < 1) throw new NotFoundError('No such record.');
  return id;
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

/** Why a delete form is refused when its confirmation box is not ticked (none when it is). */
export function unconfirmed(t: Texts, req: PageRequest): FieldError[] {
  return req.form['confirm'] === 'yes' ? [] : [{ field: 'confirm', message: t.kit.confirmMissing }];
}

/**
 * The spreadsheet field of an upload form (imports, the school-year roll-over): required, .xlsx or
 * .csv, with its hint and its errors tied to it for screen readers.
 */
export function spreadsheetField(label: string, hint: string, errors: readonly FieldError[]): Html {
  const messages = errors.filter((e) => e.field === 'file').map((e) => e.message);
  const invalid = messages.length > 0;
  return html`<div class="field">
    <label for="f-file">${label}</label> <span class="req" aria-hidden="true">*</span>
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
    ${invalid ? html`<p class="field-error" id="f-file-error">${messages.join(' ')}</p>` : ''}
  </div>`;
}
