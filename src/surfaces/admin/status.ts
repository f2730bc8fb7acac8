import { z } from 'zod';
import { isCalendarDate, zonedInstant } from '../../calendar.js';
import {
  finalState,
  INCIDENT_KINDS,
  INCIDENT_STATES,
  IncidentClosedError,
  IncidentRefusedError,
  isClosed,
  MAX_INCIDENT_TITLE,
  type IncidentDoc,
  type IncidentKind,
} from '../../data/operations/incidents.js';
import { STATUS_PARTS } from '../../data/operations/status-parts.js';
import type { Actor } from '../../data/school/types.js';
import {
  actionCard,
  choices,
  csrfField,
  errorSummary,
  facts,
  field,
  linkButton,
  select,
  table,
  textArea,
  when,
  type FieldError,
} from '../web/components.js';
import { formList, formValue, list, text, type FormFields } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type { AdminDeps } from './deps.js';
import { formValues } from './ui.js';

/*
 * /admin/status: incidents and planned maintenance shown on the status page (/status,
 * src/surfaces/web/status.ts), posted and followed by staff; `campus status incident` does the
 * same (src/cli/commands/status.ts). The rules are the store's (src/data/operations/incidents.ts):
 * this page shows its refusals at their fields.
 */

const LIST = '/admin/status';
const OPEN_INPUTS = ['kind', 'title', 'message', 'parts', 'state', 'startsAt', 'endsAt'];

const openForm = z.object({
  kind: text(),
  title: text(),
  message: text(),
  parts: list(),
  state: text(),
  startsAt: text(),
  endsAt: text(),
});
const updateForm = z.object({ message: text(), state: text() });
/** The closing update has a field of its own: the page shows both forms, each with its errors. */
const resolveForm = z.object({ closing: text() });

/** Who posts: the signed-in staff member. */
function actorOf(req: PageRequest): Actor {
  return { kind: 'ACCOUNT', accountId: req.account?.accountId ?? 0, email: req.account?.email ?? '' };
}

/** A `datetime-local` value (YYYY-MM-DDTHH:MM) read in the school's time zone; '' is undefined; anything else, null. */
function wallTime(value: string, timeZone: string): Date | undefined | null {
  if (value === '') return undefined;
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})$/.exec(value);
  if (!match?.[1] || !isCalendarDate(match[1]) || Number(match[2]) > 23 || Number(match[3]) > 59) return null;
  return zonedInstant(match[1], `${match[2]}:${match[3]}`, timeZone);
}

/** A refusal of the store at its field, in the page's words. */
function refusal(req: PageRequest, err: unknown): FieldError | null {
  // A closed notice shows no form: its refusal is said at the top, at no field.
  if (err instanceof IncidentClosedError) return { field: 'closed', message: req.t.admin.status.problems.CLOSED };
  if (err instanceof IncidentRefusedError) return { field: err.field, message: req.t.admin.status.problems[err.problem] };
  return null;
}

function stateOptions(req: PageRequest, kind: IncidentKind | null) {
  const s = req.t.status;
  const kinds = kind ? [kind] : INCIDENT_KINDS;
  return kinds.flatMap((k) =>
    INCIDENT_STATES[k]
      .slice(0, -1)
      .map((state) => ({ value: state, label: kind ? s.incidentStates[state] : `${s.kinds[k]}: ${s.incidentStates[state]}` })),
  );
}

/** GET /admin/status: every notice, open ones first, and the form of a new one. */
export const statusNotices: Handler<AdminDeps> = async (req, deps) => noticesPage(req, deps, {}, []);

