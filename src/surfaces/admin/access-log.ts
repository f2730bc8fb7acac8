import { isCalendarDate } from '../../calendar.js';
import { ACCESS_ACTIONS, type AccessAction, type AccessAuditDoc, type AccessCriteria } from '../../data/accounts/access-log.js';
import { anyOption, field, listPage, select, table, when } from '../web/components.js';
import { html, type Html } from '../web/html.js';
import { page, type Outcome, type PageRequest } from '../web/routes.js';
import type { AdminDeps } from './deps.js';
import { queryInt } from './ui.js';

const PAGE_SIZE = 50;
const PATH = '/admin/audit';

/** The two logs of /admin/audit: the school data's changes, and access (privilege changes and exports). */
export function logSwitch(req: PageRequest, current: 'school' | 'access'): Html {
  const a = req.t.admin.access;
  const link = (href: string, label: string, here: boolean) =>
    here ? html`<strong aria-current="page">${label}</strong>` : html`<a href="${href}">${label}</a>`;
  return html`<p class="tabs">
    ${link(PATH, a.schoolLog, current === 'school')} · ${link(`${PATH}?log=access`, a.title, current === 'access')}
  </p>`;
}

/** The access log's filters, from the query (anything unknown is left out). */
function criteriaOf(req: PageRequest): AccessCriteria {
  const action = ACCESS_ACTIONS.find((x) => x === req.query('action'));
  const date = (name: string) => (isCalendarDate(req.query(name)) ? req.query(name) : null);
  return {
    action: action ?? null,
    actor: req.query('actor') || null,
    target: req.query('target') || null,
    from: date('from'),
    to: date('to'),
  };
}

/**
 * GET /admin/audit?log=access (docs/decisions.md, "The access log"): every privilege change (key
 * scopes approved or refused, apps approved, disabled or enabled, roles changed, teachers' sign-ups
 * decided) and every export of personal data, newest first, filtered by action, actor, target and
 * dates.
 */
export async function accessLogPage(req: PageRequest, deps: AdminDeps): Promise<Outcome> {
  const { t } = req;
  const a = t.admin.access;
  const criteria = criteriaOf(req);
  const pageNumber = queryInt(req, 'page', 0, 100000) ?? 0;
  const found = await deps.audit.list(criteria, pageNumber, PAGE_SIZE, deps.config.schoolTimeZone);
  const params = { log: 'access', ...criteria };
  return page(
    a.title,
    listPage(t, {
      path: PATH,
      before: html`${logSwitch(req, 'access')}
        <p>${a.intro}</p>`,
      hidden: html`<input type="hidden" name="log" value="access" />`,
      filters: [
        select({
          name: 'action',
          label: a.action,
          value: criteria.action ?? '',
          options: anyOption(
            t,
            ACCESS_ACTIONS.map((x) => ({ value: x, label: a.actions[x] })),
          ),
        }),
        field({ name: 'actor', label: a.actor, value: criteria.actor ?? '' }),
        field({ name: 'target', label: a.target, value: criteria.target ?? '' }),
        field({ name: 'from', label: a.from, value: criteria.from ?? '', type: 'date' }),
        field({ name: 'to', label: a.to, value: criteria.to ?? '', type: 'date' }),
      ],
      status: a.count(found.total),
      table: table(t, {
        className: 'audit',
        columns: a.columns,
        rows: found.entries,
        empty: a.none,
        cells: (e: AccessAuditDoc) => [
          { content: when(deps, t, e.at), className: 'nowrap' },
          e.actorKind === 'ACCOUNT' ? (e.actorEmail ?? '—') : e.actorKind,
          html`<span data-action="${e.action}">${a.actions[e.action as AccessAction]}</span>`,
          { content: html`${e.targetLabel} <span class="muted break">(${e.targetId})</span>`, rowHeader: true },
          html`<code class="break">${detailText(e.detail)}</code>`,
        ],
      }),
      page: pageNumber,
      totalPages: Math.ceil(found.total / PAGE_SIZE),
      params,
    }),
  );
}

/** The change or the export's filter, as one line of JSON (a person reads it; nothing parses it). */
function detailText(detail: unknown): string {
  if (detail === null || detail === undefined) return '—';
  return JSON.stringify(detail);
}
