// "학교 계정으로 로그인": a small server-side app on Koa that signs people in with the school's
// authorization server (authorization code + PKCE, through @campus/client on openid-client),
// shows their name and email from userinfo, refreshes its tokens, and signs out (revokes the
// refresh token, then RP-initiated logout). Run with `npm install && npm start`; see README.md.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createLoginUrl, createLogoutUrl, exchangeCode, refresh, revoke, userinfo, type Tokens, type Userinfo } from '@campus/client';
import Koa, { type Context } from 'koa';

// The demo defaults match what `npm run demo` registers (client `demo-client`, redirect
// http://127.0.0.1:3000/callback, logout back to http://127.0.0.1:3000/).
const config = {
  issuer: process.env['CAMPUS_ISSUER'] ?? 'http://127.0.0.1:8080',
  clientId: process.env['CLIENT_ID'] ?? 'demo-client',
  // A public client has no secret: with your own CLIENT_ID and no CLIENT_SECRET, none is sent.
  clientSecret: process.env['CLIENT_SECRET'] ?? (process.env['CLIENT_ID'] ? undefined : 'demo-client-secret'),
  redirectUri: process.env['REDIRECT_URI'] ?? 'http://127.0.0.1:3000/callback',
  port: Number(process.env['PORT'] ?? 3000),
  // `self:read` is what userinfo needs; add `openid` (tick it for your app) for an ID token.
  scope: process.env['SCOPE'] ?? 'self:read',
};
const oauth = { issuer: config.issuer, clientId: config.clientId, clientSecret: config.clientSecret };
/**
 * Where the school's logout page sends the browser back: it must be registered for the client
 * (`campus clients update <id> --post-logout-redirect-uri`). The demo client has this app's home
 * page; for your own client set POST_LOGOUT_REDIRECT_URI once it is registered, else the sign-out
 * ends on the school's "signed out" page.
 */
const postLogoutRedirectUri =
  process.env['POST_LOGOUT_REDIRECT_URI'] ?? (process.env['CLIENT_ID'] ? undefined : new URL('/', config.redirectUri).href);

/** What the app keeps per browser, on the server (never tokens in the browser). */
interface Session {
  login?: { state: string; codeVerifier: string };
  tokens?: Tokens;
  user?: Userinfo;
  refreshedAt?: Date;
  message?: string;
}
// In memory, for the example; a real app uses its database or Redis.
const sessions = new Map<string, Session>();
const COOKIE = 'example_sid';

function session(ctx: Context): Session {
  let id = ctx.cookies.get(COOKIE, { signed: true });
  let found = id ? sessions.get(id) : undefined;
  if (!id || !found) {
    id = randomBytes(24).toString('base64url');
    found = {};
    sessions.set(id, found);
    // SameSite=Lax: other sites' forms do not carry it, which guards the POST routes below.
    ctx.cookies.set(COOKIE, id, { signed: true, httpOnly: true, sameSite: 'lax' });
  }
  return found;
}

const app = new Koa();
app.keys = [process.env['SESSION_SECRET'] ?? randomBytes(32).toString('hex')];
const buttonCss = readFileSync(new URL('../../web/kit/login-button.css', import.meta.url), 'utf8');

app.use(async (ctx) => {
  const s = session(ctx);
  try {
    if (ctx.method === 'GET' && ctx.path === '/') return void (ctx.body = page(s));
    if (ctx.method === 'GET' && ctx.path === '/login') {
      const login = await createLoginUrl({ ...oauth, redirectUri: config.redirectUri, scope: config.scope });
      s.login = { state: login.state, codeVerifier: login.codeVerifier };
      return ctx.redirect(login.url);
    }
    if (ctx.method === 'GET' && new URL(ctx.url, config.redirectUri).pathname === new URL(config.redirectUri).pathname) {
      const login = s.login;
      delete s.login;
      if (!login) throw new Error('이 로그인을 시작한 적이 없습니다 (no login was started in this browser)');
      if (ctx.query['error']) throw new Error(`로그인하지 않았습니다 (${String(ctx.query['error'])})`);
      // The whole callback address: openid-client checks state, iss and the code against it.
      const callbackUrl = new URL(ctx.search, config.redirectUri);
      s.tokens = await exchangeCode({ ...oauth, callbackUrl, ...login });
      // With `openid` the ID token names the user, and userinfo must name the same one.
      const subject = s.tokens.claims()?.sub;
      s.user = await userinfo({ ...oauth, accessToken: s.tokens.access_token, ...(subject ? { expectedSubject: subject } : {}) });
      return ctx.redirect('/');
    }
    if (ctx.method === 'POST' && ctx.path === '/refresh' && s.tokens?.refresh_token) {
      // The old refresh token is retired: keep the new one (presenting the old one again revokes the login).
      s.tokens = await refresh({ ...oauth, refreshToken: s.tokens.refresh_token });
      s.user = await userinfo({ ...oauth, accessToken: s.tokens.access_token });
      s.refreshedAt = new Date();
      return ctx.redirect('/');
    }
    if (ctx.method === 'POST' && ctx.path === '/logout') {
      const idToken = s.tokens?.id_token;
      // Ends this app's access (the grant), then the sign-in at the school (the browser's session there).
      if (s.tokens?.refresh_token) await revoke({ ...oauth, token: s.tokens.refresh_token });
      delete s.tokens;
      delete s.user;
      delete s.refreshedAt;
      return ctx.redirect(
        await createLogoutUrl({
          ...oauth,
          ...(postLogoutRedirectUri ? { postLogoutRedirectUri } : {}),
          ...(idToken ? { idTokenHint: idToken } : {}),
        }),
      );
    }
    ctx.status = 404;
    ctx.body = 'Not found';
  } catch (err) {
    s.message = err instanceof Error ? err.message : String(err);
    ctx.redirect('/');
  }
});

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const MARK =
  '<svg class="campus-login__mark" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="currentColor" d="M12 2 1.5 7.5 12 13l8.5-4.46V15h2V7.5L12 2Zm-6.5 9.6v4.15C5.5 18.1 8.4 20 12 20s6.5-1.9 6.5-4.25V11.6L12 15l-6.5-3.4Z"/></svg>';

