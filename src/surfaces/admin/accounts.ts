import { passkeyCells } from '../console/passkeys.js';
import { z } from 'zod';
import { NotFoundError } from '../../errors/index.js';
import { ACCOUNT_ROLES, APPROVAL_STATES, type AccountRole } from '../../data/accounts/store.js';
import { accountChangeRefusal, type AccountRefusal } from '../../auth/policy.js';
import type { AccountPrincipal } from '../../auth/principal.js';
import { AccountRuleError, actorStanding, type AccountSummary } from '../../oauth/accounts.js';
import { SelfServiceError } from '../../oauth/self-service.js';
import type { PasskeySummary } from '../../oauth/passkeys.js';
import { approvalMail } from '../../oauth/mail-texts.js';
import {
  anyOption,
  csrfField,
  errorSummary,
  facts,
  field,
  listPage,
  select,
  table,
  when,
  withQuery,
  type FieldError,
} from '../web/components.js';
import { oneOf, text, ticked } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type { AdminDeps } from './deps.js';
import { backToList, idParam, queryInt, unconfirmed } from './ui.js';

/** Accounts per page of the list. */
const PAGE_SIZE = 50;
const LIST = '/admin/accounts';

const roleForm = z.object({ role: oneOf(ACCOUNT_ROLES), back: text(), confirm: ticked() });

/**
 * What the rule of account changes (src/auth/policy.ts) says of the signed-in admin acting on
 * `account` (`giving`: the role the change gives). The pages offer only what it allows; the
 * service checks it again against the account as it is when it writes.
 */
function refusalFor(actor: AccountPrincipal, account: AccountSummary, giving?: AccountRole): AccountRefusal | null {
  return accountChangeRefusal(actorStanding(actor), account, giving);
}

/**
 * The roles an admin may give from the list: a ROOT any; an ADMIN only USER and TEACHER
 * (docs/decisions.md, "A teacher is not an administrator").
 */
