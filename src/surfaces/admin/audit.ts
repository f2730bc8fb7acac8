import { isCalendarDate } from '../../calendar.js';
import { AuditAction, SchoolEntity } from '../../data/__generated__/enums.js';
import { ACTION_LABELS, ENTITY_LABELS, OPERATION_LABELS, STATUS_LABELS } from '../../data/school/labels.js';
import { anyOption, csrfField, errorSummary, field, listPage, select, table, withQuery, type FieldError } from '../web/components.js';
import { html, type Html } from '../web/html.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type {
  AuditFilter,
  AuditLogQuery,
  AuditLogQueryVariables,
  ExportAuditLogQuery,
  ExportAuditLogQueryVariables,
  UndoAuditBatchMutation,
  UndoAuditBatchMutationVariables,
} from './__generated__/operations.js';
import { accessLogPage, logSwitch } from './access-log.js';
import type { AdminDeps } from './deps.js';
import { AUDIT_LOG, EXPORT_AUDIT_LOG, UNDO_AUDIT_BATCH } from './operations/audit.js';
import { fileOf } from './transfer.js';
import { atInputs, changeLine, language, queryInt } from './ui.js';

const PAGE_SIZE = 50;
const LIST = '/admin/audit';

const RECORD_PATHS: Readonly<Record<SchoolEntity, string>> = {
  STUDENT: '/admin/students',
  CLUB: '/admin/clubs',
  PROJECT: '/admin/projects',
};

/** The audit log's filters, from the query (anything unknown is left out). */
function filterOf(req: PageRequest, batchId = req.query('batchId')): AuditFilter {
  const entity = Object.values(SchoolEntity).find((e) => e === req.query('entity'));
  const action = Object.values(AuditAction).find((a) => a === req.query('action'));
  const date = (name: string) => (isCalendarDate(req.query(name)) ? req.query(name) : null);
  const filter: AuditFilter = {};
  if (entity) filter.entity = entity;
  if (action) filter.action = action;
  const actor = req.query('actor');
  if (actor) filter.actor = actor;
  const recordId = queryInt(req, 'recordId', 1, Number.MAX_SAFE_INTEGER);
  if (recordId) filter.recordId = recordId;
  if (/^[0-9a-f-]{36}$/.test(batchId)) filter.batchId = batchId;
  const from = date('from');
  const to = date('to');
  if (from) filter.from = from;
  if (to) filter.to = to;
  return filter;
}

/** The log (filters, paging, downloads) and, with ?batchId=, one change's batch with its undo. */
async function auditPage(req: PageRequest, deps: AdminDeps, filter: AuditFilter, errors: readonly FieldError[] = []): Promise<Outcome> {
  const { t, lang } = req;
  const a = t.admin.audit;
  const pageNumber = queryInt(req, 'page', 0, 100000) ?? 0;
  const data = await deps.school.run<AuditLogQuery, AuditLogQueryVariables>(req, AUDIT_LOG, {
    filter,
    page: pageNumber,
    size: PAGE_SIZE,
    batchId: filter.batchId ?? '',
    withBatch: Boolean(filter.batchId),
  });
  const params = { ...filter } as Record<string, string | number | null | undefined>;
  return page(
    a.title,
    listPage(t, {
      path: LIST,
      before: html`${logSwitch(req, 'school')} ${errorSummary(t, errors, [])}
        <p>${a.intro}</p>
        ${data.resets.map(
          (reset) =>
            html`<p class="notice" role="note">
              ${a.reset(reset.at, reset.actor)} <a href="${LIST}?batchId=${reset.id}">${a.resetDetails}</a>
            </p>`,
        )}
        ${data.interrupted.length > 0 && !filter.batchId ? interruptedList(req, data.interrupted) : ''}
        ${data.auditBatch ? batchCard(req, data.auditBatch) : ''}`,
      hidden: filter.batchId ? html`<input type="hidden" name="batchId" value="${filter.batchId}" />` : html``,
      filters: [
        select({
          name: 'entity',
          label: a.entity,
          value: filter.entity,
          options: anyOption(
            t,
            Object.values(SchoolEntity).map((e) => ({ value: e, label: ENTITY_LABELS[e][lang] })),
          ),
        }),
        select({
          name: 'action',
          label: a.action,
          value: filter.action,
          options: anyOption(
            t,
            Object.values(AuditAction).map((x) => ({ value: x, label: ACTION_LABELS[x][lang] })),
          ),
        }),
        field({ name: 'actor', label: a.actor, value: filter.actor }),
        field({ name: 'recordId', label: a.recordId, value: filter.recordId, type: 'number', inputmode: 'numeric', min: 1 }),
        field({ name: 'from', label: a.from, value: filter.from, type: 'date' }),
        field({ name: 'to', label: a.to, value: filter.to, type: 'date' }),
      ],
      status: html`${a.count(data.auditLog.totalElements)} · ${a.download}
        <a href="${withQuery('/admin/audit/export', { ...params, format: 'XLSX' })}">Excel (.xlsx)</a> ·
        <a href="${withQuery('/admin/audit/export', { ...params, format: 'CSV' })}">CSV</a>`,
      table: entryTable(req, data.auditLog.entries),
      page: pageNumber,
      totalPages: data.auditLog.totalPages,
      params,
    }),
    errors.length > 0 ? 422 : 200,
  );
}

/**
 * The changes whose writer stopped half-way and what became of them (docs/school-writes.md): the log's list
 * holds only changes that took effect, so these would otherwise be found only by their id.
 */
