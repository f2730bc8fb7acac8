import { createHash } from 'node:crypto';
import type { ErrorOut, KoaContextWithOIDC } from 'oidc-provider';
import { OPENID, SELF_READ } from './constants.js';

/** Pages are Korean first; English on request (?lang=en, or a browser that prefers it). */
export type Lang = 'ko' | 'en';

/** An explicit `lang` wins; otherwise English only when the browser ranks it above Korean. */
export function pickLanguage(explicit: unknown, acceptLanguage: string): Lang {
  if (explicit === 'ko' || explicit === 'en') return explicit;
  const ranked = acceptLanguage
    .split(',')
    .map((part) => {
      const [tag = '', ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => /^q=([\d.]+)$/.exec(p.trim())?.[1]).find(Boolean);
      return { lang: tag.split('-')[0] ?? '', q: q === undefined ? 1 : Number(q) };
    })
    .filter((entry) => entry.lang === 'ko' || entry.lang === 'en')
    .sort((a, b) => b.q - a.q);
  return ranked[0]?.lang === 'en' ? 'en' : 'ko';
}

const TEXT = {
  ko: {
    signInTitle: '로그인',
    signInIntro: (client: string) => `${client}에 계속하려면 학교 계정으로 로그인하세요.`,
    email: '이메일',
    password: '비밀번호',
    signIn: '로그인',
    cancel: '취소',
    invalid: '이메일 또는 비밀번호가 올바르지 않습니다.',
    missing: '이메일과 비밀번호를 모두 입력하세요.',
    throttled: (minutes: number) => `로그인 시도가 너무 많습니다. ${minutes}분 후에 다시 시도하세요.`,
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
    email: 'Email',
    password: 'Password',
    signIn: 'Sign in',
    cancel: 'Cancel',
    invalid: 'The email or password is incorrect.',
    missing: 'Enter both your email and your password.',
    throttled: (minutes: number) => `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
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
  '.actions{display:flex;gap:.75rem;margin-top:1.5rem}',
  'button{flex:1;padding:.7rem;font-size:1rem;font-weight:600;border-radius:.25rem;border:1px solid #1d4ed8;cursor:pointer}',
  'button.primary{background:#1d4ed8;color:#fff}',
  'button.secondary{background:#fff;color:#1d4ed8}',
  'a{color:#1d4ed8}',
  ':focus-visible{outline:3px solid #f59e0b;outline-offset:2px}',
  '.error{color:#991b1b;background:#fef2f2;border:1px solid #fca5a5;padding:.75rem;border-radius:.25rem}',
  '.lang{text-align:right;margin:0 0 1rem}',
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

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
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

export type LoginProblem = { kind: 'invalid' } | { kind: 'missing' } | { kind: 'throttled'; retryAfterSeconds: number };

export interface LoginPageInput {
  lang: Lang;
  action: string;
  cancelAction: string;
  switchHref: string;
  clientName: string;
  csrf: string;
  email?: string;
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
<p>${escapeHtml(t.signInIntro(input.clientName))}</p>
${alert}
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
<input type="hidden" name="lang" value="${input.lang}">
<label for="email">${escapeHtml(t.email)}</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${escapeHtml(input.email ?? '')}"${invalid}${focusEmail}>
<label for="password">${escapeHtml(t.password)}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${invalid}${focusPassword}>
<div class="actions">
<button type="submit" class="primary">${escapeHtml(t.signIn)}</button>
<button type="submit" class="secondary" formaction="${escapeHtml(input.cancelAction)}" formnovalidate>${escapeHtml(t.cancel)}</button>
</div>
</form>`,
  );
}

function describeProblem(lang: Lang, problem: LoginProblem): string {
  const t = TEXT[lang];
  if (problem.kind === 'invalid') return t.invalid;
  if (problem.kind === 'missing') return t.missing;
  return t.throttled(Math.max(1, Math.ceil(problem.retryAfterSeconds / 60)));
}

export interface ConsentPageInput {
  lang: Lang;
  action: string;
  switchHref: string;
  clientName: string;
  accountEmail: string;
  csrf: string;
  scopes: string[];
}

/** The consent page: the requested scopes in words, Allow / Deny. */
export function consentPage(input: ConsentPageInput): string {
  const t = TEXT[input.lang];
  const items = input.scopes.map((scope) => `<li>${escapeHtml(t.scopes[scope] ?? scope)} <code>${escapeHtml(scope)}</code></li>`).join('\n');
  return layout(
    input.lang,
    t.consentTitle,
    input.switchHref,
    `<h1>${escapeHtml(t.consentTitle)}</h1>
<p>${escapeHtml(t.consentIntro(input.clientName, input.accountEmail))}</p>
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
</form>`,
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
