import Router from '@koa/router';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { html } from '../../http/web/html.js';
import { SelfServiceError } from '../../oauth/self-service.js';
import { ACCOUNT_PATHS } from '../../oauth/constants.js';
import { fieldErrorOf, passwordHint } from '../accounts/messages.js';
import { WEB_CLIENT_ID, WEB_PATHS, type WebKit } from '../web/index.js';
import { clearSession } from '../web/session.js';
import { consoleShell, notFound, pageRenderer, redirectWithFlash } from './nav.js';
import type { ConsoleServices } from './services.js';
import { choices, csrfField, errorSummary, field, type FieldError } from './ui.js';

const TEXT = {
  ko: {
    title: '내 계정',
    email: '이메일',
    role: '역할',
    student: '학생 기록',
    linked: '연결됨 (같은 이메일의 학생)',
    notLinked: '없음',
    teacher: '교사 계정 신청',
    approval: { PENDING: '승인 대기 중', APPROVED: '승인됨', REJECTED: '승인되지 않음' },
    changePassword: '비밀번호 바꾸기',
    currentPassword: '현재 비밀번호',
    newPassword: '새 비밀번호',
    changeHint: '다른 기기와 다른 브라우저의 로그인은 끝나고, 이 화면의 로그인은 유지됩니다. 앱에 허용한 연결은 그대로입니다.',
    changed: '비밀번호를 바꿨습니다. 다른 곳의 로그인은 모두 끝났습니다.',
    signOutAll: '모든 곳에서 로그아웃',
    signOutAllHint:
      '이 브라우저를 포함해 모든 기기의 학교 계정 로그인과 콘솔 로그인을 끝냅니다. 앱에 허용한 연결은 "연결된 앱"에서 끊으세요.',
    deleteTitle: '계정 삭제',
    deleteHint:
      '계정과 함께 내 API 키, 내가 등록한 앱(그 앱에 허용된 모든 로그인 포함), 앱에 허용한 연결이 모두 삭제됩니다. 되돌릴 수 없습니다.',
    deletePassword: '비밀번호 확인',
    deleteConfirm: '계정과 그에 딸린 모든 것을 삭제하는 것을 이해했습니다',
    confirmNeeded: '삭제하려면 확인란을 선택하세요.',
    deleteButton: '계정 삭제',
  },
  en: {
    title: 'My account',
    email: 'Email',
    role: 'Role',
    student: 'Student record',
    linked: 'linked (the student with the same email)',
    notLinked: 'none',
    teacher: 'Teacher sign-up',
    approval: { PENDING: 'waiting for approval', APPROVED: 'approved', REJECTED: 'not approved' },
    changePassword: 'Change the password',
    currentPassword: 'Current password',
    newPassword: 'New password',
    changeHint: 'Sign-ins on other devices and browsers end; this one stays. Apps you allowed stay connected.',
    changed: 'Your password has been changed. Every other sign-in has ended.',
    signOutAll: 'Sign out everywhere',
    signOutAllHint:
      'Ends every sign-in to your school account and to the consoles, on every device, this browser included. Disconnect apps under "Connected apps".',
    deleteTitle: 'Delete the account',
    deleteHint:
      'Deletes the account with your API keys, the apps you registered (and every sign-in given to them) and the apps you allowed. This cannot be undone.',
    deletePassword: 'Confirm with your password',
    deleteConfirm: 'I understand that the account and everything that belongs to it will be deleted',
    confirmNeeded: 'Tick the box to delete the account.',
    deleteButton: 'Delete the account',
  },
} as const;

