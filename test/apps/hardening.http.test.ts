import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectOAuthError } from '../helpers/expect.js';
import { buildStudent, insertSchool } from '../helpers/factories.js';
import {
  authorize,
  CookieJar,
  createAccount,
  createClient,
  pkcePair,
  postJson,
  REDIRECT_URI,
  type AuthorizeResult,
} from '../helpers/oauth.js';

/**
 * The authorization server's sessions over HTTP: sessions that end with the browser unless
 * remembered, RP-initiated logout that keeps the apps' grants, PKCE by default, and single use of
 * codes and refresh tokens under parallel redemption (failed logins: test/accounts/login-lockout.http.test.ts).
 */

const DAY_SECONDS = 24 * 3600;

describe('OAuth apps: hardening of sessions, logout, PKCE and single use', function () {
  this.timeout(60000);
  let t: TestApp;
  let client: { id: string; secret: string };
  let legacy: { id: string; secret: string };
  const USER = { email: 'jung@school.test', password: 'jung password 1' };
  const LOGGED_OUT = 'http://127.0.0.1:9/logged-out';

  before(async () => {
    t = await buildTestApp('oauth_sessions');
    await insertSchool(t.db, { students: [buildStudent({ _id: 31, email: USER.email })] });
    await createAccount(t.db, USER.email, USER.password);
    const c = await createClient(t.db, { name: '출석부', postLogoutRedirectUris: [LOGGED_OUT] });
    client = { id: c.client.id, secret: c.secret ?? '' };
    const l = await createClient(t.db, { name: 'Legacy app', pkce: 'optional' });
    legacy = { id: l.client.id, secret: l.secret ?? '' };
  });
  after(() => t.close());

  function signIn(options: { remember?: boolean; jar?: CookieJar } = {}): Promise<AuthorizeResult> {
    return authorize(t, { client_id: client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's' }, USER, options);
  }

  async function tokensOf(result: AuthorizeResult): Promise<{ access_token: string; refresh_token: string }> {
    const res = await postJson(t, '/v1/oauth/token', {
      grant_type: 'authorization_code',
      code: result.code,
      client_id: client.id,
      client_secret: client.secret,
      redirect_uri: REDIRECT_URI,
      code_verifier: result.verifier,
    });
    expect(res.status, await res.clone().text()).to.equal(200);
    return (await res.json()) as { access_token: string; refresh_token: string };
  }

  function refresh(refreshToken: string): Promise<Response> {
    return postJson(t, '/v1/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: client.id,
      client_secret: client.secret,
    });
  }

  function sessionCookies(jar: CookieJar): string[] {
    return jar.setCookieLines.filter((line) => /^campus_session=[^;]+;/.test(line));
  }

  /** Whether the browser of `jar` is still signed in: prompt=none answers a code, or login_required. */
  async function signedIn(jar: CookieJar): Promise<boolean> {
    const params = new URLSearchParams({
      client_id: client.id,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      state: 'n',
      prompt: 'none',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    });
    let url = `${t.url}/v1/oauth/authorize?${params}`;
    for (let hop = 0; hop < 5; hop++) {
      const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
      jar.store(res);
      const location = new URL(res.headers.get('location') ?? '', url);
      if (location.origin !== t.url) {
        if (location.searchParams.get('code')) return true;
        expect(location.searchParams.get('error')).to.equal('login_required');
        return false;
      }
      url = location.href;
    }
    throw new Error('prompt=none did not come back to the client');
  }

  /** Opens the end_session_endpoint with the browser's cookies; returns the page and its form. */
  async function openLogout(jar: CookieJar, query: Record<string, string>, headers: Record<string, string> = {}) {
    const res = await fetch(`${t.url}/v1/oauth/logout?${new URLSearchParams(query)}`, { headers: { cookie: jar.header(), ...headers } });
    jar.store(res);
    const html = await res.text();
    return {
      res,
      html,
      action: /<form id="op\.logoutForm" method="post" action="([^"]+)"/.exec(html)?.[1] ?? '',
      xsrf: /name="xsrf" value="([^"]+)"/.exec(html)?.[1] ?? '',
    };
  }

  async function confirmLogout(jar: CookieJar, page: { action: string; xsrf: string }): Promise<Response> {
    const res = await fetch(page.action, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: new URLSearchParams({ xsrf: page.xsrf, logout: 'yes' }).toString(),
    });
    jar.store(res);
    return res;
  }

  describe('the session cookie', () => {
    it('ends with the browser (no Expires, no Max-Age) unless "keep me signed in" is ticked', async () => {
      const { jar } = await signIn();
      const lines = sessionCookies(jar);
      expect(lines).to.not.have.length(0);
      for (const line of lines) {
        expect(line).to.not.match(/;\s*expires=/i);
        expect(line).to.not.match(/;\s*max-age=/i);
        expect(line).to.match(/;\s*httponly/i);
        expect(line).to.match(/;\s*samesite=lax/i);
      }
      expect(await signedIn(jar)).to.equal(true);
    });

    it('with "keep me signed in" it lasts at most 14 days (Max-Age and Expires)', async () => {
      const { jar } = await signIn({ remember: true });
      const lines = sessionCookies(jar);
      expect(lines).to.not.have.length(0);
      for (const line of lines) {
        const maxAge = Number(/;\s*max-age=(\d+)/i.exec(line)?.[1]);
        expect(maxAge).to.be.within(14 * DAY_SECONDS - 60, 14 * DAY_SECONDS);
        const expires = Date.parse(/;\s*expires=([^;]+)/i.exec(line)?.[1] ?? '');
        expect(expires - Date.now()).to.be.within((14 * DAY_SECONDS - 60) * 1000, 14 * DAY_SECONDS * 1000);
      }
      expect(await signedIn(jar)).to.equal(true);
    });

    it('the login page offers "keep me signed in", unticked', async () => {
      const params = new URLSearchParams({
        client_id: client.id,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        state: 'h',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      });
      const start = await t.request(`/v1/oauth/authorize?${params}`, { redirect: 'manual' });
      const jar = new CookieJar();
      jar.store(start);
      const html = await (await fetch(new URL(start.headers.get('location') ?? '', t.url), { headers: { cookie: jar.header() } })).text();
      // Unticked: no `checked` attribute.
      expect(html).to.match(
        /<input\s+id="remember"\s+name="remember"\s+type="checkbox"\s+value="yes"\s+aria-describedby="remember-hint"\s*\/>\s*<span>로그인 상태 유지 \(최대 14일\)<\/span><\/label/,
      );
      expect(html).to.include('공용 컴퓨터에서는 선택하지 마세요');
    });
  });

  describe('logout (end_session_endpoint)', () => {
    it('is published in discovery', async () => {
      const doc = (await (await t.request('/.well-known/openid-configuration')).json()) as Record<string, unknown>;
      expect(doc['end_session_endpoint']).to.equal(`${t.url}/v1/oauth/logout`);
    });

    it('with a registered post_logout_redirect_uri: confirmation page, then back to the app with state; the session is gone, the refresh token still works', async () => {
      const result = await signIn({ remember: true });
      const tokens = await tokensOf(result);
      const { jar } = result;
      expect(await signedIn(jar)).to.equal(true);
      // The session cookie holds the session's id; its record is in the store.
      const sessionRecord = `Session:${jar.get('campus_session') ?? '-'}`;
      expect(await t.db.models.oauthRecords.countDocuments({ _id: sessionRecord })).to.equal(1);

      const page = await openLogout(jar, { client_id: client.id, post_logout_redirect_uri: LOGGED_OUT, state: 'bye' });
      expect(page.res.status).to.equal(200);
      expect(page.res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(page.res.headers.get('content-security-policy')).to.match(/frame-ancestors 'none'/);
      expect(page.res.headers.get('cache-control')).to.equal('no-store');
      expect(page.html).to.include('<html lang="ko">');
      expect(page.html).to.include(`${USER.email} 계정에서 로그아웃할까요?`);
      expect(page.html).to.include(
        '<button type="submit" class="primary" form="op.logoutForm" name="logout" value="yes" autofocus>로그아웃</button>',
      );
      expect(page.html).to.not.include('<script');

      const done = await confirmLogout(jar, page);
      expect(done.status).to.equal(303);
      expect(done.headers.get('location')).to.equal(`${LOGGED_OUT}?state=bye`);
      expect(done.headers.getSetCookie().some((line) => /^campus_session=;.*expires=Thu, 01 Jan 1970/i.test(line))).to.equal(true);

      // The session is gone: from the database and from the browser.
      expect(await t.db.models.oauthRecords.countDocuments({ _id: sessionRecord })).to.equal(0);
      expect(await signedIn(jar)).to.equal(false);

      // The app's grant is not: its refresh token still works, and so does userinfo.
      const refreshed = await refresh(tokens.refresh_token);
      expect(refreshed.status, await refreshed.clone().text()).to.equal(200);
      const { access_token } = (await refreshed.json()) as { access_token: string };
      expect((await t.request('/userinfo', { headers: { Authorization: `Bearer ${access_token}` } })).status).to.equal(200);
      expect((await t.request('/userinfo', { headers: { Authorization: `Bearer ${tokens.access_token}` } })).status).to.equal(200);
    });

    it('a post_logout_redirect_uri that is not registered exactly is refused (400, never redirected)', async () => {
      const { jar } = await signIn();
      for (const uri of [`${LOGGED_OUT}/`, 'http://127.0.0.1:9/logged-out?x=1', 'https://evil.example/logged-out', REDIRECT_URI]) {
        const page = await openLogout(jar, { client_id: client.id, post_logout_redirect_uri: uri });
        expect(page.res.status, uri).to.equal(400);
        expect(page.res.headers.get('location')).to.equal(null);
        expect(page.html).to.include('post_logout_redirect_uri not registered');
        const json = await fetch(
          `${t.url}/v1/oauth/logout?${new URLSearchParams({ client_id: client.id, post_logout_redirect_uri: uri })}`,
          {
            headers: { cookie: jar.header(), accept: 'application/json' },
          },
        );
        await expectOAuthError(json, 400, 'invalid_request', 'post_logout_redirect_uri not registered');
      }
      // Still signed in: nothing was ended.
      expect(await signedIn(jar)).to.equal(true);
    });

    it('without post_logout_redirect_uri: English confirmation with ui_locales, then our "signed out" page', async () => {
      const { jar } = await signIn();
      const page = await openLogout(jar, { ui_locales: 'en' });
      expect(page.res.status).to.equal(200);
      expect(page.html).to.include('<html lang="en">');
      expect(page.html).to.include(`Sign out of ${USER.email}?`);
      const done = await confirmLogout(jar, page);
      expect(done.status).to.equal(303);
      const success = new URL(done.headers.get('location') ?? '', t.url);
      expect(success.href).to.equal(`${t.url}/v1/oauth/logout/success`);
      const signedOut = await fetch(success, { headers: { 'accept-language': 'ko-KR' } });
      expect(signedOut.status).to.equal(200);
      const html = await signedOut.text();
      expect(html).to.include('<h1>로그아웃되었습니다</h1>');
      expect(signedOut.headers.get('content-security-policy')).to.match(/default-src 'none'/);
      expect(await signedIn(jar)).to.equal(false);
    });

    it('a forged confirmation (wrong anti-forgery token) ends nothing', async () => {
      const { jar } = await signIn();
      const page = await openLogout(jar, {});
      const forged = await confirmLogout(jar, { action: page.action, xsrf: 'f'.repeat(48) });
      expect(forged.status).to.equal(400);
      expect(await signedIn(jar)).to.equal(true);
    });

    it('the consent page offers "not you? sign out", which leads to the logout confirmation', async () => {
      const jar = new CookieJar();
      const start = await t.request(
        `/v1/oauth/authorize?${new URLSearchParams({ client_id: client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'c', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' })}`,
        { redirect: 'manual' },
      );
      jar.store(start);
      const loginUrl = new URL(start.headers.get('location') ?? '', t.url);
      const loginHtml = await (await fetch(loginUrl, { headers: { cookie: jar.header() } })).text();
      const csrf = /name="csrf" value="([^"]+)"/.exec(loginHtml)?.[1] ?? '';
      const posted = await fetch(`${loginUrl.href}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header(), origin: t.url },
        body: new URLSearchParams({ csrf, email: USER.email, password: USER.password }).toString(),
      });
      const resume = await fetch(new URL(posted.headers.get('location') ?? '', t.url), {
        redirect: 'manual',
        headers: { cookie: jar.header() },
      });
      jar.store(resume);
      const consent = await (
        await fetch(new URL(resume.headers.get('location') ?? '', t.url), { headers: { cookie: jar.header() } })
      ).text();
      expect(consent).to.include('<h1>권한 요청</h1>');
      expect(consent).to.include(`<p>${USER.email} 계정이 아닌가요? <a href="/v1/oauth/logout?ui_locales=ko">로그아웃</a></p>`);
      const page = await openLogout(jar, { ui_locales: 'ko' });
      expect(page.html).to.include(`${USER.email} 계정에서 로그아웃할까요?`);
      expect((await confirmLogout(jar, page)).status).to.equal(303);
      expect(await signedIn(jar)).to.equal(false);
    });
  });

  describe('PKCE for every client by default', () => {
    it('a confidential client registered by default is refused without code_challenge', async () => {
      const query = new URLSearchParams({ client_id: client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'p' });
      const res = await t.request(`/v1/oauth/authorize?${query}`, { redirect: 'manual' });
      expect(res.status).to.equal(303);
      const location = new URL(res.headers.get('location') ?? '');
      expect(`${location.origin}${location.pathname}`).to.equal(REDIRECT_URI);
      expect(location.searchParams.get('error')).to.equal('invalid_request');
      expect(location.searchParams.get('error_description')).to.equal(
        'Authorization Server policy requires PKCE to be used for this request',
      );
      expect(location.searchParams.get('state')).to.equal('p');
    });

    it('its code is refused at the token endpoint without the code_verifier', async () => {
      const result = await signIn();
      const res = await postJson(t, '/v1/oauth/token', {
        grant_type: 'authorization_code',
        code: result.code,
        client_id: client.id,
        client_secret: client.secret,
        redirect_uri: REDIRECT_URI,
      });
      await expectOAuthError(res, 400, 'invalid_grant', 'code_verifier must be provided');
    });

    it('a confidential client registered with PKCE optional (legacy app) completes the flow without it', async () => {
      const result = await authorize(t, { client_id: legacy.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'l' }, USER, {
        pkce: false,
      });
      expect(result.code, result.location.href).to.be.a('string');
      const res = await postJson(t, '/v1/oauth/token', {
        grant_type: 'authorization_code',
        code: result.code,
        client_id: legacy.id,
        client_secret: legacy.secret,
        redirect_uri: REDIRECT_URI,
      });
      expect(res.status, await res.clone().text()).to.equal(200);
    });
  });

  describe('single use under parallel redemption', () => {
    async function outcomes(responses: Response[]): Promise<{ ok: number; invalidGrant: number; other: string[] }> {
      const counts = { ok: 0, invalidGrant: 0, other: [] as string[] };
      for (const res of responses) {
        const body = (await res.json()) as { error?: string };
        if (res.status === 200) counts.ok++;
        else if (res.status === 400 && body.error === 'invalid_grant') counts.invalidGrant++;
        else counts.other.push(`${res.status} ${JSON.stringify(body)}`);
      }
      return counts;
    }

    // Several rounds: without an atomic claim, more than one redemption wins in most rounds.
    it('20 parallel redemptions of one authorization code: at most one succeeds (5 rounds)', async () => {
      for (let round = 0; round < 5; round++) {
        const result = await signIn();
        const body = {
          grant_type: 'authorization_code',
          code: result.code,
          client_id: client.id,
          client_secret: client.secret,
          redirect_uri: REDIRECT_URI,
          code_verifier: result.verifier,
        };
        const counts = await outcomes(await Promise.all(Array.from({ length: 20 }, () => postJson(t, '/v1/oauth/token', body))));
        expect(counts.other).to.deep.equal([]);
        expect(counts.ok + counts.invalidGrant).to.equal(20);
        expect(counts.ok, `round ${round}`).to.be.at.most(1);
      }
    });

    // Within 60 s of a refresh token's use, and before its successor is used, presenting it again
    // is a retry of a lost answer (src/data/accounts/oauth-records.ts, rotate): each gets a new pair, the one
    // before it is retired, and the person stays signed in with the last one.
    it('20 parallel redemptions of one refresh token: each a new pair, exactly one of them usable, the grant kept (5 rounds)', async () => {
      for (let round = 0; round < 5; round++) {
        const tokens = await tokensOf(await signIn());
        const responses = await Promise.all(Array.from({ length: 20 }, () => refresh(tokens.refresh_token)));
        const pairs = (await Promise.all(responses.map((res) => res.json()))) as { refresh_token?: string }[];
        expect(
          responses.map((res) => res.status),
          `round ${round}`,
        ).to.deep.equal(Array.from({ length: 20 }, () => 200));
        const issued = pairs.map((pair) => pair.refresh_token ?? '');
        expect(new Set(issued).size).to.equal(20);
        const active: string[] = [];
        for (const token of issued) {
          const res = await postJson(t, '/v1/oauth/introspect', { token, client_id: client.id, client_secret: client.secret });
          if (((await res.json()) as { active: boolean }).active) active.push(token);
        }
        expect(active, `round ${round}`).to.have.length(1);
        expect((await refresh(active[0] ?? '')).status).to.equal(200);
      }
    });

    it('20 parallel redemptions of a refresh token whose successor is in use: none succeeds, and the grant is revoked', async () => {
      const first = await tokensOf(await signIn());
      const second = (await (await refresh(first.refresh_token)).json()) as { refresh_token: string };
      const third = (await (await refresh(second.refresh_token)).json()) as { refresh_token: string };
      const counts = await outcomes(await Promise.all(Array.from({ length: 20 }, () => refresh(first.refresh_token))));
      expect(counts).to.deep.equal({ ok: 0, invalidGrant: 20, other: [] });
      expect((await refresh(third.refresh_token)).status).to.equal(400);
    });
  });
});
