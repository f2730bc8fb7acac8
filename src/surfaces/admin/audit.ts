import Router from '@koa/router';
import { STAFF_ROLES } from '../../auth/principal.js';
import { isCalendarDate } from '../../calendar.js';
import { AuditAction, SchoolEntity } from '../../data/__generated__/enums.js';
import { ACTION_LABELS, ENTITY_LABELS, OPERATION_LABELS, STATUS_LABELS, type Lang } from '../../data/school/labels.js';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { html, type Html } from '../../http/web/html.js';
import type { WebKit } from '../web/index.js';
import type {
  AuditFilter,
  AuditLogQuery,
  AuditLogQueryVariables,
  ExportAuditLogQuery,
  ExportAuditLogQueryVariables,
  UndoAuditBatchMutation,
  UndoAuditBatchMutationVariables,
} from './__generated__/operations.js';
import { adminShell } from './nav.js';
import { AUDIT_LOG, EXPORT_AUDIT_LOG, UNDO_AUDIT_BATCH } from './operations/audit.js';
import { sendFile } from './transfer.js';
import {
  anyOption,
  changeLine,
  csrfField,
  doneFlash,
  errorsByField,
  errorSummary,
  inputField,
  language,
  listPage,
  listTable,
  op,
  queryInt,
  queryText,
  seeOther,
  selectField,
  withFlash,
  withQuery,
} from './ui.js';

const PAGE_SIZE = 50;

const TEXT = {
  ko: {
    title: '변경 기록',
    intro: '학생, 동아리, 프로젝트의 모든 변경: 누가, 언제, 어느 레코드의 어떤 항목을 무엇에서 무엇으로 바꿨는지.',
    entity: '종류',
    action: '작업',
    actor: '변경한 사람 (이메일 또는 CLI)',
    recordId: '레코드 ID',
    from: '시작일',
    to: '종료일',
    columns: ['시각', '변경한 사람', '작업', '레코드', '바뀐 항목', '상태'],
    count: (n: number) => `${n}건`,
    download: '내려받기:',
    batch: '변경 묶음',
    batchFields: { at: '시각', actor: '변경한 사람', action: '작업', summary: '내용', status: '상태', records: '레코드 수' },
    undo: '이 변경 되돌리기',
    undoHint: '저장된 변경 전 값으로 되돌립니다. 그 뒤 바뀐 레코드가 있으면 되돌리지 않습니다. 되돌리기도 새 변경으로 기록됩니다.',
    undoneBy: '되돌린 변경',
    undoes: '되돌린 대상',
    all: '모든 기록 보기',
    done: {
      imported: '가져오기를 적용했습니다. 아래가 이번 변경입니다.',
      rolledOver: '학년도를 전환했습니다. 아래가 이번 변경입니다.',
      undone: '되돌렸습니다. 아래가 되돌린 변경입니다.',
    },
  },
  en: {
    title: 'Audit log',
    intro: 'Every change to students, clubs and projects: who, when, which record, and each field before and after.',
    entity: 'Kind',
    action: 'Action',
    actor: 'Who (email or CLI)',
    recordId: 'Record ID',
    from: 'From',
    to: 'To',
    columns: ['When', 'Who', 'Action', 'Record', 'Fields', 'Status'],
    count: (n: number) => `${n} ${n === 1 ? 'change' : 'changes'}`,
    download: 'Download:',
    batch: 'Change',
    batchFields: { at: 'When', actor: 'Who', action: 'Action', summary: 'Summary', status: 'Status', records: 'Records' },
    undo: 'Undo this change',
    undoHint: 'Restores the values from before it. Refused when a record changed after it. The undo is recorded as a change too.',
    undoneBy: 'Undone by',
    undoes: 'Undoes',
    all: 'Show every change',
    done: {
      imported: 'The import was applied; these are its changes.',
      rolledOver: 'The school year was rolled over; these are its changes.',
      undone: 'Undone; these are the changes that restored the records.',
    },
  },
} as const;

const RECORD_PATHS: Readonly<Record<SchoolEntity, string>> = {
  STUDENT: '/admin/students',
  CLUB: '/admin/clubs',
  PROJECT: '/admin/projects',
};