function interruptedList(req: PageRequest, batches: AuditLogQuery['interrupted']): Html {
  const a = req.t.admin.audit;
  return html`<section class="card" aria-labelledby="interrupted-heading">
    <h2 id="interrupted-heading">${a.interruptedTitle}</h2>
    <p>${a.interruptedIntro}</p>
    <ul>
      ${batches.map(
        (b) =>
          html`<li data-batch="${b.id}">
            <strong>${ACTION_LABELS[b.action][req.lang]}</strong>
            ${a.interruptedLine(b.at, b.actor, b.recoveredAt ?? '?', b.recoveredBy ?? '?')}
            <span class="mono">${b.summary}</span>
            <a href="${LIST}?batchId=${b.id}">${a.details}</a>
          </li>`,
      )}
    </ul>
  </section>`;
}

function batchCard(req: PageRequest, batch: NonNullable<AuditLogQuery['auditBatch']>): Html {
  const { t, lang } = req;
  const a = t.admin.audit;
  const f = a.batchFields;
  const fact = (label: string, value: Html | string | number) =>
    html`<div>
      <dt>${label}</dt>
      <dd>${value}</dd>
    </div>`;
  return html`<section class="card" aria-labelledby="batch-heading">
    <h2 id="batch-heading">${a.batch}</h2>
    <dl class="counts">
      ${fact(f.at, batch.at)} ${fact(f.actor, batch.actor)} ${fact(f.action, ACTION_LABELS[batch.action][lang])}
      <div>
        <dt>${f.status}</dt>
        <dd data-status="${batch.status}">${batch.interrupted ? a.interrupted : STATUS_LABELS[batch.status][lang]}</dd>
      </div>
      ${fact(f.records, batch.records)}
      ${batch.interrupted ? html`${fact(a.recoveredAt, batch.recoveredAt ?? '?')} ${fact(a.recoveredBy, batch.recoveredBy ?? '?')}` : ''}
    </dl>
    ${batch.error ? html`<p>${a.error}: ${batch.error}</p>` : ''}
    <p class="mono">${batch.summary}</p>
    ${batch.undoneBy ? html`<p>${a.undoneBy}: <a href="${LIST}?batchId=${batch.undoneBy}">${batch.undoneBy}</a></p>` : ''}
    ${batch.undoes ? html`<p>${a.undoes}: <a href="${LIST}?batchId=${batch.undoes}">${batch.undoes}</a></p>` : ''}
    ${batch.supersededBy ? html`<p>${a.supersededBy}: <a href="${LIST}?batchId=${batch.supersededBy}">${batch.supersededBy}</a></p>` : ''}
    ${
      batch.undoable
        ? html`<form method="post" action="/admin/audit/undo">
            ${csrfField(req.csrf)}
            <input type="hidden" name="batchId" value="${batch.id}" />
            <p class="hint">${a.undoHint}</p>
            <div class="actions"><button type="submit" class="secondary">${a.undo}</button></div>
          </form>`
        : ''
    }
    <p><a href="${LIST}">${a.all}</a></p>
  </section>`;
}

function entryTable(req: PageRequest, entries: AuditLogQuery['auditLog']['entries']): Html {
  const { t, lang } = req;
  return table(t, {
    className: 'audit',
    columns: t.admin.audit.columns,
    rows: entries,
    cells: (e) => [
      { content: e.at, className: 'nowrap' },
      e.actor,
      html`<a href="${LIST}?batchId=${e.batchId}">${ACTION_LABELS[e.action][lang]}</a>`,
      html`${ENTITY_LABELS[e.entity][lang]} <a href="${RECORD_PATHS[e.entity]}/${e.recordId}">#${e.recordId}</a> ${e.label}
        <span class="muted">(${OPERATION_LABELS[e.operation][lang]})</span>`,
      html`<ul class="plain">
        ${e.changes.map((c) => html`<li>${changeLine(lang, c, e.entity)}</li>`)}
      </ul>`,
      STATUS_LABELS[e.status][lang],
    ],
  });
}

export const auditList: Handler<AdminDeps> = async (req, deps) =>
  // The access log (privilege changes, exports of personal data) is the other log of this page.
  req.query('log') === 'access' ? accessLogPage(req, deps) : auditPage(req, deps, filterOf(req));

export const auditExport: Handler<AdminDeps> = async (req, deps) => {
  const format = req.query('format') === 'CSV' ? ('CSV' as const) : ('XLSX' as const);
  const filter = filterOf(req);
  const data = await deps.school.run<ExportAuditLogQuery, ExportAuditLogQueryVariables>(req, EXPORT_AUDIT_LOG, { filter, format });
  // The audit log holds records' before and after: its export is one of personal data (docs/decisions.md, "The access log").
  if (req.account) {
    await deps.audit.record(
      { kind: 'ACCOUNT', id: req.account.accountId, email: req.account.email },
      {
        action: 'DATA_EXPORTED',
        target: { kind: 'DATA', id: 'AUDIT_LOG', label: data.exportAuditLog.fileName },
        detail: { format, filter: { ...filter } },
      },
    );
  }
  return fileOf(data.exportAuditLog, req.t.admin.audit.fileStem);
};

export const auditUndo: Handler<AdminDeps> = async (req, deps) => {
  const batchId = typeof req.form['batchId'] === 'string' ? req.form['batchId'] : '';
  const result = (
    await deps.school.run<UndoAuditBatchMutation, UndoAuditBatchMutationVariables>(req, UNDO_AUDIT_BATCH, {
      batchId,
      lang: language(req.lang),
    })
  ).undoAuditBatch;
  if (result.errors.length === 0 && result.batchId)
    return redirect(`${LIST}?batchId=${encodeURIComponent(result.batchId)}`, { kind: 'ok', text: req.t.admin.audit.done.undone });
  return auditPage(req, deps, filterOf(req, batchId), atInputs(result.errors));
};
