import { createHash } from 'node:crypto';
import type { ErrorOut, KoaContextWithOIDC } from 'oidc-provider';
import { escapeHtml } from '../http/web/html.js';
import { pickLanguage, type Lang } from '../http/web/lang.js';
import { counted } from '../plural.js';
import { OPENID, SELF_READ } from './constants.js';

export { pickLanguage, type Lang } from '../http/web/lang.js';
export { escapeHtml } from '../http/web/html.js';

const TEXT = {
  ko: {
    signInTitle: '로그인',
    signInIntro: (client: string) => `${client}에 계속하려면 학교 계정으로 로그인하세요.`,
    appOf: (app: string) => `앱: ${app}`,
    noAccount: '계정이 없나요?',
    signUp: '학교 이메일로 가입하기',
    forgot: '비밀번호를 잊으셨나요?',
    email: '이메일',
    password: '비밀번호',
    signIn: '로그인',
    cancel: '취소',
    invalid: '이메일 또는 비밀번호가 올바르지 않습니다.',
    missing: '이메일과 비밀번호를 모두 입력하세요.',
    throttled: (minutes: number) => `로그인 시도가 너무 많습니다. ${minutes}분 후에 다시 시도하세요.`,
    emailTooLong: '이메일 주소가 너무 깁니다 (최대 254자).',
    remember: '로그인 상태 유지 (최대 14일)',
    rememberHint: '공용 컴퓨터에서는 선택하지 마세요. 선택하지 않으면 브라우저를 닫을 때 로그아웃됩니다.',
    notYou: (email: string) => `${email} 계정이 아닌가요?`,
    signOut: '로그아웃',
    logoutTitle: '로그아웃',
    logoutIntro: (email: string) => `${email} 계정에서 로그아웃할까요? 이 기기에서 학교 계정 로그인이 끝납니다.`,
    logoutKeepsApps: '앱에 허용한 권한은 그대로 유지됩니다. 앱에서 로그아웃하려면 그 앱에서 로그아웃하세요.',
    logoutStay: '로그인 상태를 유지하려면 이 페이지를 닫으세요.',
    signedOutTitle: '로그아웃되었습니다',
    signedOutIntro: '이 기기에서 학교 계정 로그인이 끝났습니다. 다시 사용하려면 앱에서 로그인하세요.',
    consentTitle: '권한 요청',
    consentIntro: (client: string, email: string) => `${client} 앱이 ${email} 계정에 다음 권한을 요청합니다.`,
    allow: '허용',
    deny: '거부',
    scopes: {
      [SELF_READ]: '내 학생 정보 읽기: 이름, 이메일, 학번, 학과, 기숙사, 동아리',
      [OPENID]: '로그인 확인: 이 앱이 내가 누구인지 확인합니다 (ID 토큰)',
    } as Record<string, string>,
    errorTitle: '요청을 처리할 수 없습니다',
    errorHint: '로그인을 요청한 앱으로 돌아가 다시 시도하세요.',
    sessionExpired: '로그인 시간이 지났거나 로그인 세션을 찾을 수 없습니다.',
    forged: '요청을 확인할 수 없습니다. 페이지를 새로 고친 뒤 다시 시도하세요.',
    errorCode: '오류 코드',
    switchTo: { lang: 'en' as Lang, label: 'English' },
  },
  en: {
    signInTitle: 'Sign in',
    signInIntro: (client: string) => `Sign in with your school account to continue to ${client}.`,
    appOf: (app: string) => `App: ${app}`,
    noAccount: 'No account yet?',
    signUp: 'Sign up with your school email',
    forgot: 'Forgot your password?',
    email: 'Email',
    password: 'Password',
    signIn: 'Sign in',
    cancel: 'Cancel',
    invalid: 'The email or password is incorrect.',
    missing: 'Enter both your email and your password.',
    throttled: (minutes: number) => `Too many sign-in attempts. Try again in ${counted(minutes, 'minute')}.`,
    emailTooLong: 'The email address is too long (at most 254 characters).',
    remember: 'Keep me signed in (up to 14 days)',
    rememberHint: 'Leave this unticked on a shared computer: you are then signed out when the browser closes.',
    notYou: (email: string) => `Not ${email}?`,
    signOut: 'Sign out',
    logoutTitle: 'Sign out',
    logoutIntro: (email: string) => `Sign out of ${email}? Your school account sign-in on this device ends.`,
    logoutKeepsApps: 'Apps you allowed keep their access. To sign out of an app, sign out in that app.',
    logoutStay: 'To stay signed in, close this page.',
    signedOutTitle: 'You have signed out',
    signedOutIntro: 'Your school account sign-in on this device has ended. To continue, sign in again from the app.',
    consentTitle: 'Allow access',
    consentIntro: (client: string, email: string) => `${client} is asking for the following access to the account ${email}.`,
    allow: 'Allow',
    deny: 'Deny',
    scopes: {
      [SELF_READ]: 'Read your own student record: name, email, student number, major, dormitory and clubs',
      [OPENID]: 'Confirm who you are to this app (an ID token)',
    } as Record<string, string>,
    errorTitle: 'The request cannot be completed',
    errorHint: 'Go back to the app that sent you here and try again.',
    sessionExpired: 'The sign-in session expired or could not be found.',
    forged: 'The request could not be verified. Reload the page and try again.',
    errorCode: 'Error code',
    switchTo: { lang: 'ko' as Lang, label: '한국어' },
  },
} as const;

