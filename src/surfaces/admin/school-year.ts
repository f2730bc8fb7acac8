import { BadRequestError } from '../../errors/index.js';
import { ROLLOVER_COLUMNS } from '../../data/school/rollover.js';
import { FILE_LIMITS, formatBytes } from '../../data/school/spreadsheet.js';
import { csrfField, errorSummary, table, type FieldError } from '../web/components.js';
import { html } from '../web/html.js';
import { uploadOf } from '../web/multipart.js';
import { page, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type {
  PreviewRolloverMutation,
  PreviewRolloverMutationVariables,
  StartApplyRolloverMutation,
  StartApplyRolloverMutationVariables,
} from './__generated__/operations.js';
import type { AdminDeps } from './deps.js';
import { toJob } from './jobs.js';
import { PREVIEW_ROLLOVER, START_APPLY_ROLLOVER } from './operations/transfer.js';
import { previewPage, type Preview } from './preview.js';
import { tooLarge } from './transfer.js';
import { language, spreadsheetField } from './ui.js';

/** The school-year rollover: upload the new classes, preview, apply (undo is in the audit log). */
function uploadPage(req: PageRequest, errors: readonly FieldError[], status = 200): Outcome {
  const { t } = req;
  const y = t.admin.schoolYear;
  return page(
    y.title,
    html`${errorSummary(t, errors, ['file'])}
      <p>${y.intro}</p>
      <p>${y.safety}</p>
      <form method="post" action="/admin/school-year" enctype="multipart/form-data" class="card" novalidate>
        ${csrfField(req.csrf)} ${spreadsheetField(y.file, y.fileHint(formatBytes(FILE_LIMITS.maxBytes)), errors)}
        <div class="actions"><button type="submit">${y.preview}</button></div>
      </form>
      <section aria-labelledby="rollover-format">
        <h2 id="rollover-format">${y.columns}</h2>
        <p class="mono">${ROLLOVER_COLUMNS.map((c) => c.header).join(' | ')}</p>
        <h3>${y.example}</h3>
        ${table(t, {
          compact: true,
          columns: y.exampleColumns,
          rows: [
            ['1101', '홍길동', '2', '5'],
            ['1102', '김하나', '1', '1'],
          ],
          cells: (row) => row,
        })}
      </section>`,
    status,
  );
}

function rolloverPreview(req: PageRequest, preview: Preview): Outcome {
  return previewPage(req, preview, {
    title: req.t.admin.schoolYear.previewTitle,
    about: html``,
    applyAction: '/admin/school-year/apply',
    uploadAgain: '/admin/school-year',
  });
}

export const schoolYearStart: Handler<AdminDeps> = async (req) => uploadPage(req, []);

export const schoolYearPreview: Handler<AdminDeps> = async (req, deps) => {
  const { t } = req;
  const upload = uploadOf(req.ctx);
  if (upload.tooLarge) return uploadPage(req, tooLarge(t), 413);
  if (!upload.file) return uploadPage(req, [{ field: 'file', message: t.admin.schoolYear.noFile }], 422);
  const result = await deps.school.run<PreviewRolloverMutation, PreviewRolloverMutationVariables>(req, PREVIEW_ROLLOVER, {
    input: { fileName: upload.file.name, contentBase64: upload.file.bytes.toString('base64') },
    lang: language(req.lang),
  });
  return rolloverPreview(req, result.previewRollover);
};

export const schoolYearApply: Handler<AdminDeps> = async (req, deps) => {
  const uploadId = typeof req.form['uploadId'] === 'string' ? req.form['uploadId'] : '';
  // Applied in the background (src/data/school/jobs.ts): the job's page follows it, no request waits.
  const started = await deps.school
    .run<StartApplyRolloverMutation, StartApplyRolloverMutationVariables>(req, START_APPLY_ROLLOVER, { uploadId, lang: language(req.lang) })
    .catch((err: unknown) => {
      if (err instanceof BadRequestError) return null;
      throw err;
    });
  if (!started) return uploadPage(req, [{ field: 'file', message: req.t.admin.schoolYear.uploadGone }], 422);
  return toJob(started.startApplyRollover);
};
