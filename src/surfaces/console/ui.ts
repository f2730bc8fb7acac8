import { html, type Html } from '../../http/web/html.js';
import type { Lang } from '../../http/web/lang.js';

/**
 * Form pieces shared by the developer console, the admin console's account pages and the
 * sign-up pages (docs: /work/notes/consoles.md, "Rules for every page"): every control has a
 * label; an error sits next to its field (aria-invalid, aria-describedby) and in a summary at
 * the top (role="alert") that links to the field.
 */

/** A problem with one field of a form, in the page's language. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

export interface FieldInput {
  readonly name: string;
  readonly label: string;
  readonly type?: 'text' | 'email' | 'password' | 'url' | 'number' | 'search';
  readonly value?: string;
  readonly hint?: string;
  readonly errors?: readonly FieldError[];
  readonly required?: boolean;
  readonly autocomplete?: string;
  readonly inputmode?: 'numeric' | 'email' | 'text';
  readonly maxlength?: number;
  readonly pattern?: string;
  readonly min?: number;
  readonly max?: number;
  readonly readonly?: boolean;
  readonly autofocus?: boolean;
}

/** The id of a field's input (forms of one page use distinct names). */
export function fieldId(name: string): string {
  return `f-${name}`;
}

/** A labelled input with its hint and its error. */
export function field(input: FieldInput): Html {
  const id = fieldId(input.name);
  const error = input.errors?.find((e) => e.field === input.name);
  const described = [input.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="form-field">
    <label for="${id}">${input.label}</label>
    <input
      id="${id}"
      name="${input.name}"
      type="${input.type ?? 'text'}"
      value="${input.value ?? ''}"
      ${input.required ? html`required` : ''}
      ${input.autocomplete ? html`autocomplete="${input.autocomplete}"` : ''}
      ${input.inputmode ? html`inputmode="${input.inputmode}"` : ''}
      ${input.maxlength ? html`maxlength="${String(input.maxlength)}"` : ''}
      ${input.pattern ? html`pattern="${input.pattern}"` : ''}
      ${input.min !== undefined ? html`min="${String(input.min)}"` : ''}
      ${input.max !== undefined ? html`max="${String(input.max)}"` : ''}
      ${input.readonly ? html`readonly` : ''}
      ${focusHere(input, error) ? html`autofocus` : ''}
      ${error ? html`aria-invalid="true"` : ''}
      ${described ? html`aria-describedby="${described}"` : ''}
    />
    ${input.hint ? html`<p class="hint" id="${id}-hint">${input.hint}</p>` : ''}
    ${error ? html`<p class="field-error" id="${id}-error">${error.message}</p>` : ''}
  </div>`;
}

/** The field a page focuses: the first with an error, or the one asked for when there is no error. */
function focusHere(input: FieldInput, error: FieldError | undefined): boolean {
  if (input.errors && input.errors.length > 0) return error !== undefined && input.errors[0]?.field === input.name;
  return input.autofocus === true;
}

/** A labelled multi-line text field (e.g. redirect addresses, one per line). */
export function textArea(input: FieldInput & { rows?: number }): Html {
  const id = fieldId(input.name);
  const error = input.errors?.find((e) => e.field === input.name);
  const described = [input.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="form-field">
    <label for="${id}">${input.label}</label>
    <textarea
      id="${id}"
      name="${input.name}"
      rows="${String(input.rows ?? 3)}"
      ${input.required ? html`required` : ''}
      ${error ? html`aria-invalid="true" autofocus` : ''}
      ${described ? html`aria-describedby="${described}"` : ''}
    >
${input.value ?? ''}</textarea>
    ${input.hint ? html`<p class="hint" id="${id}-hint">${input.hint}</p>` : ''}
    ${error ? html`<p class="field-error" id="${id}-error">${error.message}</p>` : ''}
  </div>`;
}

/** A group of checkboxes or radio buttons with a legend (and the group's error). */
export function choices(input: {
  readonly name: string;
  readonly legend: string;
  readonly type: 'checkbox' | 'radio';
  readonly options: readonly { value: string; label: string; hint?: string }[];
  readonly checked: readonly string[];
  readonly errors?: readonly FieldError[];
}): Html {
  const error = input.errors?.find((e) => e.field === input.name);
  const errorId = `${fieldId(input.name)}-error`;
  return html`<fieldset ${error ? html`aria-describedby="${errorId}"` : ''}>
    <legend>${input.legend}</legend>
    ${input.options.map((option, index) => {
      const id = `${fieldId(input.name)}-${index}`;
      return html`<label class="check" for="${id}"
        ><input
          id="${id}"
          type="${input.type}"
          name="${input.name}"
          value="${option.value}"
          ${input.checked.includes(option.value) ? html`checked` : ''}
          ${error && index === 0 ? html`aria-invalid="true" autofocus` : ''}
        />
        <span>${option.label}${option.hint ? html` <span class="muted">${option.hint}</span>` : ''}</span></label
      >`;
    })}
    ${error ? html`<p class="field-error" id="${errorId}">${error.message}</p>` : ''}
  </fieldset>`;
}

/** The summary of a form's errors at its top: announced at once, each linking to its field. */
export function errorSummary(lang: Lang, errors: readonly FieldError[]): Html {
  if (errors.length === 0) return html``;
  return html`<div class="error-summary" role="alert">
    <p><strong>${lang === 'ko' ? '입력한 내용을 확인하세요.' : 'Please check what you entered.'}</strong></p>
    <ul>
      ${errors.map((e) => html`<li><a href="#${fieldId(e.field)}">${e.message}</a></li>`)}
    </ul>
  </div>`;
}

/** The CSRF field every form carries. */
export function csrfField(token: string): Html {
  return html`<input type="hidden" name="csrf" value="${token}" />`;
}

/** A date and time in the school's time zone, as people there read it. */
export function formatDateTime(lang: Lang, date: Date | null | undefined, timeZone: string, never: { ko: string; en: string }): string {
  if (!date) return never[lang];
  return new Intl.DateTimeFormat(lang === 'ko' ? 'ko-KR' : 'en-GB', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hour12: false,
  }).format(date);
}

/** A value shown once (an API key, a client secret), with a copy button (web/assets/web.js). */
export function secretBox(lang: Lang, id: string, label: string, value: string): Html {
  const ko = lang === 'ko';
  return html`<div class="secret" role="status">
    <p class="secret-label">
      <strong>${label}</strong> ${ko ? '지금만 보입니다. 안전한 곳에 저장하세요.' : 'Shown only now: store it somewhere safe.'}
    </p>
    <code id="${id}" class="secret-value">${value}</code>
    <button type="button" class="secondary" data-copy="${id}" data-copied="${ko ? '복사됨' : 'Copied'}">${ko ? '복사' : 'Copy'}</button>
  </div>`;
}
