import Router from '@koa/router';
import { STAFF_ROLES } from '../../auth/principal.js';
import { SchoolEntity } from '../../data/__generated__/enums.js';
import { formatOf } from '../../data/school/columns.js';
import { ENTITY_LABELS, type Lang } from '../../data/school/labels.js';
import { FILE_LIMITS, formatBytes } from '../../data/school/spreadsheet.js';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { html, type Html } from '../../http/web/html.js';
import { setConsoleHeaders } from '../../http/web/page.js';
import type { WebKit } from '../web/index.js';
import type {
  ApplyImportMutation,
  ApplyImportMutationVariables,
  ExportSchoolDataQuery,
  ExportSchoolDataQueryVariables,
  PreviewImportMutation,
  PreviewImportMutationVariables,
} from './__generated__/operations.js';
import { multipartForm, uploadOf } from './multipart.js';
import { adminShell } from './nav.js';
import { APPLY_IMPORT, EXPORT_SCHOOL_DATA, PREVIEW_IMPORT } from './operations/transfer.js';
import { previewPage, type Preview } from './preview.js';
import { csrfField, doneFlash, errorSummary, language, op, queryText, seeOther, selectField, spreadsheetField, withFlash } from './ui.js';

const TEXT = {
  ko: {
    importTitle: '가져오기',
    previewTitle: '가져오기 미리 보기',
    exportTitle: '내보내기',
    kind: '종류',
    file: '파일 (.xlsx 또는 .csv)',
    fileHint: (max: string, rows: number) =>
      `최대 ${max}, ${rows.toLocaleString('ko-KR')}행. 파일 이름이 아니라 내용으로 확인합니다. 수식은 계산하지 않고 저장된 값을 읽습니다.`,
    removeMissing: '파일에 없는 레코드 삭제 (학생은 재학생만)',
    preview: '미리 보기',
    intro:
      '먼저 미리 보기로 행마다 무엇이 바뀌고 무엇이 잘못됐는지 확인한 뒤 적용합니다. 적용은 전부 되거나 전혀 되지 않습니다. 행은 ID로, 없으면 이메일(학생) 또는 이름(동아리, 프로젝트)으로 기존 레코드와 맞춥니다. 파일에 있는 열만 바뀝니다.',
    order: '학생 파일이 동아리를 이름으로 가리키므로 동아리를 먼저 가져오세요.',
    formats: '파일 형식',
    header: '열 이름',
    alias: '영어 이름',
    original:
      '기존 시스템의 학생 통합 문서(시트 1학년, 2학년, 3학년; 열 학생명, 학번, 이메일, 학과, 전공동아리, 창체동아리, 호실, 소속, 성별)도 그대로 읽습니다.',
    template: '지금 데이터를 내보낸 파일이 그대로 양식입니다.',
    noFile: '파일을 고르세요.',
    tooLarge: (max: string) => `파일이 너무 큽니다 (최대 ${max}).`,
    unchanged: '바뀐 것이 없어 기록하지 않았습니다.',
    format: '형식',
    includeGraduates: '졸업생과 자퇴생 포함 (학생)',
    download: '내려받기',
    exportIntro:
      "내보낸 파일을 고쳐서 그대로 다시 가져올 수 있습니다. = + - @로 시작하는 글자는 스프레드시트가 수식으로 실행하지 않도록 앞에 작은따옴표(')를 붙이며, 가져올 때 떼어 냅니다.",
  },
  en: {
    importTitle: 'Import',
    previewTitle: 'Import preview',
    exportTitle: 'Export',
    kind: 'Kind',
    file: 'File (.xlsx or .csv)',
    fileHint: (max: string, rows: number) =>
      `At most ${max} and ${rows.toLocaleString('en-US')} rows. Checked by content, not by name. Formulas are never evaluated: their saved values are read.`,
    removeMissing: 'Remove the records the file does not list (students: enrolled ones only)',
    preview: 'Preview',
    intro:
      'Every import is first a preview that shows, per row, what would change and what is wrong; then you apply it, all or nothing. Rows are matched by ID, else by email (students) or name (clubs, projects). Only the columns in the file change anything.',
    order: 'Student files name clubs by name, so import clubs first.',
    formats: 'File formats',
    header: 'Column',
    alias: 'English name',
    original:
      "The original system's student workbook (sheets 1학년, 2학년, 3학년; columns 학생명, 학번, 이메일, 학과, 전공동아리, 창체동아리, 호실, 소속, 성별) is read as it is.",
    template: 'An export of the current data is the template.',
    noFile: 'Choose a file.',
    tooLarge: (max: string) => `The file is too large (at most ${max}).`,
    unchanged: 'Nothing changed, so nothing was recorded.',
    format: 'Format',
    includeGraduates: 'Include graduated and withdrawn students (students)',
    download: 'Download',
    exportIntro:
      "An exported file can be edited and imported back as it is. Text starting with = + - @ gets an apostrophe (') in front so that a spreadsheet does not run it; imports take it off.",
  },
} as const;

