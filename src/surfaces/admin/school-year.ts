import Router from '@koa/router';
import { STAFF_ROLES } from '../../auth/principal.js';
import { ROLLOVER_COLUMNS } from '../../data/school/rollover.js';
import { FILE_LIMITS, formatBytes } from '../../data/school/spreadsheet.js';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { html } from '../../http/web/html.js';
import type { WebKit } from '../web/index.js';
import type {
  ApplyRolloverMutation,
  ApplyRolloverMutationVariables,
  PreviewRolloverMutation,
  PreviewRolloverMutationVariables,
} from './__generated__/operations.js';
import { multipartForm, uploadOf } from './multipart.js';
import { adminShell } from './nav.js';
import { APPLY_ROLLOVER, PREVIEW_ROLLOVER } from './operations/transfer.js';
import { previewPage, type Preview } from './preview.js';
import { refuseOversized } from './transfer.js';
import { csrfField, errorSummary, language, op, seeOther, spreadsheetField } from './ui.js';

const TEXT = {
  ko: {
    title: '학년도 전환',
    previewTitle: '학년도 전환 미리 보기',
    intro:
      '새 학년도를 시작합니다: 3학년은 졸업 처리되고(학년·반·번호·학과·호실·동아리가 비워지고, 부장인 동아리는 부장이 없어집니다), 1·2학년은 한 학년 올라갑니다. 새 반과 번호는 올린 파일에서 가져오며, 파일에 없는 학생은 반과 번호를 그대로 둡니다.',
    safety:
      '가져오기처럼 먼저 미리 보기로 확인하고, 적용은 전부 되거나 전혀 되지 않습니다. 적용한 전환은 변경 기록에서 되돌릴 수 있습니다 (그 뒤 바뀐 학생이 없을 때).',
    file: '새 반·번호 파일 (.xlsx 또는 .csv)',
    fileHint: (max: string) => `최대 ${max}. 학생은 ID, 이메일 또는 지금 학번으로 찾습니다.`,
    columns: '열',
    example: '예',
    preview: '미리 보기',
    noFile: '파일을 고르세요.',
  },
  en: {
    title: 'School year',
    previewTitle: 'School-year rollover preview',
    intro:
      'Starts a new school year: grade 3 graduates (grade, class, number, major, room and clubs cleared; clubs they lead lose their leader) and grades 1 and 2 move up. The new class and number of each student come from the uploaded file; a student the file does not list keeps their class and number.',
    safety:
      'Like an import it is previewed first and applied all or nothing. An applied rollover can be undone from the audit log (as long as none of its students changed since).',
    file: 'New classes and numbers (.xlsx or .csv)',
    fileHint: (max: string) => `At most ${max}. Students are found by ID, email or current student number.`,
    columns: 'Columns',
    example: 'Example',
    preview: 'Preview',
    noFile: 'Choose a file.',
  },
} as const;

/** The school-year rollover: upload the new classes, preview, apply (undo is in the audit log). */
export function schoolYearPages(kit: WebKit): AppMiddleware {
  const router = new Router<RequestState>();
  const staff = kit.requireAccount(STAFF_ROLES);

  router.get('/admin/school-year', staff, async (ctx) => uploadForm(kit, ctx, 200, new Map()));

  router.post(
    '/admin/school-year',
    staff,
    multipartForm(),
    refuseOversized(kit, (ctx, message) => uploadForm(kit, ctx, 413, new Map([['file', [message]]]))),
    kit.form,
    async (ctx) => {
      const lang = kit.lang(ctx);
      const { file } = uploadOf(ctx);
      if (!file) return uploadForm(kit, ctx, 422, new Map([['file', [TEXT[lang].noFile]]]));
      const result = await op<PreviewRolloverMutation, PreviewRolloverMutationVariables>(kit, ctx, PREVIEW_ROLLOVER, {
        input: { fileName: file.name, contentBase64: file.bytes.toString('base64') },
        lang: language(lang),
      });
      rolloverPreview(kit, ctx, result.previewRollover);
    },
  );

  router.post('/admin/school-year/apply', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const uploadId = kit.fields(ctx)['uploadId'] ?? '';
    const result = (
      await op<ApplyRolloverMutation, ApplyRolloverMutationVariables>(kit, ctx, APPLY_ROLLOVER, { uploadId, lang: language(lang) })
    ).applyRollover;
    if (result.applied && result.batchId)
      return seeOther(ctx, `/admin/audit?batchId=${encodeURIComponent(result.batchId)}&done=rolledOver`);
    rolloverPreview(kit, ctx, result);
  });

  const routes = router.routes();
  return (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next);
}

function rolloverPreview(kit: WebKit, ctx: AppContext, preview: Preview): void {
  previewPage(kit, ctx, preview, {
    title: TEXT[kit.lang(ctx)].previewTitle,
    about: '',
    applyAction: '/admin/school-year/apply',
    uploadAgain: '/admin/school-year',
  });
}

function uploadForm(kit: WebKit, ctx: AppContext, status: number, errors: ReadonlyMap<string, string[]>): void {
  const lang = kit.lang(ctx);
  const t = TEXT[lang];
  const fileErrors = errors.get('file') ?? [];
  const columns = ROLLOVER_COLUMNS.map((c) => c.header);
  kit.page(ctx, status, {
    ...adminShell(lang),
    title: t.title,
    content: html`${errorSummary(lang, errors, ['file'])}
      <p>${t.intro}</p>
      <p>${t.safety}</p>
      <form method="post" action="/admin/school-year" enctype="multipart/form-data" class="card" novalidate>
        ${csrfField(kit, ctx)} ${spreadsheetField(t.file, t.fileHint(formatBytes(FILE_LIMITS.maxBytes)), fileErrors)}
        <div class="actions"><button type="submit">${t.preview}</button></div>
      </form>
      <section aria-labelledby="rollover-format">
        <h2 id="rollover-format">${t.columns}</h2>
        <p class="mono">${columns.join(' | ')}</p>
        <h3>${t.example}</h3>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">학번</th>
                <th scope="col">학생명</th>
                <th scope="col">새 반</th>
                <th scope="col">새 번호</th>
              </tr>
            </thead>
            <tbody>
              <tr>
                <td>1101</td>
                <td>홍길동</td>
                <td>2</td>
                <td>5</td>
              </tr>
              <tr>
                <td>1102</td>
                <td>김하나</td>
                <td>1</td>
                <td>1</td>
              </tr>
            </tbody>
          </table>
        </div>
      </section>`,
  });
}
