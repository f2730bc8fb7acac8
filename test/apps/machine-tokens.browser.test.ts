import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { AccountStore } from '../../src/data/accounts/store.js';
import type { AccountRole } from '../../src/data/__generated__/enums.js';
import { hashPassword } from '../../src/oauth/secrets.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, screenshot, signIn, VIEWPORTS, wcagViolations } from '../helpers/browser.js';
import { buildClub, insertSchool } from '../helpers/factories.js';

/**
 * A student registers an app of machine tokens in Chromium at phone width, as the console's form
 * reads without JavaScript: the grant, the data scopes with what the role gives, the purpose;
 * the app's page (its scopes' states, the token request, the usage chart) and /admin/apps with the
 * data scopes that wait, in Korean and English, at phone and desktop width, checked by axe-core.
 */

const STUDENT = { email: 'browser.machine@school.test', password: 'browser machine passphrase' };
const ADMIN = { email: 'browser.admin@school.test', password: 'browser admin passphrase!' };

describe('OAuth apps: machine tokens in the console, in Chromium', function () {
  this.timeout(180000);
  let t: TestApp;
  let browser: Browser;

  before(async () => {
    [t, browser] = await Promise.all([buildTestApp('machine_tokens_browser'), launchChromium()]);
    await insertSchool(t.db, { clubs: [buildClub({ _id: 10, name: 'Robotics', type: 'MAJOR_CLUB' })] });
    const accounts = new AccountStore(t.db);
    const account = async (user: { email: string; password: string }, role: AccountRole) =>
      accounts.create({ email: user.email, passwordHash: await hashPassword(user.password), role });
    await account(STUDENT, 'USER');
    await account(ADMIN, 'ADMIN');
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** The page as shown at every width and language: no sideways scrolling, WCAG 2.2 AA, a screenshot of each. */
  async function lookEverywhere(page: Page, path: string, name: string): Promise<void> {
    for (const lang of ['ko', 'en'] as const) {
      for (const [width, viewport] of Object.entries(VIEWPORTS)) {
        await page.setViewportSize(viewport);
        await page.goto(`${t.url}${path}${path.includes('?') ? '&' : '?'}lang=${lang}`);
        expect(await page.getAttribute('html', 'lang')).to.equal(lang);
        expect(Number(await page.evaluate('document.documentElement.scrollWidth')), `${path} ${lang} ${width}`).to.be.at.most(
          viewport.width,
        );
        expect(await wcagViolations(page), `${path} ${lang} ${width}: axe-core`).to.deep.equal([]);
        await screenshot(page, `${name}-${lang}-${width}`);
      }
    }
  }

  it('registers a machine app at phone width; its page and /admin/apps read in both languages and widths', async () => {
    const context = await browser.newContext({ locale: 'ko-KR', viewport: VIEWPORTS.phone });
    const page = await context.newPage();
    await signIn(page, t.url, '/console/apps/new', STUDENT);
    await lookEverywhere(page, '/console/apps/new', 'machine-app-new');
    await page.setViewportSize(VIEWPORTS.phone);
    await page.goto(`${t.url}/console/apps/new?lang=ko`);
    await page.getByLabel('앱 이름').fill('동아리 출석부 동기화');
    await page.getByLabel(/브라우저 로그인/).uncheck();
    await page.getByLabel(/앱 서버의 머신 토큰/).check();
    await page.getByLabel(/CLUB_READ/).check();
    await page.getByLabel(/STUDENT_READ/).check();
    await page.getByLabel('데이터를 쓰는 목적').fill('출석부에 학번을 보여 주려고');
    await Promise.all([page.waitForURL(/\/console\/apps\/[0-9a-f-]{36}$/), page.getByRole('button', { name: '등록하기' }).click()]);
    const secret = (await page.textContent('#shown-once'))?.trim() ?? '';
    expect(secret).to.match(/^[A-Za-z0-9_-]{43}$/);
    await screenshot(page, 'machine-app-registered-ko-phone');
    expect(await page.textContent('#machine-tokens')).to.equal('머신 토큰');
    const tags = await page.locator('section[aria-labelledby="machine-tokens"] [data-scope-state]').allTextContents();
    expect(tags.map((tag) => tag.trim())).to.deep.equal(['CLUB_READ', 'STUDENT_READ · 승인 대기']);
    const path = new URL(page.url()).pathname;
    await lookEverywhere(page, path, 'machine-app-detail');
    await context.close();

    const adminContext = await browser.newContext({ locale: 'ko-KR', viewport: VIEWPORTS.desktop });
    const adminPage = await adminContext.newPage();
    await signIn(adminPage, t.url, '/admin/apps', ADMIN);
    expect(await adminPage.getByText('머신 토큰의 데이터 권한 승인을 기다리는 앱이 1개 있습니다.').count()).to.equal(1);
    await lookEverywhere(adminPage, '/admin/apps', 'machine-admin-apps');
    await adminPage.goto(`${t.url}/admin/apps?lang=ko`);
    await adminPage.getByRole('button', { name: '동아리 출석부 동기화 승인' }).click();
    await adminPage.waitForURL(/\/admin\/apps/);
    expect(await adminPage.getByText('동아리 출석부 동기화 앱을 승인했습니다').count()).to.equal(1);
    await adminContext.close();
  });
});