/** My account: the account's facts, change password, sign out everywhere, delete the account. */
export function accountPages(kit: WebKit, services: ConsoleServices): AppMiddleware {
  const router = new Router<RequestState>({ prefix: '/console/account' });
  const render = pageRenderer(kit, services, consoleShell);
  const signedIn = kit.requireAccount();
  const accountId = (ctx: AppContext) => ctx.state.account?.accountId ?? 0;
  const secure = services.config.urls.auth.startsWith('https://');
  const domain = services.config.schoolEmailDomain;

  const page = async (ctx: AppContext, status: number, errors: { password?: FieldError[]; delete?: FieldError[] } = {}) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const doc = await services.accounts.findById(accountId(ctx));
    if (!doc) return notFound(render, ctx, lang);
    const account = await services.accounts.summarize(doc);
    const passwordErrors = errors.password ?? [];
    const deleteErrors = errors.delete ?? [];
    render(
      ctx,
      status,
      t.title,
      html`<div class="card">
          <dl class="facts">
            <dt>${t.email}</dt>
            <dd>${account.email}</dd>
            <dt>${t.role}</dt>
            <dd>${account.role}</dd>
            <dt>${t.student}</dt>
            <dd>${account.isStudent ? t.linked : t.notLinked}</dd>
            ${
              account.approval
                ? html`<dt>${t.teacher}</dt>
                    <dd>${account.name ?? ''} · ${account.department ?? ''} · ${t.approval[account.approval]}</dd>`
                : ''
            }
          </dl>
        </div>
        <section class="card" aria-labelledby="password">
          <h2 id="password">${t.changePassword}</h2>
          <p class="hint">${t.changeHint}</p>
          ${errorSummary(lang, passwordErrors)}
          <form method="post" action="/console/account/password">
            ${csrfField(kit.csrf(ctx))}
            <input type="hidden" name="username" value="${account.email}" autocomplete="username" />
            ${field({ name: 'currentPassword', label: t.currentPassword, type: 'password', required: true, autocomplete: 'current-password', errors: passwordErrors })}
            ${field({ name: 'password', label: t.newPassword, type: 'password', required: true, autocomplete: 'new-password', maxlength: 100, hint: passwordHint(lang), errors: passwordErrors })}
            <div class="actions"><button type="submit">${t.changePassword}</button></div>
          </form>
        </section>
        <section class="card" aria-labelledby="everywhere">
          <h2 id="everywhere">${t.signOutAll}</h2>
          <p class="hint">${t.signOutAllHint}</p>
          <form method="post" action="/console/account/sign-out-everywhere">
            ${csrfField(kit.csrf(ctx))}
            <button type="submit" class="secondary">${t.signOutAll}</button>
          </form>
        </section>
        <section class="card" aria-labelledby="delete">
          <h2 id="delete">${t.deleteTitle}</h2>
          <p class="hint">${t.deleteHint}</p>
          ${errorSummary(lang, deleteErrors)}
          <form method="post" action="/console/account/delete">
            ${csrfField(kit.csrf(ctx))}
            ${field({ name: 'deletePassword', label: t.deletePassword, type: 'password', required: true, autocomplete: 'current-password', errors: deleteErrors })}
            ${choices({ name: 'confirm', legend: t.deleteTitle, type: 'checkbox', options: [{ value: 'yes', label: t.deleteConfirm }], checked: [], errors: deleteErrors })}
            <div class="actions"><button type="submit" class="danger">${t.deleteButton}</button></div>
          </form>
        </section>`,
    );
  };

  router.get('/', signedIn, async (ctx) => page(ctx, 200));

  router.post('/password', signedIn, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const fields = kit.fields(ctx);
    const session = services.session(ctx);
    try {
      await services.selfService.changePassword(
        accountId(ctx),
        { currentPassword: fields['currentPassword'] ?? '', newPassword: fields['password'] ?? '' },
        { clientId: WEB_CLIENT_ID, keepGrantId: session?.grantId ?? '' },
      );
    } catch (err) {
      if (!(err instanceof SelfServiceError)) throw err;
      if (err.status === 429) ctx.set('Retry-After', String(err.retryAfterSeconds ?? 60));
      return page(ctx, err.status === 429 ? 429 : 422, { password: [fieldErrorOf(lang, err, domain, 'currentPassword')] });
    }
    redirectWithFlash(ctx, services, '/console/account', { kind: 'ok', text: TEXT[lang].changed });
  });

  router.post('/sign-out-everywhere', signedIn, kit.form, async (ctx) => {
    await services.selfService.signOutEverywhere(accountId(ctx), WEB_CLIENT_ID);
    clearSession(ctx, secure);
    ctx.status = 303;
    ctx.redirect(WEB_PATHS.signedOut);
  });

  router.post('/delete', signedIn, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const fields = kit.fields(ctx);
    if (fields['confirm'] !== 'yes') return page(ctx, 422, { delete: [{ field: 'confirm', message: TEXT[lang].confirmNeeded }] });
    try {
      await services.selfService.deleteAccount(accountId(ctx), fields['deletePassword'] ?? '');
    } catch (err) {
      if (!(err instanceof SelfServiceError)) throw err;
      if (err.status === 429) ctx.set('Retry-After', String(err.retryAfterSeconds ?? 60));
      const error = fieldErrorOf(lang, err, domain, 'deletePassword');
      return page(ctx, err.status === 429 ? 429 : 422, { delete: [{ ...error, field: 'deletePassword' }] });
    }
    clearSession(ctx, secure);
    ctx.status = 303;
    ctx.redirect(ACCOUNT_PATHS.deletedPage);
  });

  const routes = router.routes();
  return (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next);
}
