import Router from '@koa/router';
import type { Config } from '../../config/index.js';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { html, type Html } from '../../http/web/html.js';
import { ACCOUNT_PATHS } from '../../oauth/constants.js';
import { CODE_DIGITS, CODE_LIFETIME_SECONDS } from '../../oauth/email-codes.js';
import { SelfServiceError, MAX_TEACHER_FIELD, type SelfService } from '../../oauth/self-service.js';
import { csrfField, errorSummary, field, type FieldError } from '../console/ui.js';
import { WEB_PATHS, type WebKit } from '../web/index.js';
import type { AnonymousForms } from './csrf.js';
import { fieldErrorOf, passwordHint } from './messages.js';

/** A login page of ours that the sign-up and reset pages may send the person back to. */
const RETURN_PATH = /^\/v1\/oauth\/interaction\/[A-Za-z0-9_-]{1,64}$/;

const TEXT = {
  ko: {
    product: '캠퍼스 데이터 서비스',
    signUpTitle: '가입하기',
    signUpIntro: (domain: string) => `학교 이메일(@${domain})로 가입합니다. 이메일로 받은 ${CODE_DIGITS}자리 코드로 주소를 확인합니다.`,
    email: '학교 이메일',
    sendCode: '인증 코드 받기',
    haveCode: '이미 코드를 받았나요?',
    enterCode: '코드 입력하기',
    verifyTitle: '코드 확인과 비밀번호 설정',
    sent: (email: string) =>
      `${email}(으)로 코드를 보냈습니다. ${CODE_LIFETIME_SECONDS / 60}분 안에 입력하세요. 메일이 안 보이면 스팸함을 확인하세요.`,
    code: `인증 코드 (${CODE_DIGITS}자리 숫자)`,
    codeHint: '새 코드를 요청하면 이전 코드는 쓸 수 없습니다.',
    password: '비밀번호',
    teacherLegend: '교사 계정',
    teacher: '교사입니다 (관리자의 승인 후 관리자 콘솔을 쓸 수 있습니다)',
    name: '이름',
    department: '학과 또는 부서',
    teacherHint: '교사로 가입할 때만 입력하세요.',
    create: '계정 만들기',
    resend: '코드 다시 받기',
    doneTitle: '가입을 마쳤습니다',
    done: '계정이 만들어졌습니다. 이제 로그인할 수 있습니다.',
    donePending:
      '교사 계정 신청은 관리자가 승인하면 관리자 콘솔을 쓸 수 있습니다. 승인 결과는 이메일로 알려 드립니다. 그동안에도 개발자 콘솔은 쓸 수 있습니다.',
    continueSignIn: '로그인하러 가기',
    backToSignIn: '로그인 화면으로 돌아가기',
    resetTitle: '비밀번호 재설정',
    resetIntro: `계정의 이메일을 입력하면 ${CODE_DIGITS}자리 재설정 코드를 보내 드립니다.`,
    accountEmail: '이메일',
    resetSent: (email: string) => `${email}에 계정이 있다면 재설정 코드를 보냈습니다. ${CODE_LIFETIME_SECONDS / 60}분 안에 입력하세요.`,
    newPassword: '새 비밀번호',
    setPassword: '비밀번호 바꾸기',
    resetWarning: '비밀번호를 바꾸면 모든 기기에서 로그아웃되고, 앱에 허용한 로그인도 모두 끝납니다.',
    resetDoneTitle: '비밀번호를 바꿨습니다',
    resetDone: '새 비밀번호로 로그인하세요. 다른 기기와 앱의 로그인은 모두 끝났습니다.',
    deletedTitle: '계정을 삭제했습니다',
    deleted: '계정과 API 키, 등록한 앱, 앱에 허용한 연결을 모두 삭제했습니다. 이용해 주셔서 감사합니다.',
    forgedTitle: '요청을 확인할 수 없습니다',
    forged: '페이지를 새로 고친 뒤 다시 시도하세요.',
    unavailableTitle: '메일을 보낼 수 없습니다',
    unavailable: '메일 서버에 연결하지 못했습니다. 몇 분 후에 다시 시도하세요.',
  },
  en: {
    product: 'Campus Data Service',
    signUpTitle: 'Sign up',
    signUpIntro: (domain: string) =>
      `Sign up with your school email (@${domain}). A ${CODE_DIGITS}-digit code sent to it confirms the address.`,
    email: 'School email',
    sendCode: 'Send me a code',
    haveCode: 'Already have a code?',
    enterCode: 'Enter the code',
    verifyTitle: 'Enter the code and choose a password',
    sent: (email: string) =>
      `We sent a code to ${email}. Enter it within ${CODE_LIFETIME_SECONDS / 60} minutes. If you cannot find the mail, look in the spam folder.`,
    code: `Code (${CODE_DIGITS} digits)`,
    codeHint: 'Asking for a new code makes the earlier one stop working.',
    password: 'Password',
    teacherLegend: 'Teacher account',
    teacher: 'I am a teacher (after an admin approves, I can use the admin console)',
    name: 'Name',
    department: 'Department',
    teacherHint: 'Only when signing up as a teacher.',
    create: 'Create the account',
    resend: 'Send a new code',
    doneTitle: 'You have signed up',
    done: 'Your account has been created. You can sign in now.',
    donePending:
      'As a teacher you can use the admin console once an admin approves your account; we will tell you by email. Meanwhile the developer console is yours to use.',
    continueSignIn: 'Sign in',
    backToSignIn: 'Back to the sign-in page',
    resetTitle: 'Reset your password',
    resetIntro: `Enter your account's email and we will send you a ${CODE_DIGITS}-digit reset code.`,
    accountEmail: 'Email',
    resetSent: (email: string) =>
      `If ${email} has an account, we sent it a reset code. Enter it within ${CODE_LIFETIME_SECONDS / 60} minutes.`,
    newPassword: 'New password',
    setPassword: 'Change the password',
    resetWarning: 'Changing the password signs you out everywhere and ends the sign-in of every app you allowed.',
    resetDoneTitle: 'Your password has been changed',
    resetDone: 'Sign in with the new password. Every other sign-in, on other devices and in apps, has ended.',
    deletedTitle: 'Your account has been deleted',
    deleted:
      'The account, its API keys, the apps it registered and the apps it allowed have all been deleted. Thank you for using the service.',
    forgedTitle: 'The request could not be verified',
    forged: 'Reload the page and try again.',
    unavailableTitle: 'The mail could not be sent',
    unavailable: 'The mail server could not be reached. Try again in a few minutes.',
  },
} as const;