async function noticesPage(
  req: PageRequest,
  deps: AdminDeps,
  values: FormFields,
  errors: readonly FieldError[],
  status = 200,
): Promise<Outcome> {
  const { t } = req;
  const a = t.admin.status;
  const s = t.status;
  const notices = await deps.status.incidents.list();
  const one = (name: string) => formValue(values, name);
  const chosenParts = formList(values, 'parts');
  return page(
    a.title,
    html`<p>${a.intro}</p>
      <p>${linkButton('/status', a.viewPage, 'secondary')}</p>
      <section aria-labelledby="notices">
        <h2 id="notices">${a.list}</h2>
        <p role="status">${a.count(notices.length)}</p>
        ${table(t, {
          columns: a.columns,
          rows: notices,
          empty: a.none,
          cells: (notice: IncidentDoc) => [
            html`<span class="tag">${s.kinds[notice.kind]}</span>`,
            { content: html`<a href="${LIST}/${notice._id}">${notice.title}</a>`, rowHeader: true },
            html`<span class="tag">${s.incidentStates[notice.state]}</span>`,
            when(deps, t, notice.startsAt),
            notice.updates.at(-1)?.message ?? '',
          ],
        })}
      </section>
      <section class="card" aria-labelledby="new-notice">
        <h2 id="new-notice">${a.new}</h2>
        ${errorSummary(t, errors, OPEN_INPUTS)}
        <form method="post" action="${LIST}" novalidate>
          ${csrfField(req.csrf)}
          ${select({
            name: 'kind',
            label: a.kind,
            value: one('kind') || 'INCIDENT',
            options: INCIDENT_KINDS.map((kind) => ({ value: kind, label: s.kinds[kind] })),
            errors,
          })}
          ${field({ name: 'title', label: a.titleField, hint: a.titleHint, value: one('title'), required: true, maxlength: MAX_INCIDENT_TITLE, errors })}
          ${textArea({ name: 'message', label: a.message, hint: a.messageHint, value: one('message'), rows: 4, required: true, errors })}
          ${choices({
            name: 'parts',
            legend: a.parts,
            type: 'checkbox',
            options: STATUS_PARTS.map((part) => ({ value: part, label: s.parts[part].name })),
            checked: chosenParts,
            errors,
          })}
          ${select({ name: 'state', label: a.state, value: one('state'), options: [{ value: '', label: a.stateDefault }, ...stateOptions(req, null)], errors })}
          ${field({ name: 'startsAt', label: a.startsAt, hint: a.startsAtHint, type: 'datetime-local', value: one('startsAt'), errors })}
          ${field({ name: 'endsAt', label: a.endsAt, type: 'datetime-local', value: one('endsAt'), errors })}
          <div class="actions"><button type="submit" class="primary">${a.open}</button></div>
        </form>
      </section>`,
    status,
  );
}

/** POST /admin/status: posts a notice and goes to it. */
export const openNotice: Handler<AdminDeps> = async (req, deps) => {
  const a = req.t.admin.status;
  const form = openForm.parse(req.form);
  const values = { ...formValues(req), parts: form.parts };
  const kind = INCIDENT_KINDS.find((k) => k === form.kind);
  const startsAt = wallTime(form.startsAt, deps.config.schoolTimeZone);
  const endsAt = wallTime(form.endsAt, deps.config.schoolTimeZone);
  const errors: FieldError[] = [];
  if (!kind) errors.push({ field: 'kind', message: a.problems.STATE });
  if (startsAt === null) errors.push({ field: 'startsAt', message: a.badTime });
  if (endsAt === null) errors.push({ field: 'endsAt', message: a.badTime });
  if (!kind || startsAt === null || endsAt === null) return noticesPage(req, deps, values, errors, 422);
  try {
    const opened = await deps.status.incidents.open(
      { kind, title: form.title, message: form.message, parts: form.parts, state: form.state || undefined, startsAt, endsAt },
      actorOf(req),
    );
    deps.status.forget();
    req.ctx.state.log.info({ event: 'admin.status_notice_opened', incident: opened._id, kind }, 'status notice posted');
    return redirect(`${LIST}/${opened._id}`, { kind: 'ok', text: a.opened });
  } catch (err) {
    const problem = refusal(req, err);
    if (!problem) throw err;
    return noticesPage(req, deps, values, [problem], 422);
  }
};

/** GET /admin/status/:id: the notice, its updates, and the forms to post one or to close it. */
export const statusNotice: Handler<AdminDeps> = async (req, deps) =>
  noticePage(req, deps, await deps.status.incidents.get(req.param('id')), {}, []);

