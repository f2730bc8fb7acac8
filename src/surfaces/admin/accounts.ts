import Router from '@koa/router';
import { STAFF_ROLES } from '../../auth/principal.js';
import { ACCOUNT_ROLES, APPROVAL_STATES, type ApprovalState } from '../../data/accounts.js';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { html } from '../../http/web/html.js';
import type { Lang } from '../../http/web/lang.js';
import { AccountRuleError, type AccountRuleProblem, type AccountSummary } from '../../oauth/accounts.js';
import { approvalMail } from '../../oauth/mail-texts.js';
import { pageRenderer, redirectWithFlash, when } from '../console/nav.js';
import { consoleServices } from '../console/services.js';
import { csrfField } from '../console/ui.js';
import type { AppDeps } from '../types.js';
import type { WebKit } from '../web/index.js';
import { adminShell } from './nav.js';
import { anyOption, backToList, inputField, listPage, listTable, queryInt, queryText, selectField, withQuery } from './ui.js';

/** Accounts per page of the list. */
const PAGE_SIZE = 50;
const LIST = '/admin/accounts';

const TEXT = {
  ko: {
    title: '계정',
    intro:
      '역할을 바꾸고, 교사 가입 신청을 승인합니다. 승인하면 계정이 ADMIN이 되어 관리자 콘솔을 쓸 수 있습니다. ROOT 역할은 ROOT만 주거나 뺄 수 있습니다.',
    search: '이메일·이름·부서 찾기',
    approvalFilter: '교사 신청',
    pending: (n: number) => `승인을 기다리는 교사 신청이 ${n}건 있습니다.`,
    showPending: '대기 중만 보기',
    id: 'ID',
    email: '이메일',
    role: '역할',
    teacher: '교사 신청',
    student: '학생',
    created: '가입',
    actions: '관리',
    yes: '예',
    no: '아니요',
    approval: { PENDING: '승인 대기', APPROVED: '승인됨', REJECTED: '거절됨' } as Record<ApprovalState, string>,
    roleLabel: (email: string) => `${email}의 역할`,
    change: '역할 바꾸기',
    approve: '승인',
    reject: '거절',
    approveLabel: (email: string) => `${email} 승인`,
    rejectLabel: (email: string) => `${email} 거절`,
    changed: (email: string, role: string) => `${email}의 역할을 ${role}(으)로 바꿨습니다.`,
    approved: (email: string) => `${email}을(를) 승인했습니다 (ADMIN).`,
    rejected: (email: string) => `${email}의 신청을 거절했습니다.`,
    unchanged: '역할이 같아 바꾸지 않았습니다.',
    problems: {
      unknown_account: '그 계정이 없습니다.',
      own_role: '자신의 역할이나 신청은 바꿀 수 없습니다.',
      root_only: 'ROOT 역할은 ROOT 계정만 주거나 뺄 수 있습니다.',
      not_pending: '승인을 기다리는 신청이 아닙니다.',
    } as Record<AccountRuleProblem, string>,
  },
  en: {
    title: 'Accounts',
    intro:
      'Change roles and approve teachers’ sign-ups. Approval makes the account ADMIN, with the admin console. Only ROOT gives or takes the ROOT role.',
    search: 'Find by email, name or department',
    approvalFilter: 'Teacher sign-up',
    pending: (n: number) => `${n} teacher sign-up${n === 1 ? ' is' : 's are'} waiting for approval.`,
    showPending: 'Show only those',
    id: 'ID',
    email: 'Email',
    role: 'Role',
    teacher: 'Teacher sign-up',
    student: 'Student',
    created: 'Signed up',
    actions: 'Manage',
    yes: 'yes',
    no: 'no',
    approval: { PENDING: 'waiting', APPROVED: 'approved', REJECTED: 'rejected' } as Record<ApprovalState, string>,
    roleLabel: (email: string) => `Role of ${email}`,
    change: 'Change role',
    approve: 'Approve',
    reject: 'Reject',
    approveLabel: (email: string) => `Approve ${email}`,
    rejectLabel: (email: string) => `Reject ${email}`,
    changed: (email: string, role: string) => `The role of ${email} is now ${role}.`,
    approved: (email: string) => `${email} has been approved (ADMIN).`,
    rejected: (email: string) => `The sign-up of ${email} has been rejected.`,
    unchanged: 'The role is the same; nothing changed.',
    problems: {
      unknown_account: 'There is no such account.',
      own_role: 'You cannot change your own role or sign-up.',
      root_only: 'Only a ROOT account may give or take the ROOT role.',
      not_pending: 'That sign-up is not waiting for approval.',
    } as Record<AccountRuleProblem, string>,
  },
} as const;

