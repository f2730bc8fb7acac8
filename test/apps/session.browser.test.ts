import { expect } from 'chai';
import type { Server } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, startCallback } from '../helpers/browser.js';
import { buildStudent, insertSchool } from '../helpers/factories.js';
import { createAccount, createClient, pkcePair } from '../helpers/oauth.js';

/**
 * The login session in headless Chromium: its cookie ends with the browser unless "keep me
 * signed in" is ticked (then at most 14 days), and "not you? sign out" on the consent page ends
 * it through the end_session_endpoint, after which the browser must sign in again.
 */

const USER = { email: 'han@school.test', password: 'han browser pw' };
const FOURTEEN_DAYS = 14 * 24 * 3600;

describe('OAuth apps: the login session and logout in a browser', function () {
  this.timeout(60000);
  let t: TestApp;
  let browser: Browser;
  let callbackServer: Server;
  let redirectUri: string;
  let clientId: string;

  before(async () => {
    t = await buildTestApp('oauth_session_browser');
    ({ server: callbackServer, redirectUri } = await startCallback());
    await insertSchool(t.db, { students: [buildStudent({ _id: 12, email: USER.email, name: '한서아' })] });
    await createAccount(t.db, USER.email, USER.password);
    clientId = (await createClient(t.db, { name: '동아리 출석부', redirectUris: [redirectUri] })).client.id;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    callbackServer.close();
    await t.close();
  });

  function authorizeUrl(): string {
    const params = new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      state: 'b',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    });
    return `${t.url}/v1/oauth/authorize?${params}`;
  }

  async function signIn(page: Page, remember: boolean): Promise<void> {
    await page.goto(authorizeUrl());
    await page.getByLabel('이메일').fill(USER.email);
    await page.getByLabel('비밀번호').fill(USER.password);
    if (remember) await page.getByLabel('로그인 상태 유지 (최대 14일)').check();
    await page.getByRole('button', { name: '로그인', exact: true }).click();
    await page.waitForSelector('h1:has-text("권한 요청")');
  }

  async function sessionCookie(context: BrowserContext) {
    const cookie = (await context.cookies(t.url)).find((c) => c.name === 'campus_session');
    expect(cookie, 'the session cookie').to.not.equal(undefined);
    return cookie;
  }

  it('without "keep me signed in" the session cookie ends with the browser', async () => {
    const context = await browser.newContext({ locale: 'ko-KR' });
    try {
      const page = await context.newPage();
      await page.goto(authorizeUrl());
      // Unticked by default.
      expect(await page.getByLabel('로그인 상태 유지 (최대 14일)').isChecked()).to.equal(false);
      await signIn(page, false);
      const cookie = await sessionCookie(context);
      // -1: a browser-session cookie, gone when the browser closes.
      expect(cookie?.expires).to.equal(-1);
      expect(cookie?.httpOnly).to.equal(true);
      expect(cookie?.sameSite).to.equal('Lax');
    } finally {
      await context.close();
    }
  });

  it('with "keep me signed in" it lasts at most 14 days, and survives a new page', async () => {
    const context = await browser.newContext({ locale: 'ko-KR' });
    try {
      const page = await context.newPage();
      await signIn(page, true);
      const cookie = await sessionCookie(context);
      const lifetime = (cookie?.expires ?? 0) - Date.now() / 1000;
      expect(lifetime).to.be.within(FOURTEEN_DAYS - 120, FOURTEEN_DAYS);
      // Signed in: a new authorization goes straight to consent, no login form.
      const again = await context.newPage();
      await again.goto(authorizeUrl());
      await again.waitForSelector('h1:has-text("권한 요청")');
    } finally {
      await context.close();
    }
  });

  it('"not you? sign out" on the consent page ends the session; the next authorization asks to sign in again', async () => {
    const context = await browser.newContext({ locale: 'ko-KR' });
    const consoleErrors: string[] = [];
    try {
      const page = await context.newPage();
      page.on('console', (message) => {
        if (message.type() === 'error') consoleErrors.push(message.text());
      });
      await signIn(page, true);
      expect(await page.textContent('main')).to.include(`${USER.email} 계정이 아닌가요?`);
      await page.getByRole('link', { name: '로그아웃' }).click();
      await page.waitForSelector('h1:has-text("로그아웃")');
      expect(await page.title()).to.equal('로그아웃 · 광주소프트웨어마이스터고등학교');
      expect(await page.textContent('main')).to.include(`${USER.email} 계정에서 로그아웃할까요?`);
      await page.getByRole('button', { name: '로그아웃' }).click();
      await page.waitForSelector('h1:has-text("로그아웃되었습니다")');
      expect(new URL(page.url()).pathname).to.equal('/v1/oauth/logout/success');
      expect(consoleErrors, 'no CSP or other console errors on our pages').to.deep.equal([]);

      expect((await context.cookies(t.url)).find((c) => c.name === 'campus_session')).to.equal(undefined);
      await page.goto(authorizeUrl());
      await page.waitForSelector('h1:has-text("로그인")');
      expect(await page.getByLabel('비밀번호').count()).to.equal(1);
    } finally {
      await context.close();
    }
  });
});
