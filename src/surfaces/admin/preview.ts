import { ENTITY_LABELS, OPERATION_LABELS } from '../../data/school/labels.js';
import { csrfField, table } from '../web/components.js';
import { html, type Html } from '../web/html.js';
import { page, type Outcome, type PageRequest } from '../web/routes.js';
import type { ImportPreviewFieldsFragment } from './__generated__/operations.js';
import { changeLine } from './ui.js';

/** A preview (or result) of an import or rollover, as the operations return it (one fragment). */
export type Preview = ImportPreviewFieldsFragment;

/** Changes a preview lists at most (the counts say how many more). */
const SHOWN_CHANGES = 500;

/**
 * The page of a preview (422 when it has problems, so nothing reads it as done): what it is
 * about, the counts, the problems (row, column, value, why) and the changes, an apply form when
 * it has no problem, and the way back to upload another file.
 */
export function previewPage(
  req: PageRequest,
  preview: Preview,
  o: { title: string; about: Html; applyAction: string; uploadAgain: string },
): Outcome {
  const { t, lang } = req;
  const p = t.admin.preview;
  const c = preview.counts;
  const total = c.created + c.updated + c.removed;
  const shown = preview.changes.slice(0, SHOWN_CHANGES);
  // A CSV has no sheets: its problems table leaves the empty column out.
  const sheets = preview.issues.some((i) => i.sheet !== null);
  const count = (name: string, label: string, value: number | string, className = '') =>
    html`<div>
      <dt>${label}</dt>
      <dd ${name ? html`data-count="${name}"` : ''} ${className ? html`class="${className}"` : ''}>${value}</dd>
    </div>`;
  const problems =
    preview.issues.length === 0
      ? html``
      : html`<section aria-labelledby="preview-problems">
          <div class="error" role="alert"><h2 id="preview-problems">${p.problems(preview.issues.length)}</h2></div>
          ${table(t, {
            className: 'issues',
            columns: sheets ? p.problemColumns : p.problemColumns.slice(1),
            rows: preview.issues,
            rowClass: () => 'bad',
            cells: (i) => [
              ...(sheets ? [i.sheet ?? ''] : []),
              { content: i.row ?? p.wholeFile, className: 'row-number' },
              i.column ?? '',
              { content: i.value ?? '', className: 'mono' },
              i.message,
            ],
          })}
        </section>`;
  return page(
    o.title,
    html`${o.about}
      <section class="card" aria-labelledby="preview-summary">
        <h2 id="preview-summary">${p.summary}</h2>
        <dl class="counts">
          ${count('', p.file, preview.fileName, 'mono')} ${count('rows', p.rows, preview.rows)} ${count('created', p.created, c.created)}
          ${count('updated', p.updated, c.updated)} ${count('unchanged', p.unchanged, c.unchanged)}
          ${count('removed', p.removed, c.removed)} ${count('refused', p.refused, c.refused)}
        </dl>
      </section>
      ${problems}
      <section aria-labelledby="preview-changes">
        <h2 id="preview-changes">${p.changes}</h2>
        ${table(t, {
          className: 'changes',
          columns: p.changeColumns,
          rows: total === 0 ? [] : shown,
          empty: p.noChanges,
          cells: (ch) => [
            ch.row !== null ? `${ch.sheet ? `${ch.sheet} ` : ''}${ch.row}` : p.consequence,
            OPERATION_LABELS[ch.operation][lang],
            `${ENTITY_LABELS[ch.entity][lang]} #${ch.recordId} ${ch.label}`,
            html`<ul class="plain">
              ${ch.fields.map((f) => html`<li>${changeLine(lang, f, ch.entity)}</li>`)}
            </ul>`,
          ],
        })}
        ${total > shown.length ? html`<p>${p.more(total - shown.length)}</p>` : ''}
      </section>
      ${
        preview.issues.length === 0 && total > 0 && preview.uploadId
          ? html`<form method="post" action="${o.applyAction}" class="card">
              ${csrfField(req.csrf)}
              <input type="hidden" name="uploadId" value="${preview.uploadId}" />
              <p class="hint">${p.applyHint}</p>
              <div class="actions"><button type="submit">${p.apply}</button></div>
            </form>`
          : ''
      }
      <p><a href="${o.uploadAgain}">${p.again}</a></p>`,
    preview.issues.length > 0 ? 422 : 200,
  );
}
