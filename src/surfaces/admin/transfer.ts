import { z } from 'zod';
import { BadRequestError } from '../../errors/index.js';
import { SchoolEntity } from '../../data/__generated__/enums.js';
import { formatOf } from '../../data/school/columns.js';
import { ENTITY_LABELS } from '../../data/school/labels.js';
import { FILE_LIMITS, formatBytes } from '../../data/school/spreadsheet.js';
import { csrfField, errorSummary, select, table, type FieldError } from '../web/components.js';
import { oneOf, text, ticked } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import type { Lang } from '../web/lang.js';
import { uploadOf } from '../web/multipart.js';
import { download, page, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type { Texts } from '../web/texts/index.js';
import type {
  ExportSchoolDataQuery,
  ExportSchoolDataQueryVariables,
  PreviewImportMutation,
  PreviewImportMutationVariables,
  StartApplyImportMutation,
  StartApplyImportMutationVariables,
} from './__generated__/operations.js';
import type { AdminDeps } from './deps.js';
import { toJob } from './jobs.js';
import { EXPORT_SCHOOL_DATA, PREVIEW_IMPORT, START_APPLY_IMPORT } from './operations/transfer.js';
import { previewPage, type Preview } from './preview.js';
import { language, spreadsheetField } from './ui.js';

const ENTITIES = Object.values(SchoolEntity);

const importForm = z.object({ entity: oneOf(ENTITIES).transform((e) => e ?? 'STUDENT'), removeMissing: ticked() });
const exportQuery = z.object({
  entity: oneOf(ENTITIES).transform((e) => e ?? 'STUDENT'),
  format: text().transform((f) => (f === 'CSV' ? ('CSV' as const) : ('XLSX' as const))),
  includeGraduates: ticked(),
});

/** Why an upload over the limit is refused (before anything reads it). */
export function tooLarge(t: Texts): FieldError[] {
  return [{ field: 'file', message: t.admin.transfer.tooLarge(formatBytes(FILE_LIMITS.maxBytes)) }];
}

/** The import form: the kind, the file, "remove missing", and the file formats (from the columns imports read). */
function importPage(
  req: PageRequest,
  form: { entity: string; removeMissing: boolean; errors: readonly FieldError[] },
  status = 200,
): Outcome {
  const { t, lang } = req;
  const x = t.admin.transfer;
  return page(
    x.importTitle,
    html`${errorSummary(t, form.errors, ['file'])}
      <p>${x.intro}</p>
      <p>${x.order}</p>
      <form method="post" action="/admin/import" enctype="multipart/form-data" class="card" novalidate>
        ${csrfField(req.csrf)}
        ${select({ name: 'entity', label: x.kind, value: form.entity, options: ENTITIES.map((e) => ({ value: e, label: ENTITY_LABELS[e][lang] })) })}
        ${spreadsheetField(x.file, x.fileHint(formatBytes(FILE_LIMITS.maxBytes), FILE_LIMITS.maxRows), form.errors)}
        <label class="check"
          ><input type="checkbox" name="removeMissing" value="yes" ${form.removeMissing ? html`checked` : ''} /> ${x.removeMissing}</label
        >
        <div class="actions"><button type="submit">${x.preview}</button></div>
      </form>
      <section aria-labelledby="formats">
        <h2 id="formats">${x.formats}</h2>
        <p>${x.template} <a href="/admin/export">${x.exportTitle}</a></p>
        ${ENTITIES.map((e) => formatTable(t, lang, e))}
        <p>${x.original}</p>
      </section>`,
    status,
  );
}

/** The columns of a kind's files, from the same definitions imports read (src/data/school/columns.ts). */
function formatTable(t: Texts, lang: Lang, entity: SchoolEntity): Html {
  const x = t.admin.transfer;
  const english = (aliases: readonly string[]) => aliases.find((a) => /^[A-Za-z ]+$/.test(a)) ?? '';
  return html`<h3>${ENTITY_LABELS[entity][lang]}</h3>
    ${table(t, {
      compact: true,
      columns: [x.header, x.alias],
      rows: formatOf(entity).columns.filter((c) => c.exported),
      cells: (c) => [c.header, { content: c.header === 'ID' ? 'id' : english(c.aliases), className: 'mono' }],
    })}`;
}

export const importStart: Handler<AdminDeps> = async (req) => {
  const entity = ENTITIES.find((e) => e === req.query('entity')) ?? 'STUDENT';
  return importPage(req, { entity, removeMissing: false, errors: [] });
};

export const importPreview: Handler<AdminDeps> = async (req, deps) => {
  const { t, lang } = req;
  const upload = uploadOf(req.ctx);
  if (upload.tooLarge) return importPage(req, { entity: 'STUDENT', removeMissing: false, errors: tooLarge(t) }, 413);
  const form = importForm.parse(req.form);
  if (!upload.file) return importPage(req, { ...form, errors: [{ field: 'file', message: t.admin.transfer.noFile }] }, 422);
  const result = await deps.school.run<PreviewImportMutation, PreviewImportMutationVariables>(req, PREVIEW_IMPORT, {
    input: {
      entity: form.entity,
      fileName: upload.file.name,
      contentBase64: upload.file.bytes.toString('base64'),
      removeMissing: form.removeMissing,
    },
    lang: language(lang),
  });
  return importPreviewPage(req, result.previewImport);
};

export const importApply: Handler<AdminDeps> = async (req, deps) => {
  const { t } = req;
  const uploadId = typeof req.form['uploadId'] === 'string' ? req.form['uploadId'] : '';
  // Applied in the background (src/data/school/jobs.ts): the job's page follows it, no request waits.
  const started = await deps.school
    .run<StartApplyImportMutation, StartApplyImportMutationVariables>(req, START_APPLY_IMPORT, { uploadId, lang: language(req.lang) })
    .catch((err: unknown) => {
      if (err instanceof BadRequestError) return null;
      throw err;
    });
  if (!started)
    return importPage(
      req,
      { entity: 'STUDENT', removeMissing: false, errors: [{ field: 'file', message: t.admin.schoolYear.uploadGone }] },
      422,
    );
  return toJob(started.startApplyImport);
};

function importPreviewPage(req: PageRequest, preview: Preview): Outcome {
  const { t, lang } = req;
  const x = t.admin.transfer;
  return previewPage(req, preview, {
    title: x.previewTitle,
    about: html`<p>${ENTITY_LABELS[preview.entity][lang]}${preview.removeMissing ? ` · ${x.removeMissing}` : ''}</p>`,
    applyAction: '/admin/import/apply',
    uploadAgain: `/admin/import?entity=${preview.entity}`,
  });
}

export const exportStart: Handler<AdminDeps> = async (req) => {
  const { t, lang } = req;
  const x = t.admin.transfer;
  return page(
    x.exportTitle,
    html`<p>${x.exportIntro}</p>
      <form method="get" action="/admin/export/file" class="card">
        ${select({ name: 'entity', label: x.kind, value: 'STUDENT', options: ENTITIES.map((e) => ({ value: e, label: ENTITY_LABELS[e][lang] })) })}
        ${select({
          name: 'format',
          label: x.format,
          value: 'XLSX',
          options: [
            { value: 'XLSX', label: 'Excel (.xlsx)' },
            { value: 'CSV', label: 'CSV (.csv, UTF-8)' },
          ],
        })}
        <label class="check"><input type="checkbox" name="includeGraduates" value="yes" /> ${x.includeGraduates}</label>
        <div class="actions"><button type="submit">${x.download}</button></div>
      </form>`,
  );
};

/**
 * A file the operations made (an export, the audit log), downloaded under its name in the page's
 * language: the stem in words (학생-20261125.xlsx on a Korean page), the rest as made. Koa's
 * `ctx.attachment` writes the name so that its Korean letters survive (RFC 6266 filename*).
 */
export function fileOf(file: { fileName: string; contentType: string; contentBase64: string }, stem: string): Outcome {
  const name = file.fileName.replace(/^[a-z]+(?=-)/, stem);
  return download(name, file.contentType, Buffer.from(file.contentBase64, 'base64'));
}

export const exportFile: Handler<AdminDeps> = async (req, deps) => {
  const query = exportQuery.parse(req.ctx.query);
  const data = await deps.school.run<ExportSchoolDataQuery, ExportSchoolDataQueryVariables>(req, EXPORT_SCHOOL_DATA, query);
  // An export of personal data is in the access log: who, what, with which filter (docs/decisions.md, "The access log").
  if (req.account) {
    await deps.audit.record(
      { kind: 'ACCOUNT', id: req.account.accountId, email: req.account.email },
      { action: 'DATA_EXPORTED', target: { kind: 'DATA', id: query.entity, label: data.exportSchoolData.fileName }, detail: { ...query } },
    );
  }
  return fileOf(data.exportSchoolData, req.t.admin.transfer.fileStems[query.entity]);
};