function page(s: Session): string {
  const message = s.message ? `<p class="message" role="alert">${escape(s.message)}</p>` : '';
  delete s.message;
  const body = s.user
    ? `<h2>안녕하세요, <span class="name">${escape(s.user.student?.name ?? s.user.teacher?.name ?? s.user.email ?? s.user.sub)}</span>님 <span lang="en">(Hello)</span></h2>
<dl>
<dt>이름 <span lang="en">(Name)</span></dt><dd class="name">${escape(s.user.student?.name ?? s.user.teacher?.name ?? '—')}</dd>
<dt>이메일 <span lang="en">(Email)</span></dt><dd class="email">${escape(s.user.email ?? '—')}</dd>
<dt>학번 <span lang="en">(Student number)</span></dt><dd>${escape(String(s.user.student?.studentNumber ?? '—'))}</dd>
<dt>토큰 만료 <span lang="en">(Token expires)</span></dt><dd>${escape(new Date(Date.now() + (s.tokens?.expiresIn() ?? 0) * 1000).toLocaleTimeString('ko-KR'))}</dd>
</dl>
${s.refreshedAt ? `<p class="refreshed">토큰을 새로 받았습니다 <span lang="en">(Tokens refreshed)</span>: ${escape(s.refreshedAt.toLocaleTimeString('ko-KR'))}</p>` : ''}
<form method="post" action="/refresh"><button type="submit">토큰 새로 고침 <span lang="en">(Refresh tokens)</span></button></form>
<form method="post" action="/logout"><button type="submit">로그아웃 <span lang="en">(Sign out)</span></button></form>`
    : `<p>학교 계정으로 로그인하면 이 앱이 이름과 이메일을 보여 줍니다.</p>
<p lang="en">Sign in with your school account and this app shows your name and email.</p>
<p><a class="campus-login" href="/login">${MARK}<span>학교 계정으로 로그인</span></a></p>`;
  return `<!DOCTYPE html>
<html lang="ko">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>학교 계정으로 로그인 예제 · Login with school example</title>
<style>
body{margin:0;font:16px/1.5 system-ui,'Apple SD Gothic Neo','Noto Sans KR',sans-serif;color:#111827;background:#f9fafb}
main{max-width:40rem;margin:0 auto;padding:1.5rem 1rem}
h1{font-size:1.4rem;margin:0 0 1rem}h1 span{display:block;font-size:1rem;font-weight:400;color:#4b5563}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{color:#4b5563}dd{margin:0}
form{display:inline-block;margin:.5rem .5rem 0 0}button{font:inherit;min-height:44px;padding:0 1rem;border-radius:8px;border:1px solid #9ca3af;background:#fff;cursor:pointer}
.message{padding:.75rem;border-radius:8px;background:#fef2f2;color:#991b1b}
${buttonCss}
</style>
</head>
<body>
<main>
<h1>학교 계정으로 로그인 예제 <span lang="en">Login with school: example app</span></h1>
${message}
${body}
</main>
</body>
</html>
`;
}

app.listen(config.port, '127.0.0.1', () => {
  console.log(`login-with-school: listening on http://127.0.0.1:${config.port} (issuer ${config.issuer}, client ${config.clientId})`);
});