/**
 * The sign-up and password-reset pages (Korean first, English with ?lang=en), linked from the
 * login page. Each step is a form posting to itself; a refusal re-renders it with the error at
 * its field, a success redirects (303) to the next step.
 */
export function accountPages(deps: { config: Config; kit: WebKit; service: SelfService; forms: AnonymousForms }): AppMiddleware {
  const { config, kit, service, forms } = deps;
  const domain = config.schoolEmailDomain;
  const router = new Router<RequestState>();
  const refuseForged = (ctx: AppContext) => {
    const t = TEXT[kit.lang(ctx)];
    show(ctx, 403, t.forgedTitle, html`<p role="alert">${t.forged}</p>`);
  };
  const checked = forms.check(refuseForged);
  const show = (ctx: AppContext, status: number, title: string, content: Html) =>
    kit.page(ctx, status, { product: { href: '/console', label: TEXT[kit.lang(ctx)].product }, nav: [], title, content });

  /** Re-renders a form with the refusal at its field, or answers a mail failure with its own page. */
  const refused = (ctx: AppContext, err: unknown, fallbackField: string, render: (errors: FieldError[]) => Html, title: string) => {
    const lang = kit.lang(ctx);
    if (err instanceof SelfServiceError) {
      if (err.status === 429) ctx.set('Retry-After', String(err.retryAfterSeconds ?? 60));
      return show(ctx, err.status === 429 ? 429 : 422, title, render([fieldErrorOf(lang, err, domain, fallbackField)]));
    }
    if (err instanceof Error && 'status' in err && err.status === 503) {
      const t = TEXT[lang];
      ctx.set('Retry-After', '60');
      return show(ctx, 503, t.unavailableTitle, html`<p role="alert">${t.unavailable}</p>`);
    }
    throw err;
  };

  // Sign-up, step 1: the email.
  const signUpForm = (ctx: AppContext, values: { email: string }, errors: FieldError[] = []) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const back = returnOf(ctx);
    return html`${errorSummary(lang, errors)}
      <p>${t.signUpIntro(domain)}</p>
      <form method="post" action="${ACCOUNT_PATHS.signUpPage}" class="card narrow">
        ${csrfField(forms.token(ctx))} ${hiddenReturn(back)}
        ${field({ name: 'email', label: t.email, type: 'email', value: values.email, errors, required: true, autocomplete: 'email', maxlength: 254, autofocus: true, hint: `…@${domain}` })}
        <div class="actions"><button type="submit">${t.sendCode}</button></div>
      </form>
      <p>${t.haveCode} <a href="${withQuery(`${ACCOUNT_PATHS.signUpPage}/verify`, { return: back })}">${t.enterCode}</a></p>
      ${back ? html`<p><a href="${back}">${t.backToSignIn}</a></p>` : ''}`;
  };
  router.get(ACCOUNT_PATHS.signUpPage, async (ctx) => {
    show(ctx, 200, TEXT[kit.lang(ctx)].signUpTitle, signUpForm(ctx, { email: queryText(ctx, 'email') }));
  });
  router.post(ACCOUNT_PATHS.signUpPage, checked, async (ctx) => {
    const fields = kit.fields(ctx);
    const email = (fields['email'] ?? '').trim();
    try {
      const sent = await service.requestSignupCode(email);
      redirect(
        ctx,
        withQuery(`${ACCOUNT_PATHS.signUpPage}/verify`, { email: sent.email, sent: '1', return: returnOf(ctx, fields['return']) }),
      );
    } catch (err) {
      refused(ctx, err, 'email', (errors) => signUpForm(ctx, { email }, errors), TEXT[kit.lang(ctx)].signUpTitle);
    }
  });

  // Sign-up, step 2: the code, the password, and a teacher's name and department.
  const verifyForm = (ctx: AppContext, values: Record<string, string>, errors: FieldError[] = []) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const back = returnOf(ctx, values['return']);
    return html`${errorSummary(lang, errors)}
      ${values['sent'] ? html`<p class="flash ok" role="status">${t.sent(values['email'] ?? '')}</p>` : ''}
      <form method="post" action="${ACCOUNT_PATHS.signUpPage}/verify" class="card narrow">
        ${csrfField(forms.token(ctx))} ${hiddenReturn(back)}
        ${field({ name: 'email', label: t.email, type: 'email', value: values['email'], errors, required: true, autocomplete: 'email', maxlength: 254 })}
        ${field({ name: 'code', label: t.code, value: values['code'], errors, required: true, autocomplete: 'one-time-code', inputmode: 'numeric', maxlength: CODE_DIGITS, pattern: `[0-9]{${CODE_DIGITS}}`, hint: t.codeHint, autofocus: Boolean(values['email']) })}
        ${field({ name: 'password', label: t.password, type: 'password', errors, required: true, autocomplete: 'new-password', maxlength: 100, hint: passwordHint(lang) })}
        <fieldset>
          <legend>${t.teacherLegend}</legend>
          <label class="check" for="f-teacher"
            ><input id="f-teacher" type="checkbox" name="teacher" value="yes" ${values['teacher'] === 'yes' ? html`checked` : ''} />
            <span>${t.teacher}</span></label
          >
          ${field({ name: 'name', label: t.name, value: values['name'], errors, autocomplete: 'name', maxlength: MAX_TEACHER_FIELD, hint: t.teacherHint })}
          ${field({ name: 'department', label: t.department, value: values['department'], errors, autocomplete: 'organization-title', maxlength: MAX_TEACHER_FIELD })}
        </fieldset>
        <div class="actions"><button type="submit">${t.create}</button></div>
      </form>
      <form method="post" action="${ACCOUNT_PATHS.signUpPage}">
        ${csrfField(forms.token(ctx))} ${hiddenReturn(back)}
        <input type="hidden" name="email" value="${values['email'] ?? ''}" />
        <button type="submit" class="secondary">${t.resend}</button>
      </form>`;
  };
  router.get(`${ACCOUNT_PATHS.signUpPage}/verify`, async (ctx) => {
    show(ctx, 200, TEXT[kit.lang(ctx)].verifyTitle, verifyForm(ctx, { email: queryText(ctx, 'email'), sent: queryText(ctx, 'sent') }));
  });
  router.post(`${ACCOUNT_PATHS.signUpPage}/verify`, checked, async (ctx) => {
    const fields = kit.fields(ctx);
    const teacher = fields['teacher'] === 'yes';
    try {
      const account = await service.signUp({
        email: (fields['email'] ?? '').trim(),
        password: fields['password'] ?? '',
        code: (fields['code'] ?? '').trim(),
        ...(teacher ? { teacher: { name: fields['name'] ?? '', department: fields['department'] ?? '' } } : {}),
      });
      redirect(
        ctx,
        withQuery(`${ACCOUNT_PATHS.signUpPage}/done`, {
          pending: account.approval === 'PENDING' ? '1' : '',
          return: returnOf(ctx, fields['return']),
        }),
      );
    } catch (err) {
      const values = {
        email: fields['email'] ?? '',
        code: fields['code'] ?? '',
        name: fields['name'] ?? '',
        department: fields['department'] ?? '',
        teacher: teacher ? 'yes' : '',
        return: fields['return'] ?? '',
      };
      refused(ctx, err, 'code', (errors) => verifyForm(ctx, values, errors), TEXT[kit.lang(ctx)].verifyTitle);
    }
  });
  router.get(`${ACCOUNT_PATHS.signUpPage}/done`, async (ctx) => {
    const t = TEXT[kit.lang(ctx)];
    const back = returnOf(ctx);
    show(
      ctx,
      200,
      t.doneTitle,
      html`<p role="status">${t.done}</p>
        ${queryText(ctx, 'pending') ? html`<p>${t.donePending}</p>` : ''}
        <p><a class="button" href="${back ?? `${WEB_PATHS.signIn}?next=/console`}">${t.continueSignIn}</a></p>`,
    );
  });

  // Password reset, step 1: the email.
  const resetForm = (ctx: AppContext, values: { email: string }, errors: FieldError[] = []) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const back = returnOf(ctx);
    return html`${errorSummary(lang, errors)}
      <p>${t.resetIntro}</p>
      <form method="post" action="${ACCOUNT_PATHS.resetPage}" class="card narrow">
        ${csrfField(forms.token(ctx))} ${hiddenReturn(back)}
        ${field({ name: 'email', label: t.accountEmail, type: 'email', value: values.email, errors, required: true, autocomplete: 'email', maxlength: 254, autofocus: true })}
        <div class="actions"><button type="submit">${t.sendCode}</button></div>
      </form>
      <p>${t.haveCode} <a href="${withQuery(`${ACCOUNT_PATHS.resetPage}/verify`, { return: back })}">${t.enterCode}</a></p>
      ${back ? html`<p><a href="${back}">${t.backToSignIn}</a></p>` : ''}`;
  };
  router.get(ACCOUNT_PATHS.resetPage, async (ctx) => {
    show(ctx, 200, TEXT[kit.lang(ctx)].resetTitle, resetForm(ctx, { email: queryText(ctx, 'email') }));
  });
  router.post(ACCOUNT_PATHS.resetPage, checked, async (ctx) => {
    const fields = kit.fields(ctx);
    const email = (fields['email'] ?? '').trim();
    try {
      const sent = await service.requestPasswordReset(email);
      redirect(
        ctx,
        withQuery(`${ACCOUNT_PATHS.resetPage}/verify`, { email: sent.email, sent: '1', return: returnOf(ctx, fields['return']) }),
      );
    } catch (err) {
      refused(ctx, err, 'email', (errors) => resetForm(ctx, { email }, errors), TEXT[kit.lang(ctx)].resetTitle);
    }
  });

  // Password reset, step 2: the code and the new password.
  const resetVerifyForm = (ctx: AppContext, values: Record<string, string>, errors: FieldError[] = []) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const back = returnOf(ctx, values['return']);
    return html`${errorSummary(lang, errors)}
      ${values['sent'] ? html`<p class="flash ok" role="status">${t.resetSent(values['email'] ?? '')}</p>` : ''}
      <form method="post" action="${ACCOUNT_PATHS.resetPage}/verify" class="card narrow">
        ${csrfField(forms.token(ctx))} ${hiddenReturn(back)}
        ${field({ name: 'email', label: t.accountEmail, type: 'email', value: values['email'], errors, required: true, autocomplete: 'username', maxlength: 254 })}
        ${field({ name: 'code', label: t.code, value: values['code'], errors, required: true, autocomplete: 'one-time-code', inputmode: 'numeric', maxlength: CODE_DIGITS, pattern: `[0-9]{${CODE_DIGITS}}`, hint: t.codeHint, autofocus: Boolean(values['email']) })}
        ${field({ name: 'password', label: t.newPassword, type: 'password', errors, required: true, autocomplete: 'new-password', maxlength: 100, hint: passwordHint(lang) })}
        <p class="hint">${t.resetWarning}</p>
        <div class="actions"><button type="submit">${t.setPassword}</button></div>
      </form>`;
  };
  router.get(`${ACCOUNT_PATHS.resetPage}/verify`, async (ctx) => {
    show(ctx, 200, TEXT[kit.lang(ctx)].resetTitle, resetVerifyForm(ctx, { email: queryText(ctx, 'email'), sent: queryText(ctx, 'sent') }));
  });
  router.post(`${ACCOUNT_PATHS.resetPage}/verify`, checked, async (ctx) => {
    const fields = kit.fields(ctx);
    try {
      await service.resetPassword({
        email: (fields['email'] ?? '').trim(),
        code: (fields['code'] ?? '').trim(),
        newPassword: fields['password'] ?? '',
      });
      redirect(ctx, withQuery(`${ACCOUNT_PATHS.resetPage}/done`, { return: returnOf(ctx, fields['return']) }));
    } catch (err) {
      const values = { email: fields['email'] ?? '', code: fields['code'] ?? '', return: fields['return'] ?? '' };
      refused(ctx, err, 'code', (errors) => resetVerifyForm(ctx, values, errors), TEXT[kit.lang(ctx)].resetTitle);
    }
  });
  router.get(`${ACCOUNT_PATHS.resetPage}/done`, async (ctx) => {
    const t = TEXT[kit.lang(ctx)];
    const back = returnOf(ctx);
    show(
      ctx,
      200,
      t.resetDoneTitle,
      html`<p role="status">${t.resetDone}</p>
        <p><a class="button" href="${back ?? `${WEB_PATHS.signIn}?next=/console`}">${t.continueSignIn}</a></p>`,
    );
  });

  router.get(ACCOUNT_PATHS.deletedPage, async (ctx) => {
    const t = TEXT[kit.lang(ctx)];
    show(ctx, 200, t.deletedTitle, html`<p role="status">${t.deleted}</p>`);
  });

  const routes = router.routes();
  return (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next);
}

/** The login page to go back to: `?return=` or the form's field, only a path of our login pages. */
function returnOf(ctx: AppContext, value?: string): string | undefined {
  const candidate = value ?? ctx.query['return'];
  return typeof candidate === 'string' && RETURN_PATH.test(candidate) ? candidate : undefined;
}

function hiddenReturn(back: string | undefined): Html {
  return back ? html`<input type="hidden" name="return" value="${back}" />` : html``;
}

function queryText(ctx: AppContext, name: string): string {
  const value = ctx.query[name];
  return typeof value === 'string' ? value.slice(0, 254) : '';
}

function withQuery(path: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => Boolean(entry[1])));
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

function redirect(ctx: AppContext, location: string): void {
  ctx.status = 303;
  ctx.redirect(location);
}
