import type { Server } from 'node:http';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, startCallback, screenshot, signIn, VIEWPORTS } from '../helpers/browser.js';
import { buildClub, buildStudent, insertSchool, issueKey } from '../helpers/factories.js';
import { createClient, pkcePair } from '../helpers/oauth.js';
import { AccountService } from '../../src/oauth/accounts.js';

/**
 * My profile, data updates at sign-in and my sign-ins in a real Chromium, at 390 px and 1280 px, Korean and English:
 * a student edits their specialty in /console/profile (the data API shows it with a new ETag);
 * an admin asks the student to check their details in /admin/students/requests; the student's
 * next sign-in to an app, through single sign-on, shows the form, and the app gets its code after
 * the answer; the student ends another browser's sign-in in /console/sessions and that browser is
 * asked for its password again. Screenshots of each page (SCREENSHOTS_DIR).
 */
describe('accounts and sign-in: my profile, data updates at sign-in, my sign-ins in a browser (phone and desktop, ko and en)', function () {
  this.timeout(240000);
  let t: TestApp;
  let browser: Browser;
  let callback: Server;
  let redirectUri: string;
  let clientId: string;
  let key: string;
  const ADMIN = { email: 'requests-admin@school.test', password: 'the admin of the school' };
  const PASSWORD = 'a student pass phrase';
  const combos = [
    ['ko', 'phone'],
    ['en', 'desktop'],
    ['ko', 'desktop'],
    ['en', 'phone'],
  ] as const;

  before(async () => {
    t = await buildTestApp('browser_student_self');
    ({ server: callback, redirectUri } = await startCallback());
    await insertSchool(t.db, {
      clubs: [
        buildClub({ _id: 1, name: '소프트웨어 개발 동아리', type: 'MAJOR_CLUB' }),
        buildClub({ _id: 2, name: '밴드부', type: 'AUTONOMOUS_CLUB' }),
      ],
      students: combos.map(([lang, viewport], i) =>
        buildStudent({
          _id: i + 1,
          email: `${lang}-${viewport}@school.test`,
          name: ['이민아', '최준', '한서아', '박지호'][i] ?? '학생',
          grade: 2,
          classNum: 1,
          number: i + 1,
          dormitoryRoom: 301 + i,
          majorClubId: 1,
          specialty: 'Backend',
        }),
      ),
    });
    const accounts = new AccountService(t.db);
    for (const [lang, viewport] of combos) await accounts.create({ email: `${lang}-${viewport}@school.test`, password: PASSWORD });
    await accounts.create({ email: ADMIN.email, password: ADMIN.password, role: 'ADMIN' });
    clientId = (await createClient(t.db, { name: '동아리 출석부', redirectUris: [redirectUri], firstParty: true })).client.id;
    key = await issueKey(t.db, { scopes: ['STUDENT_READ'] });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    callback?.close();
    await t?.close();
  });

  function authorizeUrl(lang: string): string {
    return `${t.url}/v1/oauth/authorize?${new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      state: 'st',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      ui_locales: lang,
    })}`;
  }

  async function noSideways(page: Page): Promise<void> {
    const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    expect(width, `${page.url()} scrolls sideways`).to.be.at.most(page.viewportSize()?.width ?? 0);
  }

  async function shoot(page: Page, name: string): Promise<void> {
    await noSideways(page);
    await screenshot(page, name);
  }

  for (const [lang, viewport] of combos) {
    it(`${lang}, ${viewport}: profile, a data update at the next sign-in through single sign-on, and ending another browser's sign-in`, async () => {
      const email = `${lang}-${viewport}@school.test`;
      const student = { email, password: PASSWORD };
      const name = (what: string) => `25a-${what}-${viewport}-${lang}`;
      const contexts: BrowserContext[] = [];
      const open = async () => {
        const context = await browser.newContext({ viewport: VIEWPORTS[viewport], locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
        contexts.push(context);
        return context.newPage();
      };
      try {
        // 1. My profile: the record, and the specialty edited; the data API shows it with a new ETag.
        const page = await open();
        await signIn(page, t.url, `/console/profile?lang=${lang}`, student);
        expect(await page.textContent('h1')).to.equal(lang === 'ko' ? '내 정보' : 'My profile');
        await shoot(page, name('profile'));
        const api = () => t.request(`/v1/students?email=${encodeURIComponent(email)}`, { headers: { 'X-API-KEY': key } });
        const etag = (await api()).headers.get('etag');
        await page.fill('#f-specialty', `Security ${lang}`);
        await Promise.all([page.waitForURL('**/console/profile'), page.click('form[action="/console/profile"] button.primary')]);
        expect(await page.locator('[role=status]').first().innerText()).to.equal(
          lang === 'ko' ? '저장했습니다. 데이터 API에 바로 반영됩니다.' : 'Saved. The data API shows it at once.',
        );
        const after = await api();
        expect(after.headers.get('etag')).to.not.equal(etag);
        expect(((await after.json()) as { data: { students: { specialty: string }[] } }).data.students[0]?.specialty).to.equal(
          `Security ${lang}`,
        );
        // A bad GitHub id comes back at its field.
        await page.fill('#f-githubId', '-bad-');
        await page.click('form[action="/console/profile"] button.primary');
        await page.waitForSelector('#f-githubId[aria-invalid="true"]');
        await shoot(page, name('profile-error'));

        // 2. An admin asks this student to check the room and the major club.
        const adminPage = await open();
        await signIn(adminPage, t.url, `/admin/students/requests?lang=${lang}`, ADMIN);
        await adminPage.fill('#f-students', email);
        await adminPage.check('input[name="fields"][value="dormitoryRoom"]');
        await adminPage.check('input[name="fields"][value="majorClubId"]');
        await adminPage.fill(
          '#f-message',
          lang === 'ko' ? '2학기 기숙사 호실을 확인해 주세요.' : 'Please check your dormitory room for the second term.',
        );
        await Promise.all([
          adminPage.waitForURL('**/admin/students/requests/ur_*'),
          adminPage.click('form[action="/admin/students/requests"] button.primary'),
        ]);
        expect(await adminPage.locator('[data-answered="no"]').count()).to.equal(1);
        await shoot(adminPage, name('admin-request'));

        // The student's next sign-in to an app, with single sign-on (no password asked): the form first.
        await page.goto(authorizeUrl(lang));
        await page.waitForSelector('form[action$="/data-update"]');
        expect(await page.inputValue('#f-dormitoryRoom')).to.equal(
          String(301 + combos.findIndex(([l, v]) => l === lang && v === viewport)),
        );
        expect(await page.locator('#f-password').count()).to.equal(0);
        await shoot(page, name('data-update'));
        await page.fill('#f-dormitoryRoom', '999');
        await page.click('form[action$="/data-update"] button.primary');
        await page.waitForSelector('#f-dormitoryRoom[aria-invalid="true"]');
        await shoot(page, name('data-update-error'));
        await page.fill('#f-dormitoryRoom', '415');
        await Promise.all([
          page.waitForURL((url) => url.href.startsWith(redirectUri)),
          page.click('form[action$="/data-update"] button.primary'),
        ]);
        expect(new URL(page.url()).searchParams.get('code')).to.be.a('string');
        const saved = await t.db.models.students.findOne({ email }).lean();
        expect(saved?.dormitoryRoom).to.equal(415);
        const batch = await t.db.models.auditBatches.findOne({ actorEmail: email }).sort({ at: -1 }).lean();
        expect(batch).to.include({ actorKind: 'ACCOUNT', status: 'APPLIED' });
        await adminPage.goto(`${adminPage.url().split('?')[0] ?? ''}?lang=${lang}`);
        expect(await adminPage.locator('[data-answered="yes"]').count()).to.equal(1);
        await adminPage.goto(`${t.url}/admin/students/requests?lang=${lang}`);
        await shoot(adminPage, name('admin-requests'));

        // 4. A second browser (a phone) signs in to the app; ended from the first one, it is asked for the password again.
        const phone = await open();
        await phone.goto(authorizeUrl(lang));
        await phone.fill('#f-email', email);
        await phone.fill('#f-password', PASSWORD);
        await Promise.all([phone.waitForURL((url) => url.href.startsWith(redirectUri)), phone.click('button.primary')]);
        await page.goto(`${t.url}/console/sessions?lang=${lang}`);
        expect(await page.locator('[data-current="yes"]').count()).to.equal(1);
        const rows = page.locator('tbody tr');
        expect(await rows.count()).to.equal(2);
        await shoot(page, name('sessions'));
        const other = page.locator('tbody tr', { hasNot: page.locator('[data-current="yes"]') });
        await Promise.all([page.waitForURL('**/console/sessions'), other.locator('button.danger').click()]);
        expect(await page.locator('tbody tr').count()).to.equal(1);
        await phone.goto(authorizeUrl(lang));
        await phone.waitForSelector('#f-password');
        // This browser is still signed in: single sign-on goes straight to the app.
        await page.goto(authorizeUrl(lang));
        await page.waitForURL((url) => url.href.startsWith(redirectUri));
      } finally {
        for (const context of contexts) await context.close();
      }
    });
  }
});