async function noticePage(
  req: PageRequest,
  deps: AdminDeps,
  notice: IncidentDoc,
  values: Readonly<Record<string, string>>,
  errors: readonly FieldError[],
  status = 200,
): Promise<Outcome> {
  const { t } = req;
  const a = t.admin.status;
  const s = t.status;
  const closed = isClosed(notice);
  const updates: Html = html`<ol class="updates" reversed>
    ${[...notice.updates].reverse().map(
      (update) =>
        html`<li>
          <p class="muted">
            ${when(deps, t, update.at)} · <strong>${s.incidentStates[update.state]}</strong> ·
            ${a.by(update.byKind === 'CLI' ? 'campus' : (update.byEmail ?? ''))}
          </p>
          <p class="message">${update.message}</p>
        </li>`,
    )}
  </ol>`;
  return page(
    a.detailTitle(notice.title),
    html`<p><a href="${LIST}">← ${a.back}</a></p>
      ${errorSummary(t, errors, ['state', 'message', 'closing'])}
      <section class="card" aria-labelledby="notice-facts">
        <h2 id="notice-facts">${notice.title}</h2>
        ${facts([
          [a.kind, s.kinds[notice.kind]],
          [a.state, html`<span class="tag">${s.incidentStates[notice.state]}</span>`],
          [a.factParts, notice.parts.map((part) => s.parts[part].name).join(', ') || '—'],
          [a.factStarts, when(deps, t, notice.startsAt)],
          ...(notice.endsAt ? [[a.factEnds, when(deps, t, notice.endsAt)] as const] : []),
        ])}
      </section>
      <section aria-labelledby="notice-updates">
        <h2 id="notice-updates">${s.updates}</h2>
        ${updates}
      </section>
      ${
        closed
          ? html`<p class="notice">${a.closed}</p>`
          : html`<section class="card" aria-labelledby="post-update">
                <h2 id="post-update">${a.postUpdate}</h2>
                <form method="post" action="${LIST}/${notice._id}" novalidate>
                  ${csrfField(req.csrf)}
                  ${select({ name: 'state', label: a.state, value: values['state'] || notice.state, options: stateOptions(req, notice.kind), errors })}
                  ${textArea({ name: 'message', label: a.message, hint: a.messageHint, value: values['message'] ?? '', rows: 4, required: true, errors })}
                  <div class="actions"><button type="submit" class="primary">${a.postUpdate}</button></div>
                </form>
              </section>
              ${actionCard({
                id: 'close-notice',
                title: a.resolve(notice.kind),
                hint: a.resolveHint,
                action: `${LIST}/${notice._id}/resolve`,
                csrf: req.csrf,
                kind: 'primary',
                fields: textArea({ name: 'closing', label: a.message, value: values['closing'] ?? '', rows: 3, required: true, errors }),
              })}`
      }`,
    status,
  );
}

/** POST /admin/status/:id: posts an update (in another open state if chosen). */
export const updateNotice: Handler<AdminDeps> = async (req, deps) => {
  const notice = await deps.status.incidents.get(req.param('id'));
  const form = updateForm.parse(req.form);
  try {
    await deps.status.incidents.update(notice._id, { message: form.message, state: form.state || undefined }, actorOf(req));
  } catch (err) {
    const problem = refusal(req, err);
    if (!problem) throw err;
    return noticePage(req, deps, notice, form, [problem], err instanceof IncidentClosedError ? 409 : 422);
  }
  deps.status.forget();
  req.ctx.state.log.info({ event: 'admin.status_notice_updated', incident: notice._id }, 'status notice updated');
  return redirect(`${LIST}/${notice._id}`, { kind: 'ok', text: req.t.admin.status.updated });
};

/** POST /admin/status/:id/resolve: closes it (resolved, or completed) with its last update. */
export const resolveNotice: Handler<AdminDeps> = async (req, deps) => {
  const notice = await deps.status.incidents.get(req.param('id'));
  const form = resolveForm.parse(req.form);
  try {
    await deps.status.incidents.resolve(notice._id, { message: form.closing }, actorOf(req));
  } catch (err) {
    const problem = refusal(req, err);
    if (!problem) throw err;
    return noticePage(req, deps, notice, form, [{ ...problem, field: 'closing' }], err instanceof IncidentClosedError ? 409 : 422);
  }
  deps.status.forget();
  req.ctx.state.log.info(
    { event: 'admin.status_notice_closed', incident: notice._id, state: finalState(notice.kind) },
    'status notice closed',
  );
  return redirect(`${LIST}/${notice._id}`, { kind: 'ok', text: req.t.admin.status.resolved });
};
