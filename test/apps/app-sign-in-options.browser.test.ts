import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { LogoutNotices } from '../../src/oauth/backchannel-logout.js';
import type { TestApp } from '../helpers/app.js';
import { VIEWPORTS, closeBrowserWorld, openBrowserWorld, screenshot, signIn, wcagViolations } from '../helpers/browser.js';

/**
 * The developer console's app form with the ways of signing in (browser, device) and the
 * back-channel logout address, and the app's page listing the logout tokens sent, in Chromium: in
 * Korean and English, at phone and desktop width, nothing wider than the screen, axe-core's WCAG
 * 2.2 AA rules. Screenshotted with `npm run screenshots`.
 */
describe('OAuth apps: device sign-in and back-channel logout in the console (browser)', function () {
  this.timeout(180_000);
  let t: TestApp;
  let browser: Browser;
  const person = { email: 'screen.maker@gsm.hs.kr', password: 'makes screens for lunch' };

  before(async () => ({ t, browser } = await openBrowserWorld('app_sign_in_options_browser', person)));
  after(() => closeBrowserWorld({ t, browser }));

  for (const lang of ['ko', 'en'] as const) {
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      it(`register a device app with a logout address; its page lists the tokens sent (${lang}, ${name})`, async () => {
        const context = await browser.newContext({ viewport, locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
        try {
          const page = await context.newPage();
          await signIn(page, t.url, `/console/apps/new?lang=${lang}`, person);
          await page.fill('#f-name', `Screen ${lang} ${name}`);
          await page.uncheck('input[name=grants][value=authorization_code]');
          await page.check('input[name=grants][value=device]');
          await page.check('input[name=type][value=public]');
          await page.check('input[name=scopes][value=openid]');
          await page.fill('#f-backchannelLogoutUri', 'https://screen.example/backchannel-logout');
          expect(await wcagViolations(page)).to.deep.equal([]);
          await screenshot(page, `console-app-form-${name}-${lang}`);
          await screenshot(page, `console-app-form-grants-${name}-${lang}`, page.locator('fieldset').first());
          await page.getByRole('button', { name: lang === 'ko' ? '등록하기' : 'Register' }).click();
          await page.waitForURL((url) => /\/console\/apps\/[0-9a-f-]{36}$/.test(url.pathname));
          const id = new URL(page.url()).pathname.split('/').pop() ?? '';
          await new LogoutNotices(t.db).tell([{ clientId: id, sub: '7', sid: 'Xq3vB0sf7d1TqEr4' }], 'signed_out');
          await page.reload();
          const section = page.locator('section[aria-labelledby="logouts"]');
          expect(await section.locator('h2').textContent()).to.equal(lang === 'ko' ? '백채널 로그아웃' : 'Back-channel logout');
          expect(await section.locator('tbody tr').count()).to.equal(1);
          expect(await page.locator('input[name=grants][value=device]').isChecked()).to.equal(true);
          expect(await wcagViolations(page)).to.deep.equal([]);
          expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).to.be.at.most(viewport.width);
          await screenshot(page, `console-app-logouts-${name}-${lang}`);
          await screenshot(page, `console-app-logouts-section-${name}-${lang}`, section);
        } finally {
          await context.close();
        }
      });
    }
  }
});
