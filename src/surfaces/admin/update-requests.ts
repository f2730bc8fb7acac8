import { z } from 'zod';
import { fieldLabel } from '../../data/school/labels.js';
import { STUDENT_SELF_FIELDS } from '../../data/school/student-fields.js';
import {
  MAX_REQUEST_MESSAGE,
  splitRefs,
  UpdateRequestError,
  type TargetSelection,
  type UpdateRequestSummary,
} from '../../data/school/update-requests.js';
import { NotFoundError } from '../../errors/index.js';
import {
  actionCard,
  choices,
  csrfField,
  errorSummary,
  facts,
  field,
  select,
  table,
  textArea,
  when,
  type FieldError,
} from '../web/components.js';
import { formList, formValue, list, text, type FormFields } from '../web/forms.js';
import { html } from '../web/html.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type { AdminDeps } from './deps.js';
import { formValues } from './ui.js';

const LIST = '/admin/students/requests';
const INPUTS = ['students', 'grade', 'classNum', 'q', 'fields', 'message'];

const requestForm = z.object({
  students: text({ max: 100000 }),
  grade: text(),
  classNum: text(),
  q: text({ max: 200 }),
  fields: list(),
  message: text({ max: 5000 }),
});

const actorOf = (req: PageRequest) => ({ kind: 'ACCOUNT' as const, id: req.account?.accountId ?? 0, email: req.account?.email ?? '' });

function fieldNames(req: PageRequest, fields: readonly string[]): string {
  return fields.map((f) => fieldLabel(f, req.lang)).join(', ');
}

/** GET /admin/students/requests: the requests with who answered, and the form of a new one. */
export const requestList: Handler<AdminDeps> = async (req, deps) => listPage(req, deps, formValues(req), []);

async function listPage(req: PageRequest, deps: AdminDeps, values: FormFields, errors: FieldError[], status = 200): Promise<Outcome> {
  const { t } = req;
  const r = t.admin.requests;
  const requests = await deps.updateRequests.list();
  const one = (name: string) => formValue(values, name);
  const chosen = formList(values, 'fields');
  const numbers = (n: number) => [
    { value: '', label: r.any },
    ...Array.from({ length: n }, (_, i) => ({ value: String(i + 1), label: String(i + 1) })),
  ];
  return page(
    r.title,
    html`<p><a href="/admin/students">← ${t.admin.students.title}</a></p>
      <p>${r.intro}</p>
      ${table(t, {
        columns: r.columns,
        rows: requests,
        empty: r.none,
        cells: (q: UpdateRequestSummary) => [
          { content: html`<a href="${LIST}/${q.id}">${when(deps, t, new Date(q.createdAt))}</a>`, rowHeader: true },
          fieldNames(req, q.fields),
          q.message ?? '—',
          r.answeredOf(q.answered, q.asked),
          html`<span class="tag" data-status="${q.status}">${r.status[q.status]}</span>`,
        ],
      })}
      <section class="card" aria-labelledby="new-request">
        <h2 id="new-request">${r.newTitle}</h2>
        ${errorSummary(t, errors, INPUTS)}
        <form method="post" action="${LIST}" novalidate>
          ${csrfField(req.csrf)}
          <fieldset>
            <legend>${r.who}</legend>
            <p class="hint">${r.whoHint}</p>
            ${textArea({ name: 'students', label: r.students, value: one('students'), rows: 3, errors })}
            <div class="filters">
              <div>${select({ name: 'grade', label: r.grade, value: one('grade'), options: numbers(3), errors })}</div>
              <div>${select({ name: 'classNum', label: r.classNum, value: one('classNum'), options: numbers(4), errors })}</div>
            </div>
            ${field({ name: 'q', label: r.search, value: one('q'), type: 'search', errors })}
          </fieldset>
          ${choices({
            name: 'fields',
            legend: r.fields,
            type: 'checkbox',
            options: STUDENT_SELF_FIELDS.map((f) => ({ value: f, label: fieldLabel(f, req.lang) })),
            checked: chosen,
            errors,
          })}
          ${textArea({ name: 'message', label: r.message, value: one('message'), rows: 3, hint: r.messageHint(MAX_REQUEST_MESSAGE), errors })}
          <div class="actions"><button type="submit" class="primary">${r.create}</button></div>
        </form>
      </section>`,
    status,
  );
}