const ENTITIES = Object.values(SchoolEntity);

/** Import (upload, preview, apply) and export (download) of students, clubs and projects. */
export function transferPages(kit: WebKit): AppMiddleware {
  const router = new Router<RequestState>();
  const staff = kit.requireAccount(STAFF_ROLES);

  router.get('/admin/import', staff, async (ctx) => {
    const lang = kit.lang(ctx);
    const entity = ENTITIES.find((e) => e === queryText(ctx, 'entity')) ?? 'STUDENT';
    importForm(kit, ctx, 200, {
      entity,
      removeMissing: false,
      errors: new Map(),
      flash: doneFlash(ctx, { unchanged: TEXT[lang].unchanged }),
    });
  });

  router.post('/admin/import', staff, multipartForm(), refuseOversized(kit), kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const fields = kit.fields(ctx);
    const entity = ENTITIES.find((e) => e === fields['entity']) ?? 'STUDENT';
    const removeMissing = fields['removeMissing'] === 'yes';
    const { file } = uploadOf(ctx);
    if (!file) return importForm(kit, ctx, 422, { entity, removeMissing, errors: new Map([['file', [TEXT[lang].noFile]]]) });
    const result = await op<PreviewImportMutation, PreviewImportMutationVariables>(kit, ctx, PREVIEW_IMPORT, {
      input: { entity, fileName: file.name, contentBase64: file.bytes.toString('base64'), removeMissing },
      lang: language(lang),
    });
    importPreview(kit, ctx, result.previewImport);
  });

  router.post('/admin/import/apply', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const uploadId = kit.fields(ctx)['uploadId'] ?? '';
    const result = (await op<ApplyImportMutation, ApplyImportMutationVariables>(kit, ctx, APPLY_IMPORT, { uploadId, lang: language(lang) }))
      .applyImport;
    if (result.applied)
      return seeOther(
        ctx,
        result.batchId ? `/admin/audit?batchId=${encodeURIComponent(result.batchId)}&done=imported` : '/admin/import?done=unchanged',
      );
    importPreview(kit, ctx, result);
  });

  router.get('/admin/export', staff, async (ctx) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    kit.page(ctx, 200, {
      ...adminShell(lang),
      title: t.exportTitle,
      content: html`<p>${t.exportIntro}</p>
        <form method="get" action="/admin/export/file" class="card">
          ${selectField({ name: 'entity', label: t.kind, value: 'STUDENT', errors: new Map(), options: ENTITIES.map((e) => ({ value: e, label: ENTITY_LABELS[e][lang] })) })}
          ${selectField({
            name: 'format',
            label: t.format,
            value: 'XLSX',
            errors: new Map(),
            options: [
              { value: 'XLSX', label: 'Excel (.xlsx)' },
              { value: 'CSV', label: 'CSV (.csv, UTF-8)' },
            ],
          })}
          <label class="check"><input type="checkbox" name="includeGraduates" value="yes" /> ${t.includeGraduates}</label>
          <div class="actions"><button type="submit">${t.download}</button></div>
        </form>`,
    });
  });

  router.get('/admin/export/file', staff, async (ctx) => {
    const entity = ENTITIES.find((e) => e === queryText(ctx, 'entity')) ?? 'STUDENT';
    const format = queryText(ctx, 'format') === 'CSV' ? ('CSV' as const) : ('XLSX' as const);
    const data = await op<ExportSchoolDataQuery, ExportSchoolDataQueryVariables>(kit, ctx, EXPORT_SCHOOL_DATA, {
      entity,
      format,
      includeGraduates: queryText(ctx, 'includeGraduates') === 'yes',
    });
    sendFile(ctx, data.exportSchoolData);
  });

  const routes = router.routes();
  return (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next);
}

