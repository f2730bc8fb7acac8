import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope } from '../helpers/expect.js';
import { CookieJar, createAccount, createClient, openLoginPage, signInToConsole, type ConsoleSession } from '../helpers/oauth.js';

/**
 * The web layer over HTTP (src/surfaces/web/, docs/web.md): the front door, the HTML error
 * boundary beside the API's JSON, one CSRF refusal for every form, the language a person
 * chooses, and the school's name in the shell.
 */
describe('pages: the web layer, one shell, one error boundary, one CSRF refusal', function () {
  this.timeout(120000);
  let t: TestApp;
  let user: ConsoleSession;
  let admin: ConsoleSession;
  let clientId: string;
  const student = { email: 'web-user@gsm.hs.kr', password: 'web user long password' };
  const staff = { email: 'web-admin@gsm.hs.kr', password: 'web admin long password' };

  before(async () => {
    t = await buildTestApp('web_layer');
    await createAccount(t.db, student.email, student.password);
    const adminId = await createAccount(t.db, staff.email, staff.password);
    await t.db.models.accounts.updateOne({ _id: adminId }, { $set: { role: 'ADMIN' } });
    clientId = (await createClient(t.db, { name: '급식 알림' })).client.id;
    user = await signInToConsole(t, student, '/console');
    admin = await signInToConsole(t, staff, '/admin');
  });
  after(() => t?.close());

  /** The hrefs of a page's links. */
  function links(html: string): string[] {
    return [...html.matchAll(/<a [^>]*href="([^"]+)"/g)].map((m) => m[1] ?? '');
  }

  /** The page's heading. */
  function heading(html: string): string {
    return /<h1>([^<]*)<\/h1>/.exec(html)?.[1] ?? '';
  }

  async function page(path: string, init: RequestInit = {}): Promise<{ res: Response; html: string }> {
    const res = await t.request(path, { redirect: 'manual', ...init });
    return { res, html: await res.text() };
  }

  describe('the front door', () => {
    it('/ is a Korean page that links to sign-in, both consoles, the API reference and the health', async () => {
      const { res, html } = await page('/');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(html).to.include('<html lang="ko">');
      expect(heading(html)).to.equal('학교 데이터와 학교 계정 로그인');
      expect(html).to.include('<span class="school">광주소프트웨어마이스터고등학교</span>');
      expect(links(html)).to.include.members(['/web/signin?next=/console', '/console', '/admin', '/docs', '/v1/health', '/?lang=en']);
      expect(html).to.not.include('<style').and.not.include(' style=');
    });

    it('?lang=en is English and is remembered: the next page, without ?lang, is English too', async () => {
      const jar = new CookieJar();
      const english = await t.request('/?lang=en');
      jar.store(english);
      const html = await english.text();
      expect(html).to.include('<html lang="en">');
      expect(heading(html)).to.equal('School data and sign-in with the school');
      expect(html).to.include('<span class="school">Gwangju Software Meister High School</span>');
      expect(jar.setCookieLines.find((line) => line.startsWith('campus_lang='))).to.match(
        /^campus_lang=en; path=\/; expires=.*; samesite=lax; httponly$/,
      );
      const next = await page('/account/signup', { headers: { cookie: jar.header() } });
      expect(next.html).to.include('<html lang="en">');
      expect(heading(next.html)).to.equal('Sign up');
    });

    it('SCHOOL_NAME names the school in the shell and on the login page', async () => {
      const named = await buildTestApp('web_layer_named', {
        db: t.db,
        env: { SCHOOL_NAME: '한빛고등학교', SCHOOL_NAME_EN: 'Hanbit High School' },
      });
      try {
        expect(await (await named.request('/')).text()).to.include('<span class="school">한빛고등학교</span>');
        expect(await (await named.request('/?lang=en')).text()).to.include('<span class="school">Hanbit High School</span>');
      } finally {
        await named.close();
      }
    });

    it('a signed-in person sees their menu: the consoles (the admin one for staff only), the docs, sign-out', async () => {
      const mine = await user.get('/');
      expect(mine.html).to.include(`<span class="visually-hidden">로그인 계정</span> ${student.email}`);
      expect(links(mine.html)).to.include.members(['/console', '/docs']).and.not.include('/admin');
      expect(links((await admin.get('/')).html)).to.include.members(['/console', '/admin', '/docs']);
    });

    it('/favicon.ico is an icon', async () => {
      const res = await t.request('/favicon.ico');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('image/x-icon');
      expect(Buffer.from(await res.arrayBuffer()).subarray(0, 4)).to.deep.equal(Buffer.from([0, 0, 1, 0]));
    });
  });

  describe('unknown paths and refusals are pages; the API stays JSON', () => {
    it('not signed in: /admin/… and /console/… send the browser to sign in; /account/… and others are 404 pages', async () => {
      for (const path of ['/admin/nope', '/console/nope', '/admin/students/99999']) {
        const { res } = await page(path, { headers: { accept: 'text/html' } });
        expect(res.status, path).to.equal(303);
        expect(res.headers.get('location'), path).to.equal(`/web/signin?next=${encodeURIComponent(path)}`);
      }
      for (const path of ['/account/nope', '/nope', '/web/nope']) {
        const { res, html } = await page(path, { headers: { accept: 'text/html' } });
        expect(res.status, path).to.equal(404);
        expect(res.headers.get('content-type'), path).to.equal('text/html; charset=utf-8');
        expect(heading(html), path).to.equal('페이지를 찾을 수 없습니다');
        expect(links(html), path).to.include.members(['/', '/web/signin']);
      }
    });

    it('signed in: unknown pages of both consoles, and a record that is not there, are 404 pages with a way back', async () => {
      for (const [session, path] of [
        [user, '/console/nope'],
        [user, '/console/keys/not-a-key'],
        [admin, '/admin/nope'],
        [admin, '/admin/students/99999'],
        [admin, '/admin/clubs/abc'],
      ] as const) {
        const { res, html } = await session.get(path);
        expect(res.status, path).to.equal(404);
        expect(heading(html), path).to.equal('페이지를 찾을 수 없습니다');
        expect(links(html), path).to.include.members(['/', '/console']);
      }
    });

    it('a USER at /admin gets a 403 page in the shell with the way to the developer console', async () => {
      const { res, html } = await user.get('/admin');
      expect(res.status).to.equal(403);
      expect(heading(html)).to.equal('접근 권한이 없습니다');
      expect(html).to.include(`${student.email} 계정으로는 이 페이지를 볼 수 없습니다. 필요한 역할: 관리자, 최고 관리자.`);
      expect(links(html)).to.include('/console').and.not.include('/admin');
    });

    it('the data API, GraphQL and the OAuth JSON keep their JSON, whatever the client accepts', async () => {
      for (const path of ['/v1/nope', '/v1/students']) {
        const res = await t.request(path, { headers: { accept: 'text/html' } });
        expect(res.headers.get('content-type'), path).to.equal('application/json; charset=utf-8');
      }
      await expectEnvelope(await t.request('/v1/nope', { headers: { accept: 'text/html' } }), 404, 'NOT_FOUND');
      // A script's request for an unknown page (it prefers JSON) gets the envelope.
      await expectEnvelope(await t.request('/nope', { headers: { accept: 'application/json' } }), 404, 'NOT_FOUND');
    });
  });

  it('downloads keep their Korean names (Koa’s ctx.attachment: filename*, RFC 6266)', async () => {
    const { res } = await admin.get('/admin/export/file?entity=STUDENT&format=CSV');
    expect(res.status).to.equal(200);
    const disposition = res.headers.get('content-disposition') ?? '';
    expect(disposition).to.match(/^attachment; filename="\?\?-\d{8}\.csv"; filename\*=UTF-8''%ED%95%99%EC%83%9D-\d{8}\.csv$/);
    const english = await admin.get('/admin/audit/export?format=CSV&lang=en');
    expect(english.res.headers.get('content-disposition')).to.match(/^attachment; filename="audit-log-[\w-]+\.csv"$/);
    // Back to Korean, as the tests below read the pages.
    await admin.get('/?lang=ko');
  });

  describe('one CSRF refusal for every form', () => {
    /** Opens the login page of a fresh authorization; its form's address, and its cookies. */
    async function loginForm(): Promise<{ action: string; jar: CookieJar; csrf: string }> {
      const page = await openLoginPage(t, clientId);
      return { action: new URL(page.action).pathname, jar: page.jar, csrf: page.csrf };
    }

    /** The refusal of a forged post: its status, heading and message. */
    async function refusal(res: Response): Promise<{ status: number; heading: string; alert: string }> {
      const html = await res.text();
      return { status: res.status, heading: heading(html), alert: /<p role="alert">([^<]*)<\/p>/.exec(html)?.[1] ?? '' };
    }

    const REFUSED = {
      status: 403,
      heading: '요청을 확인할 수 없습니다',
      alert: '보안 확인에 실패해 아무것도 바꾸지 않았습니다. 페이지를 새로 고친 뒤 다시 시도하세요.',
    };
    const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
    const urlencoded = { 'content-type': 'application/x-www-form-urlencoded' };

    it('the login form, the sign-up form, a developer-console form and an admin form: no token is the same 403 page', async () => {
      const login = await loginForm();
      const results = [
        await t.request(login.action, {
          method: 'POST',
          headers: { ...urlencoded, cookie: login.jar.header(), origin: t.url },
          body: form({ email: student.email, password: student.password }),
        }),
        await t.request('/account/signup', {
          method: 'POST',
          headers: { ...urlencoded, origin: t.url },
          body: form({ email: 'new@gsm.hs.kr' }),
        }),
        await t.request('/console/keys', {
          method: 'POST',
          headers: { ...urlencoded, cookie: user.jar.header(), origin: t.url },
          body: form({ scopes: 'NEIS_READ' }),
        }),
        await t.request('/admin/students', {
          method: 'POST',
          headers: { ...urlencoded, cookie: admin.jar.header(), origin: t.url },
          body: form({ name: 'x' }),
        }),
      ];
      for (const res of results) expect(await refusal(res)).to.deep.equal(REFUSED);
      expect(await t.db.models.apiKeys.countDocuments({})).to.equal(0);
      expect(await t.db.models.students.countDocuments({ name: 'x' })).to.equal(0);
    });

    it('a valid token from another site (Origin) is the same 403 page; another session’s token too', async () => {
      const login = await loginForm();
      const forged = await t.request(login.action, {
        method: 'POST',
        headers: { ...urlencoded, cookie: login.jar.header(), origin: 'https://evil.example' },
        body: form({ csrf: login.csrf, email: student.email, password: student.password }),
      });
      expect(await refusal(forged)).to.deep.equal(REFUSED);
      const userToken = await user.csrf();
      const crossed = await t.request('/admin/students', {
        method: 'POST',
        headers: { ...urlencoded, cookie: admin.jar.header(), origin: t.url },
        body: form({ csrf: userToken, name: 'x' }),
      });
      expect(await refusal(crossed)).to.deep.equal(REFUSED);
      expect(t.logs.filter((l) => l['event'] === 'web.forged_form').length).to.be.at.least(6);
    });
  });

  describe('the login page in the app’s language', () => {
    /** The login page of an authorization request with `extra` parameters, from a browser holding `cookie`. */
    async function loginPage(extra: Record<string, string>, cookie = ''): Promise<string> {
      return (await openLoginPage(t, clientId, { params: extra, cookie })).html;
    }

    it('ui_locales=en, or lang=en, on the authorization request gives an English login page; a person’s own choice wins', async () => {
      for (const extra of [{ ui_locales: 'en' }, { ui_locales: 'en-US ko' }, { lang: 'en' }] as Record<string, string>[]) {
        const html = await loginPage(extra);
        expect(html, JSON.stringify(extra)).to.include('<html lang="en">');
        expect(heading(html), JSON.stringify(extra)).to.equal('Sign in');
        expect(html).to.include('Sign in with your school account to continue to 급식 알림.');
      }
      expect(heading(await loginPage({}))).to.equal('로그인');
      expect(heading(await loginPage({ ui_locales: 'en' }, 'campus_lang=ko'))).to.equal('로그인');
    });
  });
});
