import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildStudent, insertSchool } from '../helpers/factories.js';
import { alertText, createAccount, createClient, loginAttempts, openLoginPage, postForm } from '../helpers/oauth.js';

/** The login and consent pages: language, accessibility basics, CSRF, clickjacking, throttling per account and address. */

const USER = { email: 'park@school.test', password: 'park password 1' };

describe('OAuth apps: the login and consent pages', () => {
  let t: TestApp;
  let clientId: string;

  before(async () => {
    t = await buildTestApp('oauth_login');
    await insertSchool(t.db, { students: [buildStudent({ _id: 3, email: USER.email })] });
    await createAccount(t.db, USER.email, USER.password);
    clientId = (await createClient(t.db, { name: '동아리 출석부' })).client.id;
  });
  after(() => t.close());

  it('is Korean first, with labelled fields, and refuses to be framed', async () => {
    const page = await openLoginPage(t, clientId);
    expect(page.res.status).to.equal(200);
    expect(page.res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(page.html).to.include('<html lang="ko">');
    expect(page.html).to.include('<label for="f-email">이메일</label> <span class="req" aria-hidden="true">*</span>');
    expect(page.html).to.include('<label for="f-password">비밀번호</label> <span class="req" aria-hidden="true">*</span>');
    expect(page.html).to.match(
      /<input\s+id="f-email"\s+name="email"\s+type="email"\s+value=""\s+autocomplete="username"[^>]*\sautofocus required\s*\/>/,
    );
    expect(page.html).to.include('동아리 출석부');
    // The shell: the school's name and the language switch.
    expect(page.html).to.include('<span class="school">광주소프트웨어마이스터고등학교</span>');
    expect(page.html).to.include('lang="en" hreflang="en">English</a>');
    expect(page.html).to.not.include('<script');
    expect(page.html).to.not.include('<style');
    expect(page.res.headers.get('x-frame-options')).to.equal('DENY');
    expect(page.res.headers.get('content-security-policy')).to.match(/frame-ancestors 'none'/);
    expect(page.res.headers.get('content-security-policy')).to.match(/default-src 'none'/);
    // Only our own scripts, which this page does not load here: passkeys need a domain name, and this test app is at 127.0.0.1.
    expect(page.res.headers.get('content-security-policy')).to.match(/script-src 'self'; connect-src 'self';/);
    expect(page.res.headers.get('cache-control')).to.equal('no-store');
    expect(page.res.headers.get('referrer-policy')).to.equal('same-origin');
  });

  it('is English with ?lang=en or when the browser prefers English', async () => {
    const byQuery = await openLoginPage(t, clientId, { query: '?lang=en' });
    expect(byQuery.html).to.include('<html lang="en">');
    expect(byQuery.html).to.include('<label for="f-email">Email</label> <span class="req" aria-hidden="true">*</span>');
    expect(byQuery.html).to.include('lang="ko" hreflang="ko">한국어</a>');
    const byHeader = await openLoginPage(t, clientId, { headers: { 'accept-language': 'en-US,en;q=0.9,ko;q=0.5' } });
    expect(byHeader.html).to.include('<html lang="en">');
    const korean = await openLoginPage(t, clientId, { headers: { 'accept-language': 'ko-KR,ko;q=0.9,en;q=0.8' } });
    expect(korean.html).to.include('<html lang="ko">');
  });

  it('an unknown email reads exactly like a wrong password', async () => {
    const page = await openLoginPage(t, clientId);
    const wrong = await postForm(page, { csrf: page.csrf, email: USER.email, password: 'wrong password' }, { origin: t.url });
    const unknown = await postForm(page, { csrf: page.csrf, email: 'nobody@school.test', password: 'wrong password' }, { origin: t.url });
    expect(wrong.status).to.equal(401);
    expect(unknown.status).to.equal(401);
    const [a, b] = [await wrong.text(), await unknown.text()];
    expect(alertText(a)).to.equal('이메일 또는 비밀번호가 올바르지 않습니다.');
    expect(alertText(b)).to.equal(alertText(a));
    expect(a.replace(USER.email, 'EMAIL')).to.equal(b.replace('nobody@school.test', 'EMAIL'));
  });

  it('an empty field is 400 with a message, focus on the form', async () => {
    const page = await openLoginPage(t, clientId, { query: '?lang=en' });
    const res = await postForm(page, { csrf: page.csrf, email: USER.email, password: '', lang: 'en' }, { origin: t.url });
    expect(res.status).to.equal(400);
    const html = await res.text();
    expect(alertText(html)).to.equal('Enter both your email and your password.');
    expect(html).to.match(/id="f-password"[^>]*aria-invalid="true" aria-describedby="f-password-error"/);
    expect(html).to.include('<p class="field-error" id="f-password-error">Enter both your email and your password.</p>');
    // The summary takes the focus (it comes first, with autofocus).
    expect(html).to.include('<div class="error-summary" role="alert" tabindex="-1" id="error-summary" autofocus>');
  });

  it("CSRF: a post without the form token, with another interaction's token, or from another origin is refused", async () => {
    const page = await openLoginPage(t, clientId);
    const other = await openLoginPage(t, clientId);
    const creds = { email: USER.email, password: USER.password };
    expect((await postForm(page, creds, { origin: t.url })).status).to.equal(403);
    expect((await postForm(page, { ...creds, csrf: other.csrf }, { origin: t.url })).status).to.equal(403);
    const crossSite = await postForm(page, { ...creds, csrf: page.csrf }, { origin: 'https://evil.example' });
    expect(crossSite.status).to.equal(403);
    expect(await crossSite.text()).to.include('요청을 확인할 수 없습니다');
    // The legitimate post still works afterwards.
    const ok = await postForm(page, { ...creds, csrf: page.csrf }, { origin: t.url });
    expect(ok.status).to.equal(303);
  });

  it('without the interaction cookie the page says the sign-in session expired (400)', async () => {
    const page = await openLoginPage(t, clientId);
    const res = await fetch(page.url);
    expect(res.status).to.equal(400);
    expect(await res.text()).to.include('로그인 세션을 찾을 수 없습니다');
  });

  it('cancel sends the user back to the client with access_denied and the state', async () => {
    const page = await openLoginPage(t, clientId);
    const abort = page.action.replace(/\/login$/, '/abort');
    const res = await postForm(page, { csrf: page.csrf }, { origin: t.url }, abort);
    expect(res.status).to.equal(303);
    const resume = await fetch(new URL(res.headers.get('location') ?? '', t.url), {
      redirect: 'manual',
      headers: { cookie: page.jar.header() },
    });
    const location = new URL(resume.headers.get('location') ?? '');
    expect(location.searchParams.get('error')).to.equal('access_denied');
    expect(location.searchParams.get('state')).to.equal('st-1');
  });

  it('consent lists the requested scopes in words; Deny returns access_denied', async () => {
    const page = await openLoginPage(t, clientId);
    const login = await postForm(page, { csrf: page.csrf, email: USER.email, password: USER.password }, { origin: t.url });
    expect(login.status).to.equal(303);
    const resume = await fetch(new URL(login.headers.get('location') ?? '', t.url), {
      redirect: 'manual',
      headers: { cookie: page.jar.header() },
    });
    page.jar.store(resume);
    const consentUrl = new URL(resume.headers.get('location') ?? '', t.url);
    expect(consentUrl.pathname).to.match(/^\/v1\/oauth\/interaction\//);

    const html = await (await fetch(consentUrl, { headers: { cookie: page.jar.header() } })).text();
    expect(html).to.include('<h1>권한 요청</h1>');
    expect(html)
      .to.include('내 학생 정보 읽기 (계정과 학생 기록)')
      .and.include('학생 기록: 기숙사 호실')
      .and.include('학교가 운영하는 앱입니다.');
    expect(html).to.include(`${USER.email} 계정`);
    const en = await (await fetch(`${consentUrl.href}?lang=en`, { headers: { cookie: page.jar.header() } })).text();
    expect(en).to.include('Read your own student record');

    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const deny = await postForm({ ...page, action: `${consentUrl.href}/confirm` }, { csrf, decision: 'deny' }, { origin: t.url });
    expect(deny.status).to.equal(303);
    const back = await fetch(new URL(deny.headers.get('location') ?? '', t.url), {
      redirect: 'manual',
      headers: { cookie: page.jar.header() },
    });
    const location = new URL(back.headers.get('location') ?? '');
    expect(location.searchParams.get('error')).to.equal('access_denied');
    expect(location.searchParams.get('state')).to.equal('st-1');
  });

  it('login throttling per account and address: after 5 failures from an address its attempts on the account are answered as wrong there, unchecked', async () => {
    const victim = { email: 'throttled@school.test', password: 'the right password' };
    await createAccount(t.db, victim.email, victim.password);
    const page = await openLoginPage(t, clientId);
    for (let i = 0; i < 5; i++) {
      const res = await postForm(page, { csrf: page.csrf, email: victim.email, password: `guess ${i}` }, { origin: t.url });
      expect(res.status).to.equal(401);
    }
    const before = await loginAttempts(t);
    // Past the budget the address learns nothing: a wrong and a right password read the same, and neither is checked.
    const wrong = await postForm(page, { csrf: page.csrf, email: victim.email.toUpperCase(), password: 'guess 5' }, { origin: t.url });
    const right = await postForm(
      page,
      { csrf: page.csrf, email: victim.email.toUpperCase(), password: victim.password },
      { origin: t.url },
    );
    expect([wrong.status, right.status]).to.deep.equal([401, 401]);
    expect(alertText(await wrong.text())).to.equal(alertText(await right.text()));
    expect(await loginAttempts(t)).to.deep.include({ failed: before.failed, succeeded: before.succeeded, unchecked: before.unchecked + 2 });
    // Another account from the same address (a classmate behind the school's address) is not affected.
    const fine = await postForm(page, { csrf: page.csrf, email: USER.email, password: USER.password }, { origin: t.url });
    expect(fine.status).to.equal(303);
  });

  it('login throttling holds against parallel guesses: of 12 at once, 5 are checked and the other 7 answered the same, unchecked', async () => {
    const victim = { email: 'parallel@school.test', password: 'the right password' };
    await createAccount(t.db, victim.email, victim.password);
    const page = await openLoginPage(t, clientId);
    const before = await loginAttempts(t);
    const statuses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        postForm(page, { csrf: page.csrf, email: victim.email, password: `guess ${i}` }, { origin: t.url }).then((r) => r.status),
      ),
    );
    expect(statuses).to.deep.equal(Array<number>(12).fill(401));
    const after = await loginAttempts(t);
    expect([after.failed - before.failed, after.unchecked - before.unchecked]).to.deep.equal([5, 7]);
  });
});
