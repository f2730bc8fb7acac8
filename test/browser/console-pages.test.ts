import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, screenshot, signIn, VIEWPORTS } from '../helpers/browser.js';
import { authorize, createAccount } from '../helpers/oauth.js';
import { addDays, todayIn } from '../../src/calendar.js';
import { ApiKeyService } from '../../src/data/api-keys.js';
import { ClientService } from '../../src/oauth/clients.js';

/** What the label check reads of a form control in the page. */
interface Labelled {
  labels: { length: number } | null;
  name: string;
  id: string;
  getAttribute(name: string): string | null;
}

/**
 * Every page of the developer console, the admin console's account and key pages, and the
 * sign-up and reset pages, at phone and desktop width, in Korean and English: each is
 * screenshotted (.data/screenshots/), has a label for every control, a skip link first in the
 * tab order, and no page-wide horizontal scrolling on a phone (tables scroll in their own box).
 */
describe('console pages: look, labels, phone width, both languages', function () {
  this.timeout(240000);
  let t: TestApp;
  let browser: Browser;
  const dev = { email: 'dev@gsm.hs.kr', password: 'dev writes apps all day' };
  const admin = { email: 'admin@gsm.hs.kr', password: 'admin reads the logs' };
  let keyId = '';
  let appId = '';

  before(async () => {
    t = await buildTestApp('console_pages');
    const devId = await createAccount(t.db, dev.email, dev.password);
    const adminId = await createAccount(t.db, admin.email, admin.password);
    await t.db.models.accounts.updateOne({ _id: adminId }, { $set: { role: 'ADMIN' } });
    const teacher = await createAccount(t.db, 'teacher@gsm.hs.kr', 'teacher password long');
    await t.db.models.accounts.updateOne(
      { _id: teacher },
      { $set: { name: '정선생', department: '소프트웨어개발과', approval: 'PENDING' } },
    );
    const keys = new ApiKeyService(t.db);
    const issued = await keys.issueOwned(devId, { scopes: ['STUDENT_READ', 'NEIS_READ'], label: '급식 알림 앱' });
    keyId = issued.summary.id;
    await keys.rotate(keyId, new Date(), { ownerAccountId: devId, graceSeconds: 3600 });
    await keys.issueOwned(devId, { scopes: ['CLUB_READ'], label: null });
    const today = todayIn('Asia/Seoul', new Date());
    await t.db.models.apiKeyUsage.insertMany(
      Array.from({ length: 30 }, (_, i) => {
        const day = addDays(today, -i);
        const requests = i % 7 === 3 ? 0 : 40 + ((i * 37) % 120);
        return {
          _id: `${keyId}:${day}`,
          keyId,
          day,
          requests,
          clientErrors: Math.floor(requests / 8),
          throttled: i % 5 === 0 && requests > 0 ? 6 : 0,
        };
      }),
    );
    const app = await new ClientService(t.db, { isProduction: false }).createOwned(devId, {
      name: 'Timetable widget',
      serviceName: 'GSM 시간표',
      redirectUris: ['http://127.0.0.1:9/cb'],
      scopes: ['self:read', 'openid'],
    });
    appId = app.client.id;
    await authorize(
      t,
      { client_id: appId, redirect_uri: 'http://127.0.0.1:9/cb', response_type: 'code', state: 's', scope: 'self:read openid' },
      dev,
    );
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Controls without a label (by <label>, aria-label or aria-labelledby). */
  async function unlabelled(page: Page): Promise<string[]> {
    // The callback runs in the page; it is typed by its structure (the project has no DOM typings).
    const names: unknown = await page
      .locator('input:not([type=hidden]), select, textarea')
      .evaluateAll((elements) =>
        (elements as unknown as Labelled[])
          .filter((e) => !(e.labels && e.labels.length > 0) && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
          .map((e) => e.name || e.id),
      );
    return names as string[];
  }

  async function look(page: Page, path: string, name: string, width: number): Promise<void> {
    const res = await page.goto(`${t.url}${path}`);
    expect(res?.status(), path).to.equal(200);
    expect(await unlabelled(page), `${path}: controls without a label`).to.deep.equal([]);
    const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
    const wide = scrollWidth > width;
    // The skip link comes first in the tab order (pages that focus a field at once start there instead).
    const first = await page.evaluate(
      '(document.querySelector("a[href], button, input:not([type=hidden]), select, textarea") || {}).className',
    );
    expect(first, `${path}: the first focusable element`).to.equal('skip');
    if (wide) {
      const offenders = await page.evaluate(
        `[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > ${width} && !e.closest('.table-wrap, nav.main, svg')).slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`,
      );
      throw new Error(`${path} is ${scrollWidth}px wide: ${JSON.stringify(offenders)}`);
    }
    if (path === '/console/connected') {
      // Its rows stack on a phone (table.stack, web/assets/web.css): the disconnect button is in view, not scrolled away.
      const box = await page.locator('tbody button.danger').first().boundingBox();
      expect(box ? box.x + box.width : Infinity, `${path}: right edge of the disconnect button`).to.be.at.most(width);
    }
    await screenshot(page, name);
  }

  const consolePaths = () => [
    ['/console', 'console-home'],
    ['/console/keys', 'console-keys'],
    [`/console/keys/${keyId}`, 'console-key-detail'],
    ['/console/apps', 'console-apps'],
    ['/console/apps/new', 'console-app-new'],
    [`/console/apps/${appId}`, 'console-app-detail'],
    ['/console/connected', 'console-connected'],
    ['/console/account', 'console-account'],
  ];
  const adminPaths = [
    ['/admin/accounts', 'admin-accounts'],
    ['/admin/keys', 'admin-keys'],
  ];
  const publicPaths = [
    ['/account/signup', 'account-signup'],
    ['/account/signup/verify?email=new%40gsm.hs.kr&sent=1', 'account-signup-verify'],
    ['/account/signup/done?pending=1', 'account-signup-done'],
    ['/account/password-reset', 'account-reset'],
    ['/account/password-reset/verify?email=new%40gsm.hs.kr&sent=1', 'account-reset-verify'],
    ['/dev/outbox', 'dev-outbox'],
  ];

  for (const [viewportName, viewport] of Object.entries(VIEWPORTS)) {
    for (const lang of ['ko', 'en'] as const) {
      it(`${viewportName}, ${lang}: the developer console, the admin account and key pages, sign-up and reset`, async () => {
        const context = await browser.newContext({ viewport, locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
        const page = await context.newPage();
        await signIn(page, t.url, `/console?lang=${lang}`, dev);
        for (const [path, name] of consolePaths()) await look(page, path ?? '', `${name}-${viewportName}-${lang}`, viewport.width);
        await context.clearCookies();
        await signIn(page, t.url, `/admin/accounts?lang=${lang}`, admin);
        for (const [path, name] of adminPaths) await look(page, path ?? '', `${name}-${viewportName}-${lang}`, viewport.width);
        await context.clearCookies();
        for (const [path, name] of publicPaths)
          await look(
            page,
            `${path ?? ''}${(path ?? '').includes('?') ? '&' : '?'}lang=${lang}`,
            `${name}-${viewportName}-${lang}`,
            viewport.width,
          );
        await context.close();
      });
    }
  }
});
