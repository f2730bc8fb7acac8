import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { addDays } from '../../src/calendar.js';
import type { Database } from '../../src/data/database.js';
import { minuteOf, recordObservations, type Observation, type RecordedState } from '../../src/data/operations/status-history.js';
import { StatusBoard } from '../../src/data/operations/status.js';
import { CLI_ACTOR } from '../../src/data/school/types.js';
import { keepUpload } from '../../src/data/school/uploads.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, screenshot, signIn, VIEWPORTS, wcagViolations } from '../helpers/browser.js';
import { createTestDatabase } from '../helpers/database.js';
import { createAccount } from '../helpers/oauth.js';

/**
 * The status page (/status) and its admin page (/admin/status and a notice's page) as people see
 * them, at phone (390 px) and desktop (1280 px) width, Korean and English, with 60 days of history
 * (a few outages), an incident with its updates, planned maintenance, a previewed rollover and a
 * past incident: in the shell, nothing past the right edge, every control labelled, axe-core's
 * WCAG 2.2 AA rules kept. Screenshots go to SCREENSHOTS_DIR (`npm run screenshots`).
 */
describe('pages: the status page and its admin page, on a phone and a desktop, in both languages', function () {
  this.timeout(300000);
  let db: Database & { drop(): Promise<void> };
  let t: TestApp;
  let browser: Browser;
  let noticeId = '';
  const admin = { email: 'admin@gsm.hs.kr', password: 'admin keeps the status page' };
  const clock = new Date();
  const timeZone = 'Asia/Seoul';

  /** 60 days of hourly records: the database down 3 hours on one day, NEIS degraded on two, the rest up. */
  async function history(): Promise<void> {
    const today = minuteOf(clock, timeZone).day;
    const observations: Observation[] = [];
    for (let day = 60; day >= 1; day--) {
      const date = addDays(today, -day);
      for (let hour = 0; hour < 24; hour++) {
        const down = day === 12 && hour >= 9 && hour < 12;
        const state = (part: string): RecordedState =>
          down && ['database', 'data-api', 'sign-in', 'userinfo'].includes(part)
            ? 'DOWN'
            : part === 'neis' && (day === 30 || day === 31) && hour < 8
              ? 'DEGRADED'
              : 'UP';
        const states = Object.fromEntries(['data-api', 'sign-in', 'userinfo', 'database', 'neis', 'webhooks'].map((p) => [p, state(p)]));
        observations.push({ at: new Date(`${date}T${String(hour).padStart(2, '0')}:30:00+09:00`), states });
      }
    }
    await recordObservations(db, observations, timeZone, async () => {});
  }

  before(async () => {
    db = await createTestDatabase('status_pages');
    const board = new StatusBoard({
      db,
      config: { schoolTimeZone: timeZone, neis: { syncEnabled: false, apiKey: undefined } },
      now: () => clock,
    });
    t = await buildTestApp('status_pages', { db, now: () => clock, status: board });
    await history();
    await board.record();
    const incidents = board.incidents;
    const open = await incidents.open(
      {
        kind: 'INCIDENT',
        title: '급식 API가 응답하지 않습니다',
        message: 'NEIS에서 오늘 급식을 가져오지 못하고 있습니다. 원인을 찾고 있습니다.',
        parts: ['data-api', 'neis'],
        startsAt: new Date(clock.getTime() - 3_600_000),
      },
      { kind: 'ACCOUNT', accountId: 1, email: admin.email },
    );
    await incidents.update(open._id, { state: 'IDENTIFIED', message: 'NEIS 점검 때문입니다. 점검이 끝나면 다시 가져옵니다.' }, CLI_ACTOR);
    noticeId = open._id;
    await incidents.open(
      {
        kind: 'MAINTENANCE',
        title: '데이터베이스 서버 옮기기',
        message: '새 서버로 옮기는 동안 30분쯤 데이터 API와 로그인이 멈춥니다.',
        parts: ['database', 'data-api', 'sign-in'],
        startsAt: new Date(clock.getTime() + 3 * 86_400_000),
        endsAt: new Date(clock.getTime() + 3 * 86_400_000 + 1_800_000),
      },
      CLI_ACTOR,
    );
    const past = await incidents.open(
      {
        kind: 'INCIDENT',
        title: '로그인이 느렸습니다',
        message: '로그인이 10초 넘게 걸립니다.',
        parts: ['sign-in'],
        startsAt: new Date(clock.getTime() - 12 * 86_400_000),
      },
      CLI_ACTOR,
    );
    await incidents.resolve(past._id, { message: '데이터베이스를 다시 시작해 해결했습니다.' }, CLI_ACTOR);
    await keepUpload(db, {
      kind: 'ROLLOVER',
      entity: 'STUDENT',
      accountId: 1,
      fileName: 'rollover.csv',
      content: Buffer.from('학번,새 반\r\n1101,2\r\n'),
      removeMissing: false,
      now: new Date(clock.getTime() - 600_000),
    });
    const id = await createAccount(db, admin.email, admin.password);
    await db.models.accounts.updateOne({ _id: id }, { $set: { role: 'ADMIN' } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await db?.drop();
  });

  /** The checks of every page (test/pages/every-page.browser.test.ts): the shell, labels, width, axe. */
  async function look(page: Page, path: string, name: string, viewport: { width: number }, lang: 'ko' | 'en'): Promise<void> {
    const res = await page.goto(`${t.url}${path}?lang=${lang}`);
    expect(res?.status(), path).to.equal(200);
    expect(await page.getAttribute('html', 'lang'), path).to.equal(lang);
    const unlabelled: unknown = await page.evaluate(
      `[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
        .filter((e) => !(e.labels && e.labels.length > 0) && !e.getAttribute('aria-label')).map((e) => e.name)`,
    );
    expect(unlabelled, `${path}: controls without a label`).to.deep.equal([]);
    expect(Number(await page.evaluate('document.documentElement.scrollWidth')), `${path}: page width`).to.be.at.most(viewport.width);
    const pastTheEdge: unknown = await page.evaluate(
      `[...document.querySelectorAll('body *')]
        .filter((e) => !e.closest('.visually-hidden, .skip') && e.getClientRects().length > 0 && e.getBoundingClientRect().right > ${viewport.width} + 0.5)
        .map((e) => e.tagName + '.' + e.className)`,
    );
    expect(pastTheEdge, `${path}: past the right edge`).to.deep.equal([]);
    expect(await wcagViolations(page), `${path}: axe-core, WCAG 2.2 AA`).to.deep.equal([]);
    await screenshot(page, name);
  }

  for (const [viewportName, viewport] of Object.entries(VIEWPORTS)) {
    for (const lang of ['ko', 'en'] as const) {
      it(`${viewportName}, ${lang}: /status for anyone, /admin/status and a notice for staff`, async () => {
        const context = await browser.newContext({ viewport, locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
        const page = await context.newPage();
        await look(page, '/status', `status-${viewportName}-${lang}`, viewport, lang);
        // Every part's card with its 90 bars; the day of the outage in its table.
        expect(await page.locator('li.card.part').count()).to.equal(6);
        expect(await page.locator('#part-database .uptime span').count()).to.equal(90);
        expect(await page.locator('#part-database .uptime span.down').count()).to.equal(1);
        expect(await page.locator('#part-neis .uptime span.degraded').count()).to.equal(2);
        expect(await page.textContent('#part-database summary')).to.equal(
          lang === 'ko' ? '문제가 있었던 날 1일 (기록된 61일 가운데)' : '1 day with trouble (of 61 days recorded)',
        );
        expect(await page.textContent(`#incident-${noticeId} h3`)).to.equal('급식 API가 응답하지 않습니다');
        expect(await page.locator(`#incident-${noticeId} ol.updates li`).count()).to.equal(2);
        expect(await page.textContent('#rollover-planned')).to.equal(lang === 'ko' ? '학년도 전환' : 'School-year rollover');
        await signIn(page, t.url, `/admin/status?lang=${lang}`, admin);
        await look(page, '/admin/status', `admin-status-${viewportName}-${lang}`, viewport, lang);
        await look(page, `/admin/status/${noticeId}`, `admin-status-notice-${viewportName}-${lang}`, viewport, lang);
        await context.close();
      });
    }
  }
});
