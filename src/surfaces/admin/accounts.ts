import { z } from 'zod';
import { ACCOUNT_ROLES, APPROVAL_STATES, type AccountRole } from '../../data/accounts.js';
import { AccountRuleError, type AccountSummary } from '../../oauth/accounts.js';
import { approvalMail } from '../../oauth/mail-texts.js';
import { anyOption, csrfField, field, listPage, select, table, when, withQuery } from '../web/components.js';
import { oneOf, text, ticked } from '../web/forms.js';
import { html } from '../web/html.js';
import { page, redirect, type Handler, type PageRequest } from '../web/routes.js';
import type { AdminDeps } from './deps.js';
import { backToList, queryInt } from './ui.js';

/** Accounts per page of the list. */
const PAGE_SIZE = 50;
const LIST = '/admin/accounts';

const roleForm = z.object({ role: oneOf(ACCOUNT_ROLES), back: text(), confirm: ticked() });

/** The roles an admin may give from the list: a ROOT any; an ADMIN only USER and TEACHER (issue 22). */
function givableRoles(req: PageRequest, current: AccountRole): readonly AccountRole[] {
  if (req.account?.role === 'ROOT') return ACCOUNT_ROLES;
  return ACCOUNT_ROLES.filter((r) => r === current || r === 'USER' || r === 'TEACHER');
}
const approvalForm = z.object({ decision: oneOf(['approve', 'reject'] as const), back: text() });

/** The admin console's accounts (ADMIN and ROOT): search, change a role, approve or reject a teacher's sign-up. */
export const accountList: Handler<AdminDeps> = async (req, deps) => {
  const { t } = req;
  const a = t.admin.accounts;
  const q = req.query('q');
  const approval = APPROVAL_STATES.find((s) => s === req.query('approval'));
  const pageNumber = queryInt(req, 'page', 0, 10_000) ?? 0;
  const [found, pending] = await Promise.all([
    deps.accounts.search({ text: q, ...(approval ? { approval } : {}), skip: pageNumber * PAGE_SIZE, limit: PAGE_SIZE }),
    deps.accounts.search({ approval: 'PENDING', skip: 0, limit: 1 }),
  ]);
  const here = withQuery(LIST, { q, approval, page: pageNumber || null });
  return page(
    a.title,
    listPage(t, {
      path: LIST,
      before: html`<p>${a.intro}</p>
        ${
          pending.total > 0
            ? html`<p class="flash ok" role="status">
                ${a.pending(pending.total)} <a href="${LIST}?approval=PENDING">${a.showPending}</a>
              </p>`
            : ''
        }`,
      filters: [
        field({ name: 'q', label: a.search, value: q, type: 'search' }),
        select({
          name: 'approval',
          label: a.approvalFilter,
          value: approval,
          options: anyOption(
            t,
            APPROVAL_STATES.map((s) => ({ value: s, label: a.approval[s] })),
          ),
        }),
      ],
      table: table(t, {
        columns: [a.id, a.email, a.role, a.teacher, a.student, a.created, a.actions],
        rows: found.accounts,
        rowClass: (account) => (account.approval === 'PENDING' ? 'pending' : ''),
        cells: (account) => [
          account.id,
          { content: account.email, rowHeader: true },
          t.roles[account.role],
          account.approval
            ? html`${account.name ?? ''} · ${account.department ?? ''}<br /><span class="tag">${a.approval[account.approval]}</span>`
            : '—',
          account.isStudent ? a.yes : a.no,
          when(deps, t, account.createdAt),
          actions(req, account, here),
        ],
      }),
      page: pageNumber,
      totalPages: Math.ceil(found.total / PAGE_SIZE),
      params: { q, approval },
    }),
  );
};