/** The admin console's accounts (ADMIN and ROOT): search, change a role, approve or reject a teacher's sign-up. */
export function adminAccountPages(_deps: AppDeps, kit: WebKit): AppMiddleware {
  const services = consoleServices(kit);
  const render = pageRenderer(kit, services, adminShell);
  const staff = kit.requireAccount(STAFF_ROLES);
  const router = new Router<RequestState>({ prefix: '/admin/accounts' });

  router.get('/', staff, async (ctx) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const q = queryText(ctx, 'q');
    const approval = APPROVAL_STATES.find((s) => s === ctx.query['approval']);
    const page = queryInt(ctx, 'page', 0, 10_000) ?? 0;
    const [found, pending] = await Promise.all([
      services.accounts.search({ text: q, ...(approval ? { approval } : {}), skip: page * PAGE_SIZE, limit: PAGE_SIZE }),
      services.accounts.search({ approval: 'PENDING', skip: 0, limit: 1 }),
    ]);
    const here = withQuery(LIST, { q, approval, page: page || null });
    render(
      ctx,
      200,
      t.title,
      listPage(lang, {
        path: LIST,
        before: html`<p>${t.intro}</p>
          ${
            pending.total > 0
              ? html`<p class="flash ok" role="status">
                  ${t.pending(pending.total)} <a href="/admin/accounts?approval=PENDING">${t.showPending}</a>
                </p>`
              : ''
          }`,
        filters: [
          inputField({ name: 'q', label: t.search, value: q, errors: new Map(), type: 'search' }),
          selectField({
            name: 'approval',
            label: t.approvalFilter,
            value: approval,
            errors: new Map(),
            options: anyOption(
              lang,
              APPROVAL_STATES.map((s) => ({ value: s, label: t.approval[s] })),
            ),
          }),
        ],
        table: listTable(lang, null, [t.id, t.email, t.role, t.teacher, t.student, t.created, t.actions], found.accounts, (a) =>
          row(ctx, lang, a, here),
        ),
        page,
        totalPages: Math.ceil(found.total / PAGE_SIZE),
        params: { q, approval },
      }),
    );
  });

  const row = (ctx: AppContext, lang: Lang, a: AccountSummary, back: string) => {
    const t = TEXT[lang];
    const self = a.id === ctx.state.account?.accountId;
    return html`<tr class="${a.approval === 'PENDING' ? 'pending' : ''}">
      <td>${String(a.id)}</td>
      <td>${a.email}</td>
      <td>${a.role}</td>
      <td>${a.approval ? html`${a.name ?? ''} · ${a.department ?? ''}<br /><span class="tag">${t.approval[a.approval]}</span>` : '—'}</td>
      <td>${a.isStudent ? t.yes : t.no}</td>
      <td>${when(services, lang, a.createdAt)}</td>
      <td>
        ${
          self
            ? '—'
            : html`<form method="post" action="/admin/accounts/${String(a.id)}/role" class="inline">
                  ${csrfField(kit.csrf(ctx))}
                  <input type="hidden" name="back" value="${back}" />
                  <label class="visually-hidden" for="role-${String(a.id)}">${t.roleLabel(a.email)}</label>
                  <select id="role-${String(a.id)}" name="role">
                    ${ACCOUNT_ROLES.map((r) => html`<option value="${r}" ${a.role === r ? html`selected` : ''}>${r}</option>`)}
                  </select>
                  <button type="submit" class="secondary">${t.change}</button>
                </form>
                ${
                  a.approval === 'PENDING'
                    ? html`<form method="post" action="/admin/accounts/${String(a.id)}/approval" class="inline">
                        ${csrfField(kit.csrf(ctx))}
                        <input type="hidden" name="back" value="${back}" />
                        <button type="submit" name="decision" value="approve" aria-label="${t.approveLabel(a.email)}">${t.approve}</button>
                        <button type="submit" name="decision" value="reject" class="danger" aria-label="${t.rejectLabel(a.email)}">
                          ${t.reject}
                        </button>
                      </form>`
                    : ''
                }`
        }
      </td>
    </tr>`;
  };

  router.post('/:id/role', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const fields = kit.fields(ctx);
    const back = backToList(LIST, fields['back']);
    const actor = ctx.state.account;
    const role = ACCOUNT_ROLES.find((r) => r === fields['role']);
    if (!actor || !role) return redirectWithFlash(ctx, services, back, { kind: 'error', text: t.problems.unknown_account });
    try {
      const { before, after } = await services.accounts.changeRole(actor, Number(ctx.params['id']), role);
      if (before.role === after.role) return redirectWithFlash(ctx, services, back, { kind: 'ok', text: t.unchanged });
      // No audit log of account changes exists yet (src/data/audit.ts): the change is logged.
      ctx.state.log.info(
        { event: 'admin.role_changed', actorId: actor.accountId, accountId: after.id, from: before.role, to: after.role },
        'account role changed',
      );
      redirectWithFlash(ctx, services, back, { kind: 'ok', text: t.changed(after.email, after.role) });
    } catch (err) {
      if (!(err instanceof AccountRuleError)) throw err;
      redirectWithFlash(ctx, services, back, { kind: 'error', text: t.problems[err.problem] });
    }
  });

  router.post('/:id/approval', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const fields = kit.fields(ctx);
    const back = backToList(LIST, fields['back']);
    const actor = ctx.state.account;
    const decision = fields['decision'];
    if (!actor || (decision !== 'approve' && decision !== 'reject'))
      return redirectWithFlash(ctx, services, back, { kind: 'error', text: t.problems.unknown_account });
    try {
      const account = await services.accounts.decideTeacher(actor, Number(ctx.params['id']), decision === 'approve');
      ctx.state.log.info(
        { event: 'admin.teacher_decided', actorId: actor.accountId, accountId: account.id, decision },
        'teacher sign-up decided',
      );
      // The decision stands whether or not the mail goes out.
      await services.mailer
        .send(approvalMail(account.email, decision === 'approve', `${services.config.urls.auth}/admin`))
        .catch((err: unknown) => {
          ctx.state.log.warn(
            { event: 'admin.approval_mail_failed', accountId: account.id, reason: err instanceof Error ? err.name : 'error' },
            'could not mail the decision',
          );
        });
      redirectWithFlash(ctx, services, back, {
        kind: 'ok',
        text: decision === 'approve' ? t.approved(account.email) : t.rejected(account.email),
      });
    } catch (err) {
      if (!(err instanceof AccountRuleError)) throw err;
      redirectWithFlash(ctx, services, back, { kind: 'error', text: t.problems[err.problem] });
    }
  });

  const routes = router.routes();
  return (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next);
}
