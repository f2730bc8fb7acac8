import { expect } from 'chai';
import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, screenshot, signIn, VIEWPORTS } from '../helpers/browser.js';
import { AccountService } from '../../src/oauth/accounts.js';

/**
 * Two-step sign-in in a real Chromium, at 390 px and 1280 px, Korean and English: enrolment in
 * /console/account (key, code, recovery codes), the login's second step, the recovery-code page,
 * and the admin console opening only after it (ADMIN_MFA=required). Screenshots of each page.
 */

const ADMIN = { email: 'two-step-admin@school.test', password: 'an admin pass phrase' };

describe('accounts and sign-in: two-step sign-in in a browser (enrol, second step, recovery), phone and desktop', function () {
  this.timeout(180000);
  let t: TestApp;
  let browser: Browser;
  let offsetMs = 0;
  const now = () => new Date(Date.now() + offsetMs);
  const codeFor = (secret: string) => generate({ secret, epoch: Math.floor(now().getTime() / 1000) });

  before(async () => {
    t = await buildTestApp('browser_two_step', { env: { ADMIN_MFA: 'required' }, now });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function noSideways(page: Page): Promise<void> {
    const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    expect(width, 'the page scrolls sideways').to.be.at.most(page.viewportSize()?.width ?? 0);
  }

  for (const [lang, viewport] of [
    ['ko', 'phone'],
    ['en', 'desktop'],
    ['ko', 'desktop'],
    ['en', 'phone'],
  ] as const) {
    it(`${lang}, ${viewport}: enrol, then sign in with the app's code and with a recovery code; /admin opens`, async () => {
      const email = `${lang}-${viewport}-${ADMIN.email}`;
      await new AccountService(t.db).create({ email, password: ADMIN.password, role: 'ADMIN' });
      const context = await browser.newContext({ viewport: VIEWPORTS[viewport], locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
      const page = await context.newPage();
      const name = (what: string) => `two-step-${what}-${viewport}-${lang}`;
      try {
        // Without a second factor the admin console sends the admin to set one up.
        await signIn(page, t.url, `/admin?lang=${lang}`, { email, password: ADMIN.password });
        expect(await page.locator('[role=alert]').innerText()).to.equal(
          lang === 'ko'
            ? '관리자 콘솔을 열려면 2단계 인증이 필요합니다. 내 계정에서 설정한 뒤 다시 로그인하세요.'
            : 'The admin console needs two-step sign-in. Set it up in My account, then sign in again.',
        );
        await page.click('a[href="/console/account"].button');
        await page.fill('#f-mfaPassword', ADMIN.password);
        await page.click('form[action="/console/account/second-factor"] button');
        await page.waitForURL('**/console/account/second-factor');
        const secret = (await page.locator('code.secret').innerText()).replace(/\s/g, '');
        expect(secret).to.match(/^[A-Z2-7]{26,}$/);
        await noSideways(page);
        await screenshot(page, name('enrol'));
        // A wrong code first: the error at the field.
        await page.fill('#f-code', '000000');
        await page.click('button.primary');
        expect(await page.locator('#f-code-error').innerText()).to.include(
          lang === 'ko' ? '코드가 맞지 않습니다' : 'That code does not match',
        );
        await screenshot(page, name('enrol-wrong'));
        await page.fill('#f-code', await codeFor(secret));
        await page.click('button.primary');
        const codes = await page.locator('ul.recovery-codes code').allInnerTexts();
        expect(codes).to.have.length(10);
        await noSideways(page);
        await screenshot(page, name('recovery-codes'));

        // A new browser: password, then the app's code.
        const second = await browser.newContext({ viewport: VIEWPORTS[viewport], locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
        const next = await second.newPage();
        offsetMs += 30_000;
        await next.goto(`${t.url}/admin?lang=${lang}`);
        await next.fill('#f-email', email);
        await next.fill('#f-password', ADMIN.password);
        await next.click('button.primary');
        await next.waitForSelector('#f-code');
        expect(await next.locator('h1').innerText()).to.equal(lang === 'ko' ? '2단계 인증' : 'Two-step sign-in');
        expect(await next.locator('#f-code').getAttribute('autocomplete')).to.equal('one-time-code');
        await noSideways(next);
        await screenshot(next, name('sign-in'));
        await next.fill('#f-code', await codeFor(secret));
        await Promise.all([next.waitForURL((url) => url.pathname === '/admin'), next.click('button.primary')]);
        expect(await next.locator('h1').innerText()).to.include(lang === 'ko' ? '관리' : 'Admin');
        await second.close();

        // A third browser: the recovery page.
        const third = await browser.newContext({ viewport: VIEWPORTS[viewport], locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
        const lost = await third.newPage();
        await lost.goto(`${t.url}/admin?lang=${lang}`);
        await lost.fill('#f-email', email);
        await lost.fill('#f-password', ADMIN.password);
        await lost.click('button.primary');
        await lost.waitForSelector('#f-code');
        await lost.click('a[href$="second-factor?recovery=1"]');
        await lost.waitForURL('**/second-factor?recovery=1');
        expect(await lost.locator('h1').innerText()).to.equal(lang === 'ko' ? '복구 코드로 로그인' : 'Sign in with a recovery code');
        await noSideways(lost);
        await screenshot(lost, name('recovery'));
        await lost.fill('#f-code', codes[0] ?? '');
        await Promise.all([lost.waitForURL((url) => url.pathname === '/admin'), lost.click('button.primary')]);
        await third.close();

        // My account shows it on, with the recovery codes left.
        await page.goto(`${t.url}/console/account?lang=${lang}`);
        expect(await page.locator('#second-factor ~ p[role=status]').innerText()).to.equal(
          lang === 'ko' ? '켜져 있습니다. 남은 복구 코드: 9개.' : 'On. 9 recovery codes left.',
        );
        await screenshot(page, name('account-on'));
      } finally {
        await context.close();
      }
    });
  }
});