/** An account's actions in the list: its role, and a waiting teacher's approval (none on one's own row). */
function actions(req: PageRequest, account: AccountSummary, back: string) {
  const a = req.t.admin.accounts;
  if (account.id === req.account?.accountId) return '—';
  // An ADMIN's or ROOT's role is a ROOT's to change.
  if (req.account?.role !== 'ROOT' && (account.role === 'ADMIN' || account.role === 'ROOT')) return a.rootOnly;
  return html`<form method="post" action="${LIST}/${account.id}/role" class="inline">
      ${csrfField(req.csrf)}
      <input type="hidden" name="back" value="${back}" />
      <label class="visually-hidden" for="role-${account.id}">${a.roleLabel(account.email)}</label>
      <select id="role-${account.id}" name="role">
        ${givableRoles(req, account.role).map(
          (r) => html`<option value="${r}" ${account.role === r ? html`selected` : ''}>${req.t.roles[r]}</option>`,
        )}
      </select>
      ${
        req.account?.role === 'ROOT'
          ? html`<label class="check" for="confirm-${account.id}"
              ><input id="confirm-${account.id}" name="confirm" type="checkbox" value="yes" /> <span>${a.confirmAdmin}</span></label
            >`
          : ''
      }
      <button type="submit" class="secondary">${a.change}</button>
    </form>
    ${
      account.approval === 'PENDING'
        ? html`<form method="post" action="${LIST}/${account.id}/approval" class="inline">
            ${csrfField(req.csrf)}
            <input type="hidden" name="back" value="${back}" />
            <button type="submit" name="decision" value="approve" aria-label="${a.approveLabel(account.email)}">${a.approve}</button>
            <button type="submit" name="decision" value="reject" class="danger" aria-label="${a.rejectLabel(account.email)}">
              ${a.reject}
            </button>
          </form>`
        : ''
    }`;
}

export const changeRole: Handler<AdminDeps> = async (req, deps) => {
  const { t } = req;
  const a = t.admin.accounts;
  const form = roleForm.parse(req.form);
  const back = backToList(LIST, form.back);
  const actor = req.account;
  if (!actor || !form.role) return redirect(back, { kind: 'error', text: a.problems.unknown_account });
  try {
    const { before, after } = await deps.accounts.changeRole(actor, Number(req.param('id')), form.role, { confirmed: form.confirm });
    if (before.role === after.role) return redirect(back, { kind: 'ok', text: a.unchanged });
    // The change is in the access log (AccountService.changeRole); the log line is for operators.
    req.ctx.state.log.info(
      { event: 'admin.role_changed', actorId: actor.accountId, accountId: after.id, from: before.role, to: after.role },
      'account role changed',
    );
    return redirect(back, { kind: 'ok', text: a.changed(after.email, t.roles[after.role]) });
  } catch (err) {
    if (!(err instanceof AccountRuleError)) throw err;
    return redirect(back, { kind: 'error', text: a.problems[err.problem] });
  }
};

export const decideTeacher: Handler<AdminDeps> = async (req, deps) => {
  const a = req.t.admin.accounts;
  const form = approvalForm.parse(req.form);
  const back = backToList(LIST, form.back);
  const actor = req.account;
  if (!actor || !form.decision) return redirect(back, { kind: 'error', text: a.problems.unknown_account });
  const approve = form.decision === 'approve';
  try {
    const account = await deps.accounts.decideTeacher(actor, Number(req.param('id')), approve);
    req.ctx.state.log.info(
      { event: 'admin.teacher_decided', actorId: actor.accountId, accountId: account.id, decision: form.decision },
      'teacher sign-up decided',
    );
    // The decision stands whether or not the mail goes out.
    await deps.mailer.send(approvalMail(account.email, approve, `${deps.config.urls.auth}/console`)).catch((err: unknown) => {
      req.ctx.state.log.warn(
        { event: 'admin.approval_mail_failed', accountId: account.id, reason: err instanceof Error ? err.name : 'error' },
        'could not mail the decision',
      );
    });
    return redirect(back, { kind: 'ok', text: approve ? a.approved(account.email) : a.rejected(account.email) });
  } catch (err) {
    if (!(err instanceof AccountRuleError)) throw err;
    return redirect(back, { kind: 'error', text: a.problems[err.problem] });
  }
};