/** Answers a file to download (the export, the audit log). */
export function sendFile(ctx: AppContext, file: { fileName: string; contentType: string; contentBase64: string }): void {
  setConsoleHeaders(ctx);
  ctx.set('Content-Disposition', `attachment; filename="${file.fileName.replace(/[^\w.-]/g, '_')}"`);
  ctx.type = file.contentType;
  ctx.body = Buffer.from(file.contentBase64, 'base64');
}

/** A body over the limit is answered with the form and a message, before the CSRF check (nothing changes). */
export function refuseOversized(kit: WebKit, render?: (ctx: AppContext, message: string) => void): AppMiddleware {
  return async (ctx, next) => {
    if (!uploadOf(ctx).tooLarge) return next();
    const lang = kit.lang(ctx);
    const message = TEXT[lang].tooLarge(formatBytes(FILE_LIMITS.maxBytes));
    if (render) return render(ctx, message);
    importForm(kit, ctx, 413, { entity: 'STUDENT', removeMissing: false, errors: new Map([['file', [message]]]) });
  };
}

function importPreview(kit: WebKit, ctx: AppContext, preview: Preview): void {
  const lang = kit.lang(ctx);
  const t = TEXT[lang];
  previewPage(kit, ctx, preview, {
    title: t.previewTitle,
    about: html`<p>${ENTITY_LABELS[preview.entity][lang]}${preview.removeMissing ? ` · ${t.removeMissing}` : ''}</p>`,
    applyAction: '/admin/import/apply',
    uploadAgain: `/admin/import?entity=${preview.entity}`,
  });
}

function importForm(
  kit: WebKit,
  ctx: AppContext,
  status: number,
  form: { entity: string; removeMissing: boolean; errors: ReadonlyMap<string, string[]>; flash?: { kind: 'ok'; text: string } | undefined },
): void {
  const lang = kit.lang(ctx);
  const t = TEXT[lang];
  const fileErrors = form.errors.get('file') ?? [];
  kit.page(ctx, status, {
    ...adminShell(lang),
    title: t.importTitle,
    ...withFlash(form.flash),
    content: html`${errorSummary(lang, form.errors, ['file'])}
      <p>${t.intro}</p>
      <p>${t.order}</p>
      <form method="post" action="/admin/import" enctype="multipart/form-data" class="card" novalidate>
        ${csrfField(kit, ctx)}
        ${selectField({ name: 'entity', label: t.kind, value: form.entity, errors: form.errors, options: ENTITIES.map((e) => ({ value: e, label: ENTITY_LABELS[e][lang] })) })}
        ${spreadsheetField(t.file, t.fileHint(formatBytes(FILE_LIMITS.maxBytes), FILE_LIMITS.maxRows), fileErrors)}
        <label class="check"
          ><input type="checkbox" name="removeMissing" value="yes" ${form.removeMissing ? html`checked` : ''} /> ${t.removeMissing}</label
        >
        <div class="actions"><button type="submit">${t.preview}</button></div>
      </form>
      <section aria-labelledby="formats">
        <h2 id="formats">${t.formats}</h2>
        <p>${t.template} <a href="/admin/export">${TEXT[lang].exportTitle}</a></p>
        ${ENTITIES.map((e) => formatTable(lang, e))}
        <p>${t.original}</p>
      </section>`,
  });
}

/** The columns of a kind's files, from the same definitions imports read (src/data/school/columns.ts). */
function formatTable(lang: Lang, entity: SchoolEntity): Html {
  const t = TEXT[lang];
  const columns = formatOf(entity).columns.filter((c) => c.exported);
  const english = (aliases: readonly string[]) => aliases.find((a) => /^[A-Za-z ]+$/.test(a)) ?? '';
  return html`<h3>${ENTITY_LABELS[entity][lang]}</h3>
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">${t.header}</th>
            <th scope="col">${t.alias}</th>
          </tr>
        </thead>
        <tbody>
          ${columns.map(
            (c) =>
              html`<tr>
                <td>${c.header}</td>
                <td class="mono">${c.header === 'ID' ? 'id' : english(c.aliases)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
}