/** POST /admin/students/requests: asks the chosen students. */
export const createRequest: Handler<AdminDeps> = async (req, deps) => {
  const r = req.t.admin.requests;
  const form = requestForm.parse(req.form);
  const values = { ...formValues(req), fields: form.fields };
  const selection: TargetSelection | undefined = form.students
    ? { kind: 'list', refs: splitRefs(form.students) }
    : /^[1-3]$/.test(form.grade)
      ? { kind: 'class', grade: Number(form.grade), classNum: /^[1-4]$/.test(form.classNum) ? Number(form.classNum) : null }
      : form.q
        ? { kind: 'search', query: form.q }
        : undefined;
  const errors: FieldError[] = [];
  if (!selection) errors.push({ field: 'students', message: r.chooseStudents });
  if (form.fields.length === 0) errors.push({ field: 'fields', message: r.chooseFields });
  if (!selection || errors.length > 0) return listPage(req, deps, values, errors, 422);
  try {
    const created = await deps.updateRequests.create({ selection, fields: form.fields, message: form.message, actor: actorOf(req) });
    req.ctx.state.log.info(
      { event: 'admin.update_requested', requestId: created.id, students: created.asked },
      'data update asked of students',
    );
    return redirect(`${LIST}/${created.id}`, { kind: 'ok', text: r.created(created.asked) });
  } catch (err) {
    if (!(err instanceof UpdateRequestError)) throw err;
    const at = selection.kind === 'list' ? 'students' : selection.kind === 'class' ? 'grade' : 'q';
    return listPage(req, deps, values, [{ field: /message/.test(err.message) ? 'message' : at, message: err.message }], 422);
  }
};

async function loadRequest(req: PageRequest, deps: AdminDeps): Promise<UpdateRequestSummary> {
  try {
    return await deps.updateRequests.get(req.param('id'));
  } catch (err) {
    if (err instanceof NotFoundError) throw new NotFoundError('No such request.');
    throw err;
  }
}

/** GET /admin/students/requests/:id: who has and has not answered; withdraw. */
export const requestDetail: Handler<AdminDeps> = async (req, deps) => {
  const { t } = req;
  const r = t.admin.requests;
  const q = await loadRequest(req, deps);
  return page(
    r.detailTitle,
    html`<p><a href="${LIST}">← ${r.back}</a></p>
      <div class="card">
        ${facts([
          [r.createdAt, when(deps, t, new Date(q.createdAt))],
          [r.createdBy, q.createdBy ?? r.operator],
          [r.fields, fieldNames(req, q.fields)],
          [r.message, q.message ?? '—'],
          [r.columns[4] ?? '', html`<span class="tag" data-status="${q.status}">${r.status[q.status]}</span>`],
          ...(q.withdrawnAt ? [[r.withdrawnAt, when(deps, t, new Date(q.withdrawnAt))] as const] : []),
          [r.columns[3] ?? '', r.answeredOf(q.answered, q.asked)],
        ])}
      </div>
      ${table(t, {
        columns: r.studentColumns,
        rows: q.students,
        cells: (s) => [
          s.studentNumber ?? '—',
          { content: html`<a href="/admin/students/${s.studentId}">${s.name}</a>`, rowHeader: true },
          { content: s.email, className: 'mono' },
          s.answeredAt
            ? html`<span data-answered="yes">${when(deps, t, new Date(s.answeredAt))}</span>`
            : html`<span class="muted" data-answered="no">${r.notYet}</span>`,
        ],
      })}
      ${
        q.status === 'OPEN'
          ? actionCard({
              id: 'withdraw',
              title: r.withdraw,
              hint: r.withdrawHint,
              action: `${LIST}/${q.id}/withdraw`,
              csrf: req.csrf,
              kind: 'danger',
            })
          : ''
      }`,
  );
};

/** POST /admin/students/requests/:id/withdraw */
export const withdrawRequest: Handler<AdminDeps> = async (req, deps) => {
  const q = await loadRequest(req, deps);
  await deps.updateRequests.withdraw(q.id, actorOf(req));
  req.ctx.state.log.info({ event: 'admin.update_request_withdrawn', requestId: q.id }, 'data update request withdrawn');
  return redirect(`${LIST}/${q.id}`, { kind: 'ok', text: req.t.admin.requests.withdrawn });
};