/** The audit log: filters, paging, one change's batch with undo, and downloads. */
export function auditPages(kit: WebKit): AppMiddleware {
  const router = new Router<RequestState>();
  const staff = kit.requireAccount(STAFF_ROLES);

  router.get('/admin/audit', staff, async (ctx) => auditPage(kit, ctx, 200, new Map()));

  router.get('/admin/audit/export', staff, async (ctx) => {
    const format = queryText(ctx, 'format') === 'CSV' ? ('CSV' as const) : ('XLSX' as const);
    const data = await op<ExportAuditLogQuery, ExportAuditLogQueryVariables>(kit, ctx, EXPORT_AUDIT_LOG, { filter: filterOf(ctx), format });
    sendFile(ctx, data.exportAuditLog);
  });

  router.post('/admin/audit/undo', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const batchId = kit.fields(ctx)['batchId'] ?? '';
    const result = (
      await op<UndoAuditBatchMutation, UndoAuditBatchMutationVariables>(kit, ctx, UNDO_AUDIT_BATCH, { batchId, lang: language(lang) })
    ).undoAuditBatch;
    if (result.errors.length === 0 && result.batchId)
      return seeOther(ctx, `/admin/audit?batchId=${encodeURIComponent(result.batchId)}&done=undone`);
    ctx.query = { ...ctx.query, batchId };
    await auditPage(kit, ctx, 422, errorsByField(result.errors));
  });

  const routes = router.routes();
  return (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next);
}

function filterOf(ctx: AppContext): AuditFilter {
  const entity = Object.values(SchoolEntity).find((e) => e === queryText(ctx, 'entity'));
  const action = Object.values(AuditAction).find((a) => a === queryText(ctx, 'action'));
  const date = (name: string) => (isCalendarDate(queryText(ctx, name)) ? queryText(ctx, name) : null);
  const filter: AuditFilter = {};
  if (entity) filter.entity = entity;
  if (action) filter.action = action;
  const actor = queryText(ctx, 'actor');
  if (actor) filter.actor = actor;
  const recordId = queryInt(ctx, 'recordId', 1, Number.MAX_SAFE_INTEGER);
  if (recordId) filter.recordId = recordId;
  const batchId = queryText(ctx, 'batchId');
  if (/^[0-9a-f-]{36}$/.test(batchId)) filter.batchId = batchId;
  const from = date('from');
  const to = date('to');
  if (from) filter.from = from;
  if (to) filter.to = to;
  return filter;
}

async function auditPage(kit: WebKit, ctx: AppContext, status: number, errors: ReadonlyMap<string, string[]>): Promise<void> {
  const lang = kit.lang(ctx);
  const t = TEXT[lang];
  const filter = filterOf(ctx);
  const page = queryInt(ctx, 'page', 0, 100000) ?? 0;
  const data = await op<AuditLogQuery, AuditLogQueryVariables>(kit, ctx, AUDIT_LOG, {
    filter,
    page,
    size: PAGE_SIZE,
    batchId: filter.batchId ?? '',
    withBatch: Boolean(filter.batchId),
  });
  const params = { ...filter } as Record<string, string | number | null | undefined>;
  kit.page(ctx, status, {
    ...adminShell(lang),
    title: t.title,
    ...withFlash(doneFlash(ctx, t.done)),
    content: listPage(lang, {
      path: '/admin/audit',
      before: html`${errorSummary(lang, errors, [])}
        <p>${t.intro}</p>
        ${data.auditBatch ? batchCard(kit, ctx, lang, data.auditBatch) : ''}`,
      hidden: filter.batchId ? html`<input type="hidden" name="batchId" value="${filter.batchId}" />` : '',
      filters: [
        selectField({
          name: 'entity',
          label: t.entity,
          value: filter.entity,
          errors: new Map(),
          options: anyOption(
            lang,
            Object.values(SchoolEntity).map((e) => ({ value: e, label: ENTITY_LABELS[e][lang] })),
          ),
        }),
        selectField({
          name: 'action',
          label: t.action,
          value: filter.action,
          errors: new Map(),
          options: anyOption(
            lang,
            Object.values(AuditAction).map((a) => ({ value: a, label: ACTION_LABELS[a][lang] })),
          ),
        }),
        inputField({ name: 'actor', label: t.actor, value: filter.actor, errors: new Map() }),
        inputField({
          name: 'recordId',
          label: t.recordId,
          value: filter.recordId,
          errors: new Map(),
          type: 'number',
          inputmode: 'numeric',
          min: 1,
        }),
        inputField({ name: 'from', label: t.from, value: filter.from, errors: new Map(), type: 'date' }),
        inputField({ name: 'to', label: t.to, value: filter.to, errors: new Map(), type: 'date' }),
      ],
      status: html`${t.count(data.auditLog.totalElements)} · ${t.download}
        <a href="${withQuery('/admin/audit/export', { ...params, format: 'XLSX' })}">Excel (.xlsx)</a> ·
        <a href="${withQuery('/admin/audit/export', { ...params, format: 'CSV' })}">CSV</a>`,
      table: entryTable(lang, data.auditLog.entries),
      page,
      totalPages: data.auditLog.totalPages,
      params,
    }),
  });
}