/** The messages of one language (for handlers that pick a message by name). */
export function text(lang: Lang) {
  return TEXT[lang];
}

// Contrast: body text #111827 and links #1d4ed8 on white, white on #1d4ed8 (all above 4.5:1).
const STYLE = [
  'body{margin:0;font:16px/1.5 system-ui,-apple-system,"Apple SD Gothic Neo","Malgun Gothic",sans-serif;color:#111827;background:#f3f4f6}',
  'main{max-width:26rem;margin:3rem auto;padding:2rem;background:#fff;border:1px solid #d1d5db;border-radius:.5rem}',
  'h1{font-size:1.5rem;margin:0 0 1rem}',
  'label{display:block;font-weight:600;margin:1rem 0 .25rem}',
  'input{box-sizing:border-box;width:100%;padding:.6rem;font-size:1rem;border:1px solid #6b7280;border-radius:.25rem}',
  '.check{display:flex;gap:.5rem;align-items:center;font-weight:400;margin:1rem 0 0}',
  '.check input{width:1.25rem;height:1.25rem;margin:0}',
  '.hint{font-size:.875rem;color:#374151;margin:.25rem 0 0}',
  '.actions{display:flex;gap:.75rem;margin-top:1.5rem}',
  'button{flex:1;padding:.7rem;font-size:1rem;font-weight:600;border-radius:.25rem;border:1px solid #1d4ed8;cursor:pointer}',
  'button.primary{background:#1d4ed8;color:#fff}',
  'button.secondary{background:#fff;color:#1d4ed8}',
  'a{color:#1d4ed8}',
  ':focus-visible{outline:3px solid #f59e0b;outline-offset:2px}',
  '.error{color:#991b1b;background:#fef2f2;border:1px solid #fca5a5;padding:.75rem;border-radius:.25rem}',
  '.lang{text-align:right;margin:0 0 1rem}',
  '.links{margin:1.5rem 0 0;line-height:2}',
  'ul{padding-left:1.25rem}',
].join('');
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/**
 * Headers of every page: no framing (clickjacking), no scripts at all, only our inline style,
 * nothing cached, no Referer to other sites (the addresses carry interaction ids; a
 * same-origin Referer keeps the Origin header of our own form posts, which the CSRF check reads).
 */
export function setPageHeaders(ctx: { set(field: string, value: string): void }): void {
  ctx.set('Content-Security-Policy', `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; frame-ancestors 'none'; base-uri 'none'`);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('Cache-Control', 'no-store');
}

