import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { AccountService } from '../../src/oauth/accounts.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, screenshot, signIn, VIEWPORTS } from '../helpers/browser.js';
import { createAccount, signInToConsole } from '../helpers/oauth.js';

/**
 * Project proposals and account management in headless Chromium: a student proposes a project through the form of
 * /console/projects, an admin accepts it on /admin/proposals/<id> beside the current record, and
 * the student's page shows it written; a disabled account's login page says why. Then every new
 * page at phone (390 px) and desktop width, Korean and English: in the language asked for, every
 * control labelled, nothing past a phone's right edge; each screenshotted (SCREENSHOTS_DIR).
 */
describe('school records: proposals, an account and a disabled sign-in in Chromium', function () {
  this.timeout(600000);
  let t: TestApp;
  let browser: Browser;
  const admin = { email: 'admin@gsm.hs.kr', password: 'admin reads the logs' };
  const student = { email: '', password: 'a student passphrase 2026' };
  const disabled = { email: 'left@gsm.hs.kr', password: 'a passphrase of the past' };
  let projectId = 0;
  let disabledId = 0;
  const ids: string[] = [];

  before(async () => {
    t = await buildTestApp('proposals_accounts_pages');
    await seedDemoSchool(t.db);
    // A student of the demo school who takes part in a project.
    const project = await t.db.models.projects
      .findOne({ 'participantIds.0': { $exists: true } })
      .sort({ _id: 1 })
      .lean();
    const participant = await t.db.models.students.findOne({ _id: project?.participantIds[0] }).lean();
    projectId = project?._id ?? 0;
    student.email = participant?.email ?? '';
    await createAccount(t.db, student.email, student.password);
    const adminId = await createAccount(t.db, admin.email, admin.password);
    await t.db.models.accounts.updateOne({ _id: adminId }, { $set: { role: 'ADMIN' } });
    disabledId = await createAccount(t.db, disabled.email, disabled.password);
    await new AccountService(t.db).setDisabled('CLI', disabled.email, true);
    const teacher = await createAccount(t.db, 'teacher@gsm.hs.kr', 'teacher password long');
    await t.db.models.accounts.updateOne(
      { _id: teacher },
      { $set: { name: '정선생', department: '소프트웨어개발과', approval: 'PENDING' } },
    );
    // Two proposals decided over HTTP (one accepted, one refused) and one left waiting.
    const asStudent = await signInToConsole(t, student, '/console/projects');
    for (const name of ['학교 지도 앱', '급식 평점', '동아리 출석부']) {
      const sent = await asStudent.post('/console/projects/new', {
        name,
        description: `${name} 프로젝트`,
        status: 'ACTIVE',
        startYear: '2026',
      });
      expect(sent.res.status).to.equal(303);
    }
    const made = await t.db.models.projectProposals.find({}).sort({ createdAt: 1 }).lean();
    ids.push(...made.map((p) => p._id));
    const asAdmin = await signInToConsole(t, admin, '/admin/proposals');
    expect((await asAdmin.post(`/admin/proposals/${ids[0]}/accept`, {})).res.status).to.equal(303);
    expect((await asAdmin.post(`/admin/proposals/${ids[1]}/refuse`, { reason: '이미 같은 프로젝트가 있습니다' })).res.status).to.equal(303);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Controls without a label (by <label>, aria-label or aria-labelledby). */
  async function unlabelled(page: Page): Promise<string[]> {
    const names: unknown = await page.evaluate(
      `[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
        .filter((e) => !(e.labels && e.labels.length > 0) && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
        .map((e) => e.name || e.id)`,
    );
    return names as string[];
  }

  async function look(page: Page, path: string, name: string, viewport: { width: number }, lang: 'ko' | 'en', status = 200): Promise<void> {
    const res = await page.goto(`${t.url}${path}${path.includes('?') ? '&' : '?'}lang=${lang}`);
    expect(res?.status(), path).to.equal(status);
    await checkShown(page, path, name, viewport, lang);
  }

  async function checkShown(page: Page, path: string, name: string, viewport: { width: number }, lang: 'ko' | 'en'): Promise<void> {
    expect(await page.getAttribute('html', 'lang'), `${path}: language`).to.equal(lang);
    expect(await unlabelled(page), `${path}: controls without a label`).to.deep.equal([]);
    expect(Number(await page.evaluate('document.documentElement.scrollWidth')), `${path}: page width`).to.be.at.most(viewport.width);
    await screenshot(page, name);
  }

  it('a student proposes a change in the form; an admin accepts it beside the record; the student sees it written', async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop, locale: 'ko-KR' });
    const page = await context.newPage();
    await signIn(page, t.url, '/console/projects', student);
    await page.click(`a[href="/console/projects/${projectId}/propose"]`);
    await page.fill('#f-description', '센서를 더 달아 교실 온도도 봅니다');
    await page.fill('#f-note', '올해 교실 두 곳에 센서를 더 달았습니다');
    await Promise.all([page.waitForURL(`${t.url}/console/projects`), page.click('form.card button[type=submit]')]);
    expect(await page.textContent('.flash')).to.include('제안을 보냈습니다');
    const id = (await t.db.models.projectProposals.findOne({ projectId }).lean())?._id ?? '';
    await context.close();

    const adminContext = await browser.newContext({ viewport: VIEWPORTS.desktop, locale: 'ko-KR' });
    const adminPage = await adminContext.newPage();
    await signIn(adminPage, t.url, '/admin/proposals', admin);
    await adminPage.click(`a[href="/admin/proposals/${id}"]`);
    expect(await adminPage.textContent('tr.changed')).to.include('센서를 더 달아 교실 온도도 봅니다');
    await Promise.all([adminPage.waitForURL(`${t.url}/admin/proposals/${id}`), adminPage.click('button:has-text("수락하고 반영")')]);
    expect(await adminPage.textContent('.flash')).to.include(`프로젝트 #${projectId}에 반영했습니다`);
    await adminContext.close();

    const res = await t.request(`/v1/public/projects/${projectId}`);
    expect(((await res.json()) as { data: { description: string } }).data.description).to.equal('센서를 더 달아 교실 온도도 봅니다');
  });

  it('a disabled account’s sign-in says it is disabled and whom to ask', async () => {
    for (const [viewportName, viewport] of Object.entries(VIEWPORTS)) {
      for (const lang of ['ko', 'en'] as const) {
        const context = await browser.newContext({ viewport, locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
        const page = await context.newPage();
        await page.goto(`${t.url}/console?lang=${lang}`);
        await page.fill('#f-email', disabled.email);
        await page.fill('#f-password', disabled.password);
        const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('button.primary')]);
        expect(answer.status()).to.equal(403);
        expect(await page.textContent('main')).to.include(lang === 'ko' ? '사용이 중지되어' : 'This account is disabled');
        await checkShown(page, '/login (disabled)', `login-disabled-${viewportName}-${lang}`, viewport, lang);
        await context.close();
      }
    }
  });

  it('every new page at phone and desktop width, Korean and English', async () => {
    const studentPages = [
      ['/console/projects', 'console-projects'],
      ['/console/projects/new', 'console-project-new'],
      [`/console/projects/${projectId}/propose`, 'console-project-propose'],
    ] as const;
    const adminPages = [
      ['/admin', 'admin-home-waiting'],
      ['/admin/proposals', 'admin-proposals'],
      [`/admin/proposals/${ids[2]}`, 'admin-proposal-waiting'],
      [`/admin/proposals/${ids[1]}`, 'admin-proposal-refused'],
      [`/admin/accounts/${disabledId}`, 'admin-account-disabled'],
    ] as const;
    for (const [viewportName, viewport] of Object.entries(VIEWPORTS)) {
      for (const lang of ['ko', 'en'] as const) {
        const context = await browser.newContext({ viewport, locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
        const page = await context.newPage();
        await signIn(page, t.url, `/console/projects?lang=${lang}`, student);
        for (const [path, name] of studentPages) await look(page, path, `${name}-${viewportName}-${lang}`, viewport, lang);
        await context.close();
        const adminContext = await browser.newContext({ viewport, locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
        const adminPage = await adminContext.newPage();
        await signIn(adminPage, t.url, `/admin?lang=${lang}`, admin);
        for (const [path, name] of adminPages) await look(adminPage, path, `${name}-${viewportName}-${lang}`, viewport, lang);
        await adminContext.close();
      }
    }
  });
});
