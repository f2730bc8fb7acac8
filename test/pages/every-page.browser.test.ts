import { assert, expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { addDays, todayIn } from '../../src/calendar.js';
import { ApiKeyService } from '../../src/data/keys/store.js';
import { findStanding } from '../../src/data/accounts/standing.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { AppService } from '../../src/oauth/apps.js';
import { WebhookStore } from '../../src/data/events/webhooks.js';
import { CookieSealer } from '../../src/surfaces/web/seal.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, screenshot, signIn, VIEWPORTS, wcagViolations } from '../helpers/browser.js';
import { authorize, createAccount, signInToConsole } from '../helpers/oauth.js';

/** What the label check reads of a form control in the page. */
interface Labelled {
  labels: { length: number } | null;
  name: string;
  id: string;
  getAttribute(name: string): string | null;
}

/**
 * Every page people see, at phone (390 px) and desktop (1280 px) width, in Korean and English:
 * the front door, the login, consent and logout pages, sign-up and reset, the developer console, the admin console (students, accounts, audit log and a change's batch,
 * keys, ...) and the error pages. Each one is in the shell (the school's name, the language
 * switch), in the language asked for, has a label for every control and the skip link first in
 * the tab order, and on a phone nothing on it — no column of a table, no button — reaches past
 * the screen's right edge. Each is screenshotted (.data/screenshots/, or SCREENSHOTS_DIR).
 */
describe('pages: every page, its shell, labels, phone width, both languages', function () {
  this.timeout(600000);
  let t: TestApp;
  let browser: Browser;
  const dev = { email: 'dev@gsm.hs.kr', password: 'dev writes apps all day' };
  const admin = { email: 'admin@gsm.hs.kr', password: 'admin reads the logs' };
  let keyId = '';
  let appId = '';
  let batchId = '';
  let thirdParty = '';
  let webhookId = '';

  before(async () => {
    t = await buildTestApp('every_page');
    await seedDemoSchool(t.db);
    const devId = await createAccount(t.db, dev.email, dev.password);
    const adminId = await createAccount(t.db, admin.email, admin.password);
    await t.db.models.accounts.updateOne({ _id: adminId }, { $set: { role: 'ADMIN' } });
    const teacher = await createAccount(t.db, 'teacher@gsm.hs.kr', 'teacher password long');
    await t.db.models.accounts.updateOne(
      { _id: teacher },
      { $set: { name: '정선생', department: '소프트웨어개발과', approval: 'PENDING' } },
    );
    const keys = new ApiKeyService(t.db, t.config.policy);
    const issued = await keys.issue({ scopes: ['STUDENT_READ', 'NEIS_READ'], label: '급식 알림 앱', ownerAccountId: devId });
    keyId = issued.summary.id;
    await keys.rotate(keyId, new Date(), { ownerAccountId: devId, graceSeconds: 3600 });
    await keys.issue({ scopes: ['CLUB_READ'], label: null, ownerAccountId: devId });
    // A key request awaiting an admin: /admin lists it, /console/keys shows its state.
    await keys.request((await findStanding(t.db, devId)) ?? assert.fail('no standing'), {
      scopes: ['CLUB_READ', 'STUDENT_READ'],
      purpose: '동아리 출석부에 부원의 학번과 이름을 보여 주려고 합니다',
      label: '동아리 출석부',
    });
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
    // A webhook with deliveries: one delivered, one retried after failures, one without an answer.
    const webhooks = new WebhookStore(
      t.db,
      new CookieSealer(['a key only these pages use, long enough'], 'webhook-secret'),
      t.config.policy,
    );
    const hook = await webhooks.create({
      ownerAccountId: devId,
      url: 'https://dorm.example.com/hooks/campus',
      eventTypes: ['student.*', 'club.*'],
    });
    webhookId = hook.webhook.id;
    await webhooks.create({ ownerAccountId: devId, url: 'https://clubs.example.com/webhooks', eventTypes: ['batch.completed'] });
    const attempt = (status: number | null, at: string, response: string, manual = false) => ({
      at: new Date(at),
      status,
      durationMs: status === null ? 10000 : 84,
      response,
      ok: status !== null && status < 300,
      manual,
    });
    const delivery = (eventId: number, type: string) => ({
      _id: `${webhookId}-${eventId}`,
      webhookId,
      eventId,
      type,
      messageId: `evt_${eventId}`,
    });
    await webhooks.recordAttempt(delivery(41, 'student.updated'), attempt(200, '2026-03-02T09:00:01+09:00', 'ok'), 'DELIVERED');
    await webhooks.recordAttempt(
      delivery(42, 'club.updated'),
      attempt(500, '2026-03-02T09:05:00+09:00', 'Internal Server Error: database is down'),
      'PENDING',
    );
    await webhooks.recordAttempt(
      delivery(42, 'club.updated'),
      attempt(null, '2026-03-02T09:05:05+09:00', 'no answer within 10 s'),
      'PENDING',
    );
    await webhooks.recordAttempt(delivery(42, 'club.updated'), attempt(200, '2026-03-02T09:10:05+09:00', '{"received":true}'), 'DELIVERED');
    await webhooks.recordAttempt(delivery(41, 'student.updated'), attempt(200, '2026-03-02T09:12:00+09:00', 'ok', true), 'DELIVERED');
    const clients = new AppService(t.db, { isProduction: false });
    const app = await clients.createOwned(devId, {
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
    // An app the admin has not allowed yet: its authorization shows the consent page.
    thirdParty = (
      await clients.create({
        name: '동아리 출석부',
        redirectUris: ['http://127.0.0.1:9/cb'],
        scopes: ['openid', 'account:read', 'club:read', 'project:read', 'self:read'],
      })
    ).client.id;
    // A student's app in testing, another disabled, for /admin/apps; the access log gets its entries.
    const testing = await clients.createOwned(devId, {
      name: 'Lunch rater',
      redirectUris: ['https://lunch.example/callback', 'http://127.0.0.1:7777/cb'],
      scopes: ['student:read', 'club:read'],
    });
    await clients.disable(testing.client.id, { kind: 'CLI' });
    await clients.enable(testing.client.id, { kind: 'CLI' });
    await clients.disable(appId, { kind: 'CLI' });
    await clients.enable(appId, { kind: 'CLI' });
    // One change in the audit log, through the admin console itself.
    const adminConsole = await signInToConsole(t, admin, '/admin');
    const changed = await adminConsole.post('/admin/clubs', {
      name: 'Rocket Lab',
      type: 'MAJOR_CLUB',
      status: 'ACTIVE',
      leader: '',
      members: '',
      foundedYear: '2026',
    });
    expect(changed.res.status).to.equal(303);
    batchId = /\/admin\/audit\?batchId=([0-9a-f-]{36})/.exec((await adminConsole.get('/admin/audit')).html)?.[1] ?? '';
    expect(batchId).to.match(/^[0-9a-f-]{36}$/);
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

  /**
   * The elements whose right edge is past the screen (visually hidden ones aside): on a phone, a
   * table's column or a button that would need sideways scrolling, even inside its own box.
   */
  async function pastTheEdge(page: Page, width: number): Promise<string[]> {
    const offenders: unknown = await page.evaluate(
      `[...document.querySelectorAll('body *')]
        .filter((e) => !e.closest('.visually-hidden, .skip, svg') && e.getClientRects().length > 0 && e.getBoundingClientRect().right > ${width} + 0.5)
        .slice(0, 5)
        .map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`,
    );
    return offenders as string[];
  }

  async function look(page: Page, path: string, name: string, viewport: { width: number }, lang: 'ko' | 'en', status = 200): Promise<void> {
    const res = await page.goto(`${t.url}${path}${path.includes('?') ? '&' : '?'}lang=${lang}`);
    expect(res?.status(), path).to.equal(status);
    await checkShown(page, path, name, viewport, lang);
  }

  /** The checks of a page as shown (after a goto, or after following a flow to it). */
  async function checkShown(page: Page, path: string, name: string, viewport: { width: number }, lang: 'ko' | 'en'): Promise<void> {
    expect(await page.getAttribute('html', 'lang'), `${path}: language`).to.equal(lang);
    expect(await page.textContent('header .school'), `${path}: the school's name`).to.equal(
      lang === 'ko' ? '광주소프트웨어마이스터고등학교' : 'Gwangju Software Meister High School',
    );
    expect(await unlabelled(page), `${path}: controls without a label`).to.deep.equal([]);
    // The skip link comes first in the tab order.
    const first = await page.evaluate(
      '(document.querySelector("a[href], button, input:not([type=hidden]), select, textarea") || {}).className',
    );
    expect(first, `${path}: the first focusable element`).to.equal('skip');
    expect(Number(await page.evaluate('document.documentElement.scrollWidth')), `${path}: page width`).to.be.at.most(viewport.width);
    if (viewport.width <= VIEWPORTS.phone.width)
      expect(await pastTheEdge(page, viewport.width), `${path}: past the right edge`).to.deep.equal([]);
    expect(await wcagViolations(page), `${path}: axe-core, WCAG 2.2 AA`).to.deep.equal([]);
    await screenshot(page, name);
  }

  const publicPages = [
    ['/', 'home'],
    ['/status', 'status'],
    ['/account/signup', 'account-signup'],
    ['/account/signup/verify?email=new%40gsm.hs.kr', 'account-signup-verify'],
    ['/account/signup/done?pending=1', 'account-signup-done'],
    ['/account/password-reset', 'account-reset'],
    ['/account/password-reset/verify?email=new%40gsm.hs.kr', 'account-reset-verify'],
    ['/dev/outbox', 'dev-outbox'],
    ['/dev/callback', 'dev-callback-empty'],
    ['/dev/callback?code=Gb3Xq0b2vWcV8Yd7kz4N1pQeRr5sT6uU7vW8xY9zA0b&state=first-state&iss=http%3A%2F%2F127.0.0.1%3A8080', 'dev-callback'],
  ] as const;
  const consolePages = () =>
    [
      ['/console', 'console-home'],
      ['/console/keys', 'console-keys'],
      [`/console/keys/${keyId}`, 'console-key-detail'],
      ['/console/apps', 'console-apps'],
      ['/console/apps/new', 'console-app-new'],
      [`/console/apps/${appId}`, 'console-app-detail'],
      ['/console/webhooks', 'console-webhooks'],
      [`/console/webhooks/${webhookId}`, 'console-webhook-detail'],
      ['/console/connected', 'console-connected'],
      ['/console/account', 'console-account'],
      ['/console/profile', 'console-profile'],
      ['/console/sessions', 'console-sessions'],
    ] as const;
  const adminPages = () =>
    [
      ['/admin', 'admin-home'],
      ['/admin/students', 'admin-students'],
      ['/admin/students/1', 'admin-student'],
      ['/admin/students/new', 'admin-student-new'],
      ['/admin/clubs', 'admin-clubs'],
      ['/admin/clubs/1', 'admin-club'],
      ['/admin/projects', 'admin-projects'],
      ['/admin/projects/6', 'admin-project'],
      ['/admin/import', 'admin-import'],
      ['/admin/export', 'admin-export'],
      ['/admin/school-year', 'admin-school-year'],
      ['/admin/audit', 'admin-audit'],
      [`/admin/audit?batchId=${batchId}`, 'admin-audit-batch'],
      ['/admin/accounts', 'admin-accounts'],
      ['/admin/keys', 'admin-keys'],
      ['/admin/apps', 'admin-apps'],
      ['/admin/status', 'admin-status'],
      ['/admin/audit?log=access', 'admin-access-log'],
    ] as const;

  for (const [viewportName, viewport] of Object.entries(VIEWPORTS)) {
    for (const lang of ['ko', 'en'] as const) {
      it(`${viewportName}, ${lang}: the front door, sign-up and reset, the login and consent pages, and a 404`, async () => {
        const context = await browser.newContext({ viewport, locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
        const page = await context.newPage();
        for (const [path, name] of publicPages) await look(page, path, `${name}-${viewportName}-${lang}`, viewport, lang);
        await look(page, '/nope', `not-found-${viewportName}-${lang}`, viewport, lang, 404);
        // The login page of an app's authorization request, in the app's language (ui_locales).
        const authorizeUrl = `${t.url}/v1/oauth/authorize?${new URLSearchParams({
          client_id: thirdParty,
          redirect_uri: 'http://127.0.0.1:9/cb',
          response_type: 'code',
          scope: 'openid account:read club:read project:read',
          state: 's',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
          ui_locales: lang,
        })}`;
        await context.clearCookies();
        await page.goto(authorizeUrl);
        await checkShown(page, '(login)', `login-${viewportName}-${lang}`, viewport, lang);
        await page.fill('#f-email', admin.email);
        await page.fill('#f-password', admin.password);
        await Promise.all([page.waitForURL(/\/v1\/oauth\/interaction\/[^/]+$/), page.click('button.primary')]);
        expect(await page.textContent('h1')).to.equal(lang === 'ko' ? '권한 요청' : 'Allow access');
        await checkShown(page, '(consent)', `consent-${viewportName}-${lang}`, viewport, lang);
        await page.goto(`${t.url}/v1/oauth/logout?ui_locales=${lang}`);
        await checkShown(page, '(logout)', `logout-${viewportName}-${lang}`, viewport, lang);
        await context.close();
      });

      it(`${viewportName}, ${lang}: every page of the developer console`, async () => {
        const context = await browser.newContext({ viewport, locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
        const page = await context.newPage();
        await signIn(page, t.url, `/console?lang=${lang}`, dev);
        for (const [path, name] of consolePages()) await look(page, path, `${name}-${viewportName}-${lang}`, viewport, lang);
        await look(page, '/console/nope', `console-not-found-${viewportName}-${lang}`, viewport, lang, 404);
        await look(page, '/admin', `admin-refused-${viewportName}-${lang}`, viewport, lang, 403);
        if (viewport === VIEWPORTS.phone) {
          // Rows of a table stack on a phone: the disconnect button is in view, not scrolled away.
          await page.goto(`${t.url}/console/connected`);
          const box = await page.locator('tbody button.danger').first().boundingBox();
          expect(box ? box.x + box.width : Infinity, 'right edge of the disconnect button').to.be.at.most(viewport.width);
        }
        await context.close();
      });

      it(`${viewportName}, ${lang}: every page of the admin console`, async () => {
        const context = await browser.newContext({ viewport, locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
        const page = await context.newPage();
        await signIn(page, t.url, `/admin?lang=${lang}`, admin);
        for (const [path, name] of adminPages()) await look(page, path, `${name}-${viewportName}-${lang}`, viewport, lang);
        await look(page, '/admin/students/99999', `admin-not-found-${viewportName}-${lang}`, viewport, lang, 404);
        if (viewport === VIEWPORTS.phone) {
          // Every item of the admin navigation is on the screen (it wraps), none hidden sideways.
          await page.goto(`${t.url}/admin`);
          const items = await page.locator('nav.section li a').evaluateAll((links) => links.map((a) => a.getBoundingClientRect().right));
          // As many as the admin route table names in its navigation (src/surfaces/admin/index.ts).
          expect(items).to.have.length(t.app.pages.filter((p) => p.inNav && p.path.startsWith('/admin')).length);
          expect(items.length).to.be.greaterThan(5);
          for (const right of items) expect(right).to.be.at.most(viewport.width);
        }
        await context.close();
      });
    }
  }
});