function batchCard(kit: WebKit, ctx: AppContext, lang: Lang, batch: NonNullable<AuditLogQuery['auditBatch']>): Html {
  const t = TEXT[lang];
  const f = t.batchFields;
  return html`<section class="card" aria-labelledby="batch-heading">
    <h2 id="batch-heading">${t.batch}</h2>
    <dl class="counts">
      <div>
        <dt>${f.at}</dt>
        <dd>${batch.at}</dd>
      </div>
      <div>
        <dt>${f.actor}</dt>
        <dd>${batch.actor}</dd>
      </div>
      <div>
        <dt>${f.action}</dt>
        <dd>${ACTION_LABELS[batch.action][lang]}</dd>
      </div>
      <div>
        <dt>${f.status}</dt>
        <dd data-status="${batch.status}">${STATUS_LABELS[batch.status][lang]}</dd>
      </div>
      <div>
        <dt>${f.records}</dt>
        <dd>${batch.records}</dd>
      </div>
    </dl>
    <p class="mono">${batch.summary}</p>
    ${batch.undoneBy ? html`<p>${t.undoneBy}: <a href="/admin/audit?batchId=${batch.undoneBy}">${batch.undoneBy}</a></p>` : ''}
    ${batch.undoes ? html`<p>${t.undoes}: <a href="/admin/audit?batchId=${batch.undoes}">${batch.undoes}</a></p>` : ''}
    ${
      batch.undoable
        ? html`<form method="post" action="/admin/audit/undo">
            ${csrfField(kit, ctx)}
            <input type="hidden" name="batchId" value="${batch.id}" />
            <p class="hint">${t.undoHint}</p>
            <div class="actions"><button type="submit" class="secondary">${t.undo}</button></div>
          </form>`
        : ''
    }
    <p><a href="/admin/audit">${t.all}</a></p>
  </section>`;
}

function entryTable(lang: Lang, entries: AuditLogQuery['auditLog']['entries']): Html {
  return listTable(
    lang,
    'audit',
    TEXT[lang].columns,
    entries,
    (e) =>
      html`<tr>
        <td class="nowrap">${e.at}</td>
        <td>${e.actor}</td>
        <td><a href="/admin/audit?batchId=${e.batchId}">${ACTION_LABELS[e.action][lang]}</a></td>
        <td>
          ${ENTITY_LABELS[e.entity][lang]} <a href="${RECORD_PATHS[e.entity]}/${e.recordId}">#${e.recordId}</a> ${e.label}
          <span class="muted">(${OPERATION_LABELS[e.operation][lang]})</span>
        </td>
        <td>
          <ul class="plain">
            ${e.changes.map((c) => html`<li>${changeLine(lang, c, e.entity)}</li>`)}
          </ul>
        </td>
        <td>${STATUS_LABELS[e.status][lang]}</td>
      </tr>`,
  );
}
