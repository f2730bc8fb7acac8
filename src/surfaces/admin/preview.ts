import { ENTITY_LABELS, OPERATION_LABELS, type Lang } from '../../data/school/labels.js';
import type { AppContext } from '../../http/context.js';
import { html, type Html } from '../../http/web/html.js';
import type { WebKit } from '../web/index.js';
import type { ImportPreviewFieldsFragment } from './__generated__/operations.js';
import { adminShell } from './nav.js';
import { changeLine, csrfField } from './ui.js';

/** A preview (or result) of an import or rollover, as the operations return it (one fragment). */
export type Preview = ImportPreviewFieldsFragment;

const TEXT = {
  ko: {
    summary: '요약',
    file: '파일',
    rows: '읽은 행',
    created: '추가',
    updated: '수정',
    unchanged: '변경 없음',
    removed: '삭제',
    refused: '거부된 행',
    problems: (n: number) => `문제 ${n}건: 아래를 고친 파일을 다시 올리세요. 아무것도 바뀌지 않았습니다.`,
    problemColumns: ['시트', '행', '열', '값', '문제'],
    wholeFile: '파일 전체',
    changes: '바뀌는 내용',
    changeColumns: ['행', '작업', '레코드', '바뀐 항목'],
    consequence: '연쇄',
    noChanges: '바뀌는 것이 없습니다.',
    more: (n: number) => `… 외 ${n}건`,
    apply: '적용하기 (전부 또는 전혀)',
    applyHint: '적용할 때 지금의 데이터로 다시 검사합니다. 하나라도 문제가 있으면 아무것도 바뀌지 않습니다.',
    again: '다른 파일 올리기',
  },
  en: {
    summary: 'Summary',
    file: 'File',
    rows: 'Rows read',
    created: 'Created',
    updated: 'Updated',
    unchanged: 'Unchanged',
    removed: 'Removed',
    refused: 'Rows refused',
    problems: (n: number) => `${n} ${n === 1 ? 'problem' : 'problems'}: fix the file and upload it again. Nothing was changed.`,
    problemColumns: ['Sheet', 'Row', 'Column', 'Value', 'Problem'],
    wholeFile: 'Whole file',
    changes: 'What would change',
    changeColumns: ['Row', 'Action', 'Record', 'Fields'],
    consequence: 'follows',
    noChanges: 'Nothing would change.',
    more: (n: number) => `… and ${n} more`,
    apply: 'Apply (all or nothing)',
    applyHint: 'Applying checks everything again against the data as it is then; if anything is wrong, nothing changes.',
    again: 'Upload another file',
  },
} as const;

/**
 * The page of a preview (422 when it has problems, so nothing reads it as done): what it is
 * about, the preview, and the way back to upload another file.
 */
export function previewPage(
  kit: WebKit,
  ctx: AppContext,
  preview: Preview,
  page: { title: string; about: Html | ''; applyAction: string; uploadAgain: string },
): void {
  const lang = kit.lang(ctx);
  kit.page(ctx, preview.issues.length > 0 ? 422 : 200, {
    ...adminShell(lang),
    title: page.title,
    content: html`${page.about} ${previewView(kit, ctx, lang, preview, page.applyAction)}
      <p><a href="${page.uploadAgain}">${TEXT[lang].again}</a></p>`,
  });
}

/** The counts, the problems (row, column, value, why) and the changes of a preview; an apply form when it has no problem. */
function previewView(kit: WebKit, ctx: AppContext, lang: Lang, preview: Preview, applyAction: string | null): Html {
  const t = TEXT[lang];
  const c = preview.counts;
  const total = c.created + c.updated + c.removed;
  const shownChanges = preview.changes.slice(0, 500);
  // A CSV has no sheets: its problems table leaves the empty column out (room for the values on a phone).
  const sheets = preview.issues.some((i) => i.sheet !== null);
  return html`<section class="card" aria-labelledby="preview-summary">
      <h2 id="preview-summary">${t.summary}</h2>
      <dl class="counts">
        <div>
          <dt>${t.file}</dt>
          <dd class="mono">${preview.fileName}</dd>
        </div>
        <div>
          <dt>${t.rows}</dt>
          <dd data-count="rows">${preview.rows}</dd>
        </div>
        <div>
          <dt>${t.created}</dt>
          <dd data-count="created">${c.created}</dd>
        </div>
        <div>
          <dt>${t.updated}</dt>
          <dd data-count="updated">${c.updated}</dd>
        </div>
        <div>
          <dt>${t.unchanged}</dt>
          <dd data-count="unchanged">${c.unchanged}</dd>
        </div>
        <div>
          <dt>${t.removed}</dt>
          <dd data-count="removed">${c.removed}</dd>
        </div>
        <div>
          <dt>${t.refused}</dt>
          <dd data-count="refused">${c.refused}</dd>
        </div>
      </dl>
    </section>
    ${
      preview.issues.length > 0
        ? html`<section aria-labelledby="preview-problems">
            <div class="error" role="alert"><h2 id="preview-problems">${t.problems(preview.issues.length)}</h2></div>
            <div class="table-wrap">
              <table class="issues">
                <thead>
                  <tr>
                    ${(sheets ? t.problemColumns : t.problemColumns.slice(1)).map((h) => html`<th scope="col">${h}</th>`)}
                  </tr>
                </thead>
                <tbody>
                  ${preview.issues.map(
                    (i) =>
                      html`<tr class="bad">
                        ${sheets ? html`<td>${i.sheet ?? ''}</td>` : ''}
                        <td class="row-number">${i.row ?? t.wholeFile}</td>
                        <td>${i.column ?? ''}</td>
                        <td class="mono">${i.value ?? ''}</td>
                        <td>${i.message}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>
          </section>`
        : ''
    }
    <section aria-labelledby="preview-changes">
      <h2 id="preview-changes">${t.changes}</h2>
      ${
        total === 0
          ? html`<p>${t.noChanges}</p>`
          : html`<div class="table-wrap">
                <table class="changes">
                  <thead>
                    <tr>
                      ${t.changeColumns.map((h) => html`<th scope="col">${h}</th>`)}
                    </tr>
                  </thead>
                  <tbody>
                    ${shownChanges.map(
                      (ch) =>
                        html`<tr>
                          <td>${ch.row !== null ? `${ch.sheet ? `${ch.sheet} ` : ''}${ch.row}` : t.consequence}</td>
                          <td>${OPERATION_LABELS[ch.operation][lang]}</td>
                          <td>${ENTITY_LABELS[ch.entity][lang]} #${ch.recordId} ${ch.label}</td>
                          <td>
                            <ul class="plain">
                              ${ch.fields.map((f) => html`<li>${changeLine(lang, f, ch.entity)}</li>`)}
                            </ul>
                          </td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </div>
              ${total > shownChanges.length ? html`<p>${t.more(total - shownChanges.length)}</p>` : ''}`
      }
    </section>
    ${
      applyAction && preview.issues.length === 0 && total > 0 && preview.uploadId
        ? html`<form method="post" action="${applyAction}" class="card">
            ${csrfField(kit, ctx)}
            <input type="hidden" name="uploadId" value="${preview.uploadId}" />
            <p class="hint">${t.applyHint}</p>
            <div class="actions"><button type="submit">${t.apply}</button></div>
          </form>`
        : ''
    }`;
}