function givableRoles(actor: AccountPrincipal, account: AccountSummary): readonly AccountRole[] {
  return ACCOUNT_ROLES.filter((r) => r === account.role || refusalFor(actor, account, r) === null);
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
          {
            content: html`<a href="${LIST}/${account.id}">${account.email}</a>${
                account.disabledAt ? html` <span class="tag">${a.disabledTag}</span>` : ''
              }`,
            rowHeader: true,
          },
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
  const actor = req.account;
  if (!actor) return '—';
  const refusal = refusalFor(actor, account);
  if (refusal === 'own_account') return '—';
  // An ADMIN's or ROOT's role (and sign-up) is a ROOT's to change.
  if (refusal === 'root_only') return a.rootOnly;
  return html`<form method="post" action="${LIST}/${account.id}/role" class="inline">
      ${csrfField(req.csrf)}
      <input type="hidden" name="back" value="${back}" />
      <label class="visually-hidden" for="role-${account.id}">${a.roleLabel(account.email)}</label>
      <select id="role-${account.id}" name="role">
        ${givableRoles(actor, account).map(
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

/**
 * GET /admin/accounts/:id: one account, and what staff do for it: disable or enable it, send it a
 * password-reset code, delete it (confirmed). The rule (not one's own; an ADMIN's or ROOT's only by
 * a ROOT) is src/auth/policy.ts's: the page offers what it allows, and AccountService checks it
 * again when it writes.
 */
export const accountDetail: Handler<AdminDeps> = async (req, deps) => accountPage(req, deps, await findAccount(req, deps), []);

async function findAccount(req: PageRequest, deps: AdminDeps): Promise<AccountSummary> {
  const doc = await deps.accounts.findById(idParam(req));
  if (!doc) throw new NotFoundError('No such account.');
  return deps.accounts.summarize(doc);
}

async function accountPage(
  req: PageRequest,
  deps: AdminDeps,
  account: AccountSummary,
  errors: readonly FieldError[],
  status = 200,
): Promise<Outcome> {
  const { t } = req;
  const a = t.admin.accounts;
  const d = a.detail;
  const path = `${LIST}/${account.id}`;
  const refusal = req.account ? refusalFor(req.account, account) : 'own_account';
  const passkeys = await deps.passkeys.list(account.id);
  const state = account.disabledAt ? html`<span class="tag">${a.disabledTag}</span> ${when(deps, t, account.disabledAt)}` : d.active;
  return page(
    d.title(account.email),
    html`<p><a href="${LIST}">← ${d.back}</a></p>
      ${errorSummary(t, errors, ['confirm'])}
      <section class="card" aria-labelledby="account-facts">
        <h2 id="account-facts">${d.facts}</h2>
        ${facts([
          [a.id, account.id],
          [a.email, account.email],
          [a.role, t.roles[account.role]],
          [a.teacher, account.approval ? `${account.name ?? ''} · ${account.department ?? ''} (${a.approval[account.approval]})` : '—'],
          [a.student, account.isStudent ? a.yes : a.no],
          [a.created, when(deps, t, account.createdAt)],
          [d.state, state],
        ])}
      </section>
      ${passkeySection(req, deps, path, passkeys, refusal === null)}
      ${
        refusal === 'own_account'
          ? html`<p class="hint">${d.own}</p>`
          : refusal === 'root_only'
            ? html`<p class="hint">${d.rootOnly}</p>`
            : html`<section class="card" aria-labelledby="account-actions">
                <h2 id="account-actions">${d.actions}</h2>
                <form method="post" action="${path}/${account.disabledAt ? 'enable' : 'disable'}">
                  ${csrfField(req.csrf)}
                  <p class="hint">${account.disabledAt ? d.enableHint : d.disableHint}</p>
                  <div class="actions">
                    <button type="submit" class="${account.disabledAt ? '' : 'secondary'}">
                      ${account.disabledAt ? d.enable : d.disable}
                    </button>
                  </div>
                </form>
                <form method="post" action="${path}/reset">
                  ${csrfField(req.csrf)}
                  <p class="hint">${d.resetHint}</p>
                  <div class="actions"><button type="submit" class="secondary">${d.reset}</button></div>
                </form>
                <form method="post" action="${path}/delete">
                  ${csrfField(req.csrf)}
                  <fieldset>
                    <legend>${d.delete}</legend>
                    <p class="hint" id="delete-hint">${d.deleteHint}</p>
                    <label class="check" for="confirm"
                      ><input id="confirm" type="checkbox" name="confirm" value="yes" required aria-describedby="delete-hint" />
                      ${t.kit.confirm}</label
                    >
                    <div class="actions"><button type="submit" class="danger">${d.delete}</button></div>
                  </fieldset>
                </form>
                <p><a href="${withQuery('/admin/audit', { log: 'access', target: account.email })}">${d.history}</a></p>
              </section>`
      }`,
    status,
  );
}

/**
 * An account's passkeys on its page: when each was added and last used, and whether one was
 * flagged; staff the rule lets act on the account remove them all (a lost or stolen device).
 */
function passkeySection(req: PageRequest, deps: AdminDeps, path: string, passkeys: readonly PasskeySummary[], mayRemove: boolean): Html {
  const { t } = req;
  const p = t.passkeys;
  return html`<section class="card" aria-labelledby="account-passkeys">
    <h2 id="account-passkeys">${p.adminSection}</h2>
    ${table(t, {
      columns: p.columns.slice(0, 4),
      caption: p.adminSection,
      empty: p.adminNone,
      rows: passkeys,
      cells: (key) => passkeyCells(deps, t, key),
    })}
    ${
      mayRemove && passkeys.length > 0
        ? html`<form method="post" action="${path}/passkeys/remove">
            ${csrfField(req.csrf)}
            <p class="hint">${p.adminRemoveAllHint}</p>
            <div class="actions"><button type="submit" class="danger">${p.adminRemoveAll}</button></div>
          </form>`
        : ''
    }
  </section>`;
}

/**
 * POST /admin/accounts/:id/passkeys/remove: every passkey of the account goes (the rule of account
 * changes decides who may; in the access log, as a password reset sent).
 */
export const removePasskeys: Handler<AdminDeps> = async (req, deps) => {
  const a = req.t.admin.accounts;
  const account = await findAccount(req, deps);
  const actor = req.account;
  if (!actor) return redirect(LIST, { kind: 'error', text: a.problems.unknown_account });
  try {
    const done = await deps.passkeys.removeAs(actor, account.id);
    req.ctx.state.log.info(
      { event: 'admin.passkeys_removed', actorId: actor.accountId, accountId: account.id, removed: done.removed.length },
      'passkeys removed by staff',
    );
    const text =
      done.removed.length > 0 ? req.t.passkeys.adminRemoved(done.email, done.removed.length) : req.t.passkeys.adminNothingRemoved;
    return redirect(`${LIST}/${account.id}`, { kind: 'ok', text });
  } catch (err) {
    if (!(err instanceof AccountRuleError)) throw err;
    return redirect(`${LIST}/${account.id}`, { kind: 'error', text: a.problems[err.problem] });
  }
};

/** POST /admin/accounts/:id/disable and /enable. */
export function setDisabled(disabled: boolean): Handler<AdminDeps> {
  return async (req, deps) => {
    const a = req.t.admin.accounts;
    const account = await findAccount(req, deps);
    const actor = req.account;
    if (!actor) return redirect(LIST, { kind: 'error', text: a.problems.unknown_account });
    try {
      const done = await deps.accounts.setDisabled(actor, account.id, disabled);
      req.ctx.state.log.info(
        { event: disabled ? 'admin.account_disabled' : 'admin.account_enabled', actorId: actor.accountId, accountId: account.id },
        disabled ? 'account disabled' : 'account enabled',
      );
      return redirect(`${LIST}/${account.id}`, {
        kind: 'ok',
        text: disabled ? a.detail.disabled(done.account.email) : a.detail.enabled(done.account.email),
      });
    } catch (err) {
      if (!(err instanceof AccountRuleError)) throw err;
      return redirect(`${LIST}/${account.id}`, { kind: 'error', text: a.problems[err.problem] });
    }
  };
}

/** POST /admin/accounts/:id/reset: mails the account a password-reset code (the self-service reset's). */
export const sendReset: Handler<AdminDeps> = async (req, deps) => {
  const a = req.t.admin.accounts;
  const account = await findAccount(req, deps);
  const actor = req.account;
  if (!actor) return redirect(LIST, { kind: 'error', text: a.problems.unknown_account });
  try {
    await deps.selfService.sendPasswordReset(actor, account.id);
    return redirect(`${LIST}/${account.id}`, { kind: 'ok', text: a.detail.resetSent(account.email) });
  } catch (err) {
    // The rule of account changes refuses it (one's own; an ADMIN's or ROOT's by an ADMIN).
    if (err instanceof AccountRuleError) return redirect(`${LIST}/${account.id}`, { kind: 'error', text: a.problems[err.problem] });
    // The email's code budget is spent (a code was sent moments ago): said, and nothing sent.
    if (!(err instanceof SelfServiceError)) throw err;
    return redirect(`${LIST}/${account.id}`, { kind: 'error', text: a.detail.resetRefused });
  }
};

/** POST /admin/accounts/:id/delete: deletes the account (confirmed) with everything that is its own. */
export const deleteAccount: Handler<AdminDeps> = async (req, deps) => {
  const a = req.t.admin.accounts;
  const account = await findAccount(req, deps);
  const actor = req.account;
  const errors = unconfirmed(req.t, req);
  if (!actor || errors.length > 0) return accountPage(req, deps, account, errors, 422);
  try {
    await deps.accounts.deleteAs(actor, account.id);
    req.ctx.state.log.info({ event: 'admin.account_deleted', actorId: actor.accountId, accountId: account.id }, 'account deleted');
    return redirect(LIST, { kind: 'ok', text: a.detail.deleted(account.email) });
  } catch (err) {
    if (!(err instanceof AccountRuleError)) throw err;
    return redirect(`${LIST}/${account.id}`, { kind: 'error', text: a.problems[err.problem] });
  }
};