function layout(lang: Lang, title: string, switchHref: string | undefined, content: string): string {
  const other = TEXT[lang].switchTo;
  const switcher = switchHref
    ? `<p class="lang"><a href="${escapeHtml(switchHref)}" lang="${other.lang}" hreflang="${other.lang}">${other.label}</a></p>`
    : '';
  return `<!DOCTYPE html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${switcher}
${content}
</main>
</body>
</html>`;
}

export type LoginProblem =
  { kind: 'invalid' } | { kind: 'missing' } | { kind: 'emailTooLong' } | { kind: 'throttled'; retryAfterSeconds: number };

export interface LoginPageInput {
  lang: Lang;
  action: string;
  cancelAction: string;
  switchHref: string;
  clientName: string;
  /** The service the app registered for the login page; the app's name is shown beside it. */
  serviceName?: string | undefined;
  /** The sign-up and password-reset pages (each brings the person back here when done). */
  signUpHref: string;
  resetHref: string;
  csrf: string;
  email?: string;
  /** Whether "keep me signed in" is ticked (kept when the form is shown again). */
  remember?: boolean;
  problem?: LoginProblem;
}

/** The login form: labelled fields, the first field (or the error) focused, no script needed. */
export function loginPage(input: LoginPageInput): string {
  const t = TEXT[input.lang];
  const problem = input.problem ? describeProblem(input.lang, input.problem) : undefined;
  const invalid = problem ? ' aria-invalid="true" aria-describedby="form-error"' : '';
  const alert = problem ? `<p id="form-error" class="error" role="alert">${escapeHtml(problem)}</p>` : '';
  const focusEmail = input.email ? '' : ' autofocus';
  const focusPassword = input.email ? ' autofocus' : '';
  return layout(
    input.lang,
    t.signInTitle,
    input.switchHref,
    `<h1>${escapeHtml(t.signInTitle)}</h1>
<p>${escapeHtml(t.signInIntro(input.serviceName ?? input.clientName))}</p>
${input.serviceName ? `<p class="hint">${escapeHtml(t.appOf(input.clientName))}</p>` : ''}
${alert}
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
<input type="hidden" name="lang" value="${input.lang}">
<label for="email">${escapeHtml(t.email)}</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${escapeHtml(input.email ?? '')}"${invalid}${focusEmail}>
<label for="password">${escapeHtml(t.password)}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${invalid}${focusPassword}>
<label class="check" for="remember"><input id="remember" name="remember" type="checkbox" value="yes" aria-describedby="remember-hint"${input.remember ? ' checked' : ''}>${escapeHtml(t.remember)}</label>
<p id="remember-hint" class="hint">${escapeHtml(t.rememberHint)}</p>
<div class="actions">
<button type="submit" class="primary">${escapeHtml(t.signIn)}</button>
<button type="submit" class="secondary" formaction="${escapeHtml(input.cancelAction)}" formnovalidate>${escapeHtml(t.cancel)}</button>
</div>
</form>
<p class="links">${escapeHtml(t.noAccount)} <a href="${escapeHtml(input.signUpHref)}">${escapeHtml(t.signUp)}</a><br>
<a href="${escapeHtml(input.resetHref)}">${escapeHtml(t.forgot)}</a></p>`,
  );
}

function describeProblem(lang: Lang, problem: LoginProblem): string {
  const t = TEXT[lang];
  if (problem.kind === 'invalid') return t.invalid;
  if (problem.kind === 'missing') return t.missing;
  if (problem.kind === 'emailTooLong') return t.emailTooLong;
  return t.throttled(Math.max(1, Math.ceil(problem.retryAfterSeconds / 60)));
}

export interface ConsentPageInput {
  lang: Lang;
  action: string;
  switchHref: string;
  clientName: string;
  serviceName?: string | undefined;
  accountEmail: string;
  csrf: string;
  scopes: string[];
  /** The logout page (end_session_endpoint) for "not you? sign out". */
  logoutHref: string;
}

