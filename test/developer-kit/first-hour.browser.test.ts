import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { VIEWPORTS, closeBrowserWorld, openBrowserWorld, screenshot, signIn } from '../helpers/browser.js';

/**
 * The console's first-hour snippets in Chromium, as a person sees them right after making a key
 * and registering an app: in Korean and English, at phone and desktop width, nothing wider than
 * the screen, the copy buttons there. Screenshotted (.data/screenshots/, or SCREENSHOTS_DIR).
 */
describe("developer kit: the developer's first hour in the console (browser)", function () {
  this.timeout(180000);
  let t: TestApp;
  let browser: Browser;
  const person = { email: 'builder@gsm.hs.kr', password: 'builds things at night' };

  before(async () => ({ t, browser } = await openBrowserWorld('first_hour_browser', person)));
  after(() => closeBrowserWorld({ t, browser }));

  async function fits(page: Page, width: number): Promise<void> {
    const wide = await page.evaluate(
      `[...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > ${width} + 0.5).slice(0, 5).map((e) => e.tagName + "." + e.className + "#" + e.id)`,
    );
    expect(Number(await page.evaluate('document.documentElement.scrollWidth')), JSON.stringify(wide)).to.be.at.most(width);
  }

  for (const lang of ['ko', 'en'] as const) {
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      it(`after a key and after an app: the snippets with copy buttons (${lang}, ${name})`, async () => {
        const context = await browser.newContext({ viewport, locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
        try {
          const page = await context.newPage();
          await signIn(page, t.url, `/console/keys?lang=${lang}`, person);
          await page.fill('#f-label', `meals ${lang} ${name}`);
          await page.check('input[name=scopes][value=NEIS_READ]');
          await page.getByRole('button', { name: lang === 'ko' ? '키 만들기' : 'Create the key' }).click();
          await page.waitForSelector('.snippet');
          expect(await page.locator('.snippet-label').allTextContents()).to.deep.equal(
            lang === 'ko'
              ? ['이 키로 바로 불러 보기 (curl)', 'TypeScript 클라이언트로 (@campus/client)']
              : ['Try it now with this key (curl)', 'With the TypeScript client (@campus/client)'],
          );
          const key = (await page.textContent('#shown-once')) ?? '';
          expect(await page.textContent('#snippet-0')).to.include(`X-API-KEY: ${key}`);
          expect(await page.locator('.snippet button[data-copy]').count()).to.equal(2);
          await fits(page, viewport.width);
          await screenshot(page, `console-key-snippets-${name}-${lang}`);

          await page.goto(`${t.url}/console/apps/new?lang=${lang}`);
          await page.fill('#f-name', `First app ${lang} ${name}`);
          await page.fill('#f-redirectUris', 'http://127.0.0.1:3000/callback');
          await page.getByRole('button', { name: lang === 'ko' ? '등록하기' : 'Register' }).click();
          await page.waitForSelector('.snippet');
          expect(await page.textContent('#snippet-0')).to.equal(`${t.url}/.well-known/openid-configuration`);
          expect(await page.textContent('#snippet-2'))
            .to.include('CLIENT_SECRET=')
            .and.include('PORT=3000 npm start');
          await fits(page, viewport.width);
          await screenshot(page, `console-app-snippets-${name}-${lang}`);
        } finally {
          await context.close();
        }
      });
    }
  }
});
