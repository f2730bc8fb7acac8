import { ApiKeyService } from '../../src/data/keys/store.js';
import { AppService } from '../../src/oauth/apps.js';
import { expect } from 'chai';
import type { Server } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, startCallback, screenshot, signIn, VIEWPORTS } from '../helpers/browser.js';
import { expectOAuthError } from '../helpers/expect.js';
import { buildStudent, insertSchool } from '../helpers/factories.js';
import { createAccount, pkcePair, postJson } from '../helpers/oauth.js';
import { TestMailServer } from '../helpers/smtp.js';

/**
 * Self-service from sign-up on, in headless Chromium against the real app and a real SMTP server:
 * sign up with a mailed code, sign in, create an API key and call /v1/students with it,
 * register an app and run the authorization-code flow with it for a second account, see the app
 * under that account's connected apps, disconnect it and see userinfo refuse the token; reset a
 * password and see the old refresh token refused. Nothing secret may reach the log.
 */
describe('accounts and sign-in: self-service in a browser, from sign-up to connected apps to password reset', function () {
  this.timeout(180000);
  let t: TestApp;
  let mail: TestMailServer;
  let browser: Browser;
  let callbackServer: Server;
  let redirectUri = '';
  const secrets: string[] = [];
  const student = { email: 'newstudent@gsm.hs.kr', password: 'my first school account' };
  const bob = { email: 'bob@gsm.hs.kr', password: 'bob has his own password' };

  before(async () => {
    mail = await TestMailServer.start();
    t = await buildTestApp('self_service_browser', { env: { SMTP_URL: mail.url } });
    await insertSchool(t.db, { students: [buildStudent({ _id: 21, email: student.email, name: '한가람' })] });
    await createAccount(t.db, bob.email, bob.password);
    ({ server: callbackServer, redirectUri } = await startCallback('/cb'));
    browser = await launchChromium();
    secrets.push(student.password, bob.password);
  });
  after(async () => {
    await browser?.close();
    callbackServer?.close();
    await t?.close();
    await mail?.close();
  });

  async function newPage(
    locale = 'ko-KR',
    viewport: { width: number; height: number } = VIEWPORTS.desktop,
  ): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ locale, viewport });
    const page = await context.newPage();
    page.on('pageerror', (err) => {
      throw err;
    });
    return { context, page };
  }

  let studentKey = '';
  let appId = '';
  let appSecret = '';

  it('signs up from the login page with a code read from the SMTP server, then signs in to the developer console', async () => {
    const { context, page } = await newPage('ko-KR', VIEWPORTS.phone);
    await page.goto(`${t.url}/console`);
    expect(page.url()).to.include('/v1/oauth/interaction/');
    await screenshot(page, 'self-login-links-phone-ko');
    await page.getByRole('link', { name: '학교 이메일로 가입하기' }).click();
    await page.waitForURL(/\/account\/signup\?/);
    await screenshot(page, 'self-signup-phone-ko');
    const before = mail.mails.length;
    await page.getByLabel('학교 이메일').fill(student.email);
    await page.getByRole('button', { name: '인증 코드 받기' }).click();
    await page.waitForURL(/\/account\/signup\/verify\?/);
    const code = await mail.nextCode(student.email, before);
    secrets.push(code);
    expect(await page.locator('.flash.ok').textContent()).to.include(student.email);
    // A weak password first: the form comes back with the error at the field, the code still good.
    await page.getByLabel('인증 코드 (8자리 숫자)').fill(code);
    await page.getByLabel('비밀번호', { exact: true }).fill('password123');
    await page.getByRole('button', { name: '계정 만들기' }).click();
    expect(await page.locator('#f-password').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.locator('[role=alert]').textContent()).to.include('너무 흔한 비밀번호입니다');
    await screenshot(page, 'self-signup-verify-error-phone-ko');
    await page.getByLabel('인증 코드 (8자리 숫자)').fill(code);
    await page.getByLabel('비밀번호', { exact: true }).fill(student.password);
    await page.getByRole('button', { name: '계정 만들기' }).click();
    await page.waitForURL(/\/account\/signup\/done/);
    await screenshot(page, 'self-signup-done-phone-ko');
    // Back to the very login page the sign-up started from, and into the console.
    await page.getByRole('link', { name: '로그인하러 가기' }).click();
    await page.getByLabel('이메일').fill(student.email);
    await page.getByLabel('비밀번호').fill(student.password);
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/console'),
      page.getByRole('button', { name: '로그인', exact: true }).click(),
    ]);
    expect(await page.textContent('h1')).to.equal('개발자 콘솔');
    await context.close();
  });

  it('creates an API key (shown once, with a copy button) and calls /v1/students with it', async () => {
    const { context, page } = await newPage();
    await signIn(page, t.url, '/console/keys', student);
    await page.getByLabel('이름 (무엇에 쓰는 키인지)').fill('시간표 앱');
    await page.getByLabel(/STUDENT_READ/).check();
    // A student's STUDENT_READ waits for an admin (scopes by role): the purpose is asked for.
    await page.getByLabel(/사용 목적/).fill('시간표 앱에 반 친구 이름을 보여 주려고');
    await page.getByRole('button', { name: '키 만들기' }).click();
    await page.waitForURL(/\/console\/keys\/[0-9a-f]{24}$/);
    expect(await page.locator('.flash.ok').textContent()).to.include('STUDENT_READ은(는) 관리자의 승인을 기다립니다.');
    studentKey = (await page.locator('#shown-once').textContent()) ?? '';
    secrets.push(studentKey);
    expect(studentKey).to.match(/^[0-9a-f-]{36}$/);
    expect(await page.locator('button[data-copy="shown-once"]').textContent()).to.equal('복사');
    await screenshot(page, 'self-key-created-desktop-ko');
    // Shown once: a reload no longer has it.
    await page.reload();
    expect(await page.locator('#shown-once').count()).to.equal(0);
    expect((await fetch(`${t.url}/v1/students?studentId=21`, { headers: { 'X-API-KEY': studentKey } })).status).to.equal(403);
    await new ApiKeyService(t.db, t.config.policy).decide(studentKey.slice(0, 8), true, null);
    const res = await fetch(`${t.url}/v1/students?studentId=21`, { headers: { 'X-API-KEY': studentKey } });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { data: { students: { name: string }[] } };
    expect(body.data.students.map((s) => s.name)).to.deep.equal(['한가람']);
    await context.close();
  });

  let refreshBeforeReset = '';

  it('registers an app; a second account runs the code flow, finds it under connected apps, disconnects it, and userinfo refuses the token', async () => {
    const owner = await newPage();
    await signIn(owner.page, t.url, '/console/apps/new', student);
    await owner.page.getByLabel('앱 이름').fill('Timetable widget');
    await owner.page.getByLabel('서비스 이름 (로그인 화면에 보임)').fill('GSM 시간표');
    await owner.page.getByRole('textbox', { name: /리디렉션 주소/ }).fill(redirectUri);
    await owner.page.getByRole('radio', { name: /기밀 클라이언트/ }).check();
    await owner.page.getByRole('checkbox', { name: /self:read/ }).check();
    await owner.page.getByRole('button', { name: '등록하기' }).click();
    await owner.page.waitForURL(/\/console\/apps\/[0-9a-f-]{36}$/);
    appSecret = (await owner.page.locator('#shown-once').textContent()) ?? '';
    appId = (await owner.page.locator('#client-id').textContent()) ?? '';
    secrets.push(appSecret);
    expect(appSecret.length).to.be.greaterThan(30);
    // It asks for self:read: in testing until the school approves it (the app registry).
    await new AppService(t.db, { isProduction: false }).approve(appId, { kind: 'CLI' });

    const { context, page } = await newPage();
    const { verifier, challenge } = pkcePair();
    const query = new URLSearchParams({
      client_id: appId,
      redirect_uri: redirectUri,
      response_type: 'code',
      state: 'st',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    await page.goto(`${t.url}/v1/oauth/authorize?${query.toString()}`);
    expect(await page.locator('main').textContent())
      .to.include('GSM 시간표에 계속하려면')
      .and.include('앱: Timetable widget');
    await page.getByLabel('이메일').fill(bob.email);
    await page.getByLabel('비밀번호').fill(bob.password);
    await page.getByRole('button', { name: '로그인', exact: true }).click();
    await page.getByRole('button', { name: '허용' }).click();
    await page.waitForURL((url) => url.href.startsWith(`${redirectUri}?`));
    const code = new URL(page.url()).searchParams.get('code') ?? '';
    const tokens = (await (
      await postJson(t, '/v1/oauth/token', {
        grant_type: 'authorization_code',
        code,
        client_id: appId,
        client_secret: appSecret,
        redirect_uri: redirectUri,
        code_verifier: verifier,
      })
    ).json()) as { access_token: string; refresh_token: string };
    secrets.push(tokens.access_token, tokens.refresh_token);
    const bearer = { authorization: `Bearer ${tokens.access_token}` };
    expect((await t.request('/userinfo', { headers: bearer })).status).to.equal(200);

    // Bob's own console: the school sign-in carries over; the app is there with its access.
    await page.goto(`${t.url}/console/connected`);
    await page.waitForURL((url) => url.pathname === '/console/connected');
    const row = page.locator('tbody tr', { hasText: 'GSM 시간표' });
    expect(await row.textContent())
      .to.include('Timetable widget')
      .and.include('내 학생 정보 읽기');
    await screenshot(page, 'self-connected-desktop-ko');
    await row.getByRole('button', { name: 'GSM 시간표 연결 끊기' }).click();
    expect(await page.locator('.flash.ok').textContent()).to.equal('GSM 시간표 앱의 연결을 끊었습니다.');
    expect(await page.locator('tbody tr', { hasText: 'GSM 시간표' }).count()).to.equal(0);
    await expectOAuthError(await t.request('/userinfo', { headers: bearer }), 401, 'invalid_token');

    // Bob allows it again (for the reset below), keeping that refresh token.
    await page.goto(`${t.url}/v1/oauth/authorize?${query.toString()}`);
    await page.getByRole('button', { name: '허용' }).click();
    await page.waitForURL((url) => url.href.startsWith(`${redirectUri}?`));
    const again = (await (
      await postJson(t, '/v1/oauth/token', {
        grant_type: 'authorization_code',
        code: new URL(page.url()).searchParams.get('code'),
        client_id: appId,
        client_secret: appSecret,
        redirect_uri: redirectUri,
        code_verifier: verifier,
      })
    ).json()) as { refresh_token: string };
    refreshBeforeReset = again.refresh_token;
    secrets.push(refreshBeforeReset);
    await context.close();
    await owner.context.close();
  });

  it('resets a password from the login page; the old refresh token is refused', async () => {
    const { context, page } = await newPage('en-US', VIEWPORTS.phone);
    await page.goto(`${t.url}/console?lang=en`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.waitForURL(/\/account\/password-reset\?/);
    await screenshot(page, 'self-reset-phone-en');
    const before = mail.mails.length;
    await page.getByLabel('Email').fill(bob.email);
    await page.getByRole('button', { name: 'Send me a code' }).click();
    await page.waitForURL(/\/account\/password-reset\/verify/);
    const code = await mail.nextCode(bob.email, before);
    const newPassword = 'he chose a better one';
    secrets.push(code, newPassword);
    await page.getByLabel('Code (8 digits)').fill(code);
    await page.getByLabel('New password').fill(newPassword);
    await screenshot(page, 'self-reset-verify-phone-en');
    await page.getByRole('button', { name: 'Change the password' }).click();
    await page.waitForURL(/\/account\/password-reset\/done/);
    await screenshot(page, 'self-reset-done-phone-en');
    await expectOAuthError(
      await postJson(t, '/v1/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: refreshBeforeReset,
        client_id: appId,
        client_secret: appSecret,
      }),
      400,
      'invalid_grant',
    );
    // The new password signs in.
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('Email').fill(bob.email);
    await page.getByLabel('Password').fill(newPassword);
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/console'),
      page.getByRole('button', { name: 'Sign in', exact: true }).click(),
    ]);
    await context.close();
  });

  it('no code, password, key, secret or token of the flow appears in any log line', () => {
    expect(secrets.length).to.be.greaterThan(8);
    const log = t.logText();
    for (const secret of secrets) expect(log.includes(secret), `a secret (${secret.slice(0, 4)}…) is in the log`).to.equal(false);
  });
});