/** The consent page: the requested scopes in words, Allow / Deny. */
export function consentPage(input: ConsentPageInput): string {
  const t = TEXT[input.lang];
  const items = input.scopes
    .map((scope) => `<li>${escapeHtml(t.scopes[scope] ?? scope)} <code>${escapeHtml(scope)}</code></li>`)
    .join('\n');
  return layout(
    input.lang,
    t.consentTitle,
    input.switchHref,
    `<h1>${escapeHtml(t.consentTitle)}</h1>
<p>${escapeHtml(t.consentIntro(input.serviceName ?? input.clientName, input.accountEmail))}</p>
${input.serviceName ? `<p class="hint">${escapeHtml(t.appOf(input.clientName))}</p>` : ''}
<ul>
${items}
</ul>
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
<input type="hidden" name="lang" value="${input.lang}">
<div class="actions">
<button type="submit" class="primary" name="decision" value="allow" autofocus>${escapeHtml(t.allow)}</button>
<button type="submit" class="secondary" name="decision" value="deny">${escapeHtml(t.deny)}</button>
</div>
</form>
<p>${escapeHtml(t.notYou(input.accountEmail))} <a href="${escapeHtml(input.logoutHref)}">${escapeHtml(t.signOut)}</a></p>`,
  );
}

/**
 * The logout confirmation of the end_session_endpoint. `providerForm` is oidc-provider's hidden
 * form (its action and anti-forgery token); the button submits it with logout=yes.
 */
export function logoutPage(input: { lang: Lang; accountEmail: string; providerForm: string }): string {
  const t = TEXT[input.lang];
  return layout(
    input.lang,
    t.logoutTitle,
    undefined,
    `<h1>${escapeHtml(t.logoutTitle)}</h1>
<p>${escapeHtml(t.logoutIntro(input.accountEmail))}</p>
<p>${escapeHtml(t.logoutKeepsApps)}</p>
${input.providerForm}
<div class="actions">
<button type="submit" class="primary" form="op.logoutForm" name="logout" value="yes" autofocus>${escapeHtml(t.signOut)}</button>
</div>
<p class="hint">${escapeHtml(t.logoutStay)}</p>`,
  );
}

/** The page after logout when the app gave no post_logout_redirect_uri. */
export function signedOutPage(lang: Lang): string {
  const t = TEXT[lang];
  return layout(
    lang,
    t.signedOutTitle,
    undefined,
    `<h1>${escapeHtml(t.signedOutTitle)}</h1>
<p role="status">${escapeHtml(t.signedOutIntro)}</p>
<p>${escapeHtml(t.logoutKeepsApps)}</p>`,
  );
}

/** An error page: what happened, what to do, and the OAuth error code for support. */
export function errorPage(lang: Lang, message: string, code?: string): string {
  const t = TEXT[lang];
  const codeLine = code ? `<p>${escapeHtml(t.errorCode)}: <code>${escapeHtml(code)}</code></p>` : '';
  return layout(
    lang,
    t.errorTitle,
    undefined,
    `<h1>${escapeHtml(t.errorTitle)}</h1>
<p role="alert">${escapeHtml(message)}</p>
${codeLine}
<p>${escapeHtml(t.errorHint)}</p>`,
  );
}

/**
 * The provider's error rendering (errors that cannot go back to the client's redirect address,
 * e.g. an unknown client or a redirect_uri mismatch): a page, or JSON when the caller asks
 * for JSON. The status is already set by the provider.
 */
export async function renderProviderError(ctx: KoaContextWithOIDC, out: ErrorOut): Promise<void> {
  const body = { error: out.error, error_description: out.error_description ?? out.error };
  if (ctx.accepts('html', 'json') === 'json') {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
    return;
  }
  const lang = pickLanguage(undefined, ctx.get('accept-language'));
  setPageHeaders(ctx);
  ctx.type = 'html';
  ctx.body = errorPage(lang, body.error_description, body.error);
}
