import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import ExcelJS from 'exceljs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { StudentDoc } from '../../src/data/models/student.model.js';
import { journalBatch, settleSchool } from '../../src/data/school/engine.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, screenshot, signIn, VIEWPORTS } from '../helpers/browser.js';
import { issueKey } from '../helpers/factories.js';
import { createAccount } from '../helpers/oauth.js';

/**
 * The admin console's school pages, end to end in headless Chromium: a
 * ROOT account signs in through our authorization server, creates a club and a student in it,
 * imports a student file with two bad rows and sees both errors with their row numbers, fixes
 * and applies it, exports and re-imports unchanged, previews a rollover and reads each change in
 * the audit log; after each write the data API shows the change under a new ETag.
 */

const ROOT = { email: 'root@school.test', password: 'root password 1' };

/** A student workbook (the console's own headers) with the given rows. */
async function studentWorkbook(rows: (string | number | null)[][]): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet('학생');
  sheet.addRow(['학생명', '학번', '이메일', '성별', '학과', '소속', '호실', '전공동아리']);
  for (const row of rows) sheet.addRow(row);
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

describe('school records: the admin console in a browser', function () {
  this.timeout(180000);
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let key: string;

  /** GET a data API path with the key: its body and ETag. */
  async function api(path: string): Promise<{ data: Record<string, unknown[]>; etag: string }> {
    const res = await t.request(path, { headers: { 'X-API-KEY': key } });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { data: Record<string, unknown[]> };
    return { data: body.data, etag: res.headers.get('etag') ?? '' };
  }

  async function upload(path: string, fileName: string, bytes: Buffer, entity?: string): Promise<void> {
    await page.goto(`${t.url}${path}`);
    if (entity) await page.selectOption('#f-entity', entity);
    await page.setInputFiles('#f-file', {
      name: fileName,
      mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      buffer: bytes,
    });
    await Promise.all([page.waitForLoadState('load'), page.click('main form button[type=submit]')]);
  }

  before(async () => {
    t = await buildTestApp('admin_school_browser');
    await seedDemoSchool(t.db);
    key = await issueKey(t.db);
    await createAccount(t.db, ROOT.email, ROOT.password);
    await t.db.models.accounts.updateOne({ email: ROOT.email }, { $set: { role: 'ROOT' } });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: VIEWPORTS.desktop, locale: 'ko-KR', acceptDownloads: true });
    page = await context.newPage();
    await signIn(page, t.url, '/admin', ROOT);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('the home shows the counts and links', async () => {
    expect(new URL(page.url()).pathname).to.equal('/admin');
    expect(await page.textContent('[data-count="enrolled"]')).to.equal('204');
    expect(await page.textContent('main')).to.include('변경 기록 보기');
    await screenshot(page, 'admin-home-desktop-ko');
  });

  it('creates a club; the data API shows it under a new ETag', async () => {
    const before = await api('/v1/clubs?clubName=Rocket');
    expect(before.data['clubs']).to.deep.equal([]);
    await page.goto(`${t.url}/admin/clubs/new`);
    await page.fill('#f-name', 'Rocket Lab');
    await page.selectOption('#f-type', 'MAJOR_CLUB');
    await page.fill('#f-foundedYear', '2026');
    await Promise.all([page.waitForURL(/\/admin\/clubs\/\d+$/), page.click('main form.card button[type=submit]')]);
    expect(await page.textContent('.flash')).to.equal('동아리를 추가했습니다.');
    const after = await api('/v1/clubs?clubName=Rocket');
    expect(after.data['clubs']).to.have.length(1);
    expect(after.data['clubs']?.[0]).to.include({ name: 'Rocket Lab', type: 'MAJOR_CLUB', status: 'ACTIVE', foundedYear: 2026 });
    expect(after.etag).to.not.equal(before.etag);
  });

  it('shows a student form error inline, then creates the student in the club', async () => {
    await page.goto(`${t.url}/admin/students/new`);
    await page.fill('#f-name', '새별');
    await page.fill('#f-email', 'not-an-email');
    await page.selectOption('#f-sex', 'WOMAN');
    await page.selectOption('#f-grade', '1');
    await page.selectOption('#f-classNum', '2');
    await page.fill('#f-number', '17');
    await page.selectOption('#f-majorClubId', { label: 'Rocket Lab' });
    const refused = page.waitForResponse((r) => r.url().endsWith('/admin/students') && r.request().method() === 'POST');
    await page.click('main form.card button[type=submit]');
    expect((await refused).status()).to.equal(422);
    await page.waitForLoadState('load');
    expect(await page.getAttribute('#f-email', 'aria-invalid')).to.equal('true');
    expect(await page.textContent('#f-email-error')).to.include('이메일: name@school.kr 형식의 이메일 주소여야 합니다');
    expect(await page.textContent('#error-summary')).to.include('고칠 것이 1개 있습니다');
    // The summary takes the focus, so a keyboard or screen-reader user starts at the problem.
    expect(await page.evaluate('document.activeElement?.id')).to.equal('error-summary');
    await screenshot(page, 'admin-student-form-error-desktop-ko');

    const before = await api('/v1/students?email=star%40gsm.hs.kr');
    await page.fill('#f-email', 'star@gsm.hs.kr');
    await Promise.all([page.waitForURL(/\/admin\/students\/\d+$/), page.click('main form.card button[type=submit]')]);
    const after = await api('/v1/students?email=star%40gsm.hs.kr');
    expect(after.data['students']).to.have.length(1);
    expect(after.data['students']?.[0]).to.deep.include({
      name: '새별',
      studentNumber: 1217,
      major: 'SW_DEVELOPMENT',
      majorClub: after.data['students']?.[0] && (after.data['students'][0] as { majorClub: unknown }).majorClub,
    });
    expect((after.data['students']?.[0] as { majorClub: { name: string } }).majorClub.name).to.equal('Rocket Lab');
    expect(after.etag).to.not.equal(before.etag);
  });

  it('previews an import with two bad rows, shows both errors with row numbers, then applies the fixed file', async () => {
    // Free seats of the demo school: classes 2-1 and 2-4 have 16 students.
    const seats: Record<number, number> = { 17: 2117, 18: 2118, 19: 2417, 20: 2418 };
    const good = (n: number): (string | number | null)[] => [
      `가져온${n}`,
      seats[n] ?? 0,
      `imported${n}@gsm.hs.kr`,
      '남자',
      'SW개발과',
      '일반학생',
      null,
      'Rocket Lab',
    ];
    const bad = await studentWorkbook([
      good(17),
      ['가져온18', 'abc', 'imported18@gsm.hs.kr', '남자', 'SW개발과', '일반학생', null, 'Rocket Lab'],
      good(19),
      ['가져온20', 2418, 'imported20@gsm.hs.kr', '남자', 'SW개발과', '일반학생', null, '없는 동아리'],
    ]);
    const before = await api('/v1/students?email=imported');
    await upload('/admin/import', 'students.xlsx', bad, 'STUDENT');
    const rows = await page.$$eval('table.issues tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')),
    );
    expect(rows).to.have.length(2);
    expect(rows[0]?.slice(1, 4)).to.deep.equal(['3', '학번', 'abc']);
    expect(rows[0]?.[4]).to.include('네 자리 학번');
    expect(rows[1]?.slice(1, 4)).to.deep.equal(['5', '전공동아리', '없는 동아리']);
    expect(rows[1]?.[4]).to.include("'없는 동아리' 동아리가 없습니다");
    expect(await page.$('form[action="/admin/import/apply"]')).to.equal(null);
    expect(await page.textContent('[data-count="refused"]')).to.equal('2');
    await screenshot(page, 'admin-import-errors-desktop-ko');
    // Nothing was written.
    expect((await api('/v1/students?email=imported')).data['students']).to.deep.equal([]);

    const fixed = await studentWorkbook([good(17), good(18), good(19), good(20)]);
    await upload('/admin/import', 'students.xlsx', fixed, 'STUDENT');
    expect(await page.textContent('[data-count="created"]')).to.equal('4');
    expect(await page.$('table.issues')).to.equal(null);
    await screenshot(page, 'admin-import-preview-desktop-ko');
    await Promise.all([page.waitForURL(/\/admin\/audit\?batchId=[0-9a-f-]+$/), page.click('form[action="/admin/import/apply"] button')]);
    expect(await page.textContent('.flash')).to.include('가져오기를 적용했습니다');
    const after = await api('/v1/students?email=imported');
    expect(after.data['students']?.map((s) => (s as { email: string }).email)).to.deep.equal([
      'imported17@gsm.hs.kr',
      'imported18@gsm.hs.kr',
      'imported19@gsm.hs.kr',
      'imported20@gsm.hs.kr',
    ]);
    expect(after.etag).to.not.equal(before.etag);
    await screenshot(page, 'admin-audit-import-batch-desktop-ko');
  });

  it('exports the students and re-imports the file unchanged', async () => {
    await page.goto(`${t.url}/admin/export`);
    await page.selectOption('#f-entity', 'STUDENT');
    await page.check('input[name=includeGraduates]');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('main form button[type=submit]')]);
    const path = await download.path();
    // The Korean page's name, Korean letters kept (Content-Disposition filename*).
    expect(download.suggestedFilename()).to.match(/^학생-\d{8}\.xlsx$/);
    const bytes = readFileSync(path);
    await upload('/admin/import', 'students-export.xlsx', bytes, 'STUDENT');
    expect(await page.textContent('[data-count="created"]')).to.equal('0');
    expect(await page.textContent('[data-count="updated"]')).to.equal('0');
    expect(await page.textContent('[data-count="removed"]')).to.equal('0');
    expect(await page.textContent('[data-count="unchanged"]')).to.equal('233');
    expect(await page.textContent('main')).to.include('바뀌는 것이 없습니다');
    // Nothing to apply: no apply button.
    expect(await page.$('form[action="/admin/import/apply"]')).to.equal(null);
  });

  it('previews a school-year rollover (nothing written)', async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('새 학년');
    sheet.addRow(['학번', '새 반', '새 번호']);
    sheet.addRow(['1217', 2, 17]);
    const before = await api('/v1/students?email=star%40gsm.hs.kr');
    await upload('/admin/school-year', 'rollover.xlsx', Buffer.from(await workbook.xlsx.writeBuffer()));
    expect(await page.textContent('h1')).to.equal('학년도 전환 미리 보기');
    expect(await page.$('form[action="/admin/school-year/apply"]')).to.not.equal(null);
    expect(Number(await page.textContent('[data-count="updated"]'))).to.be.greaterThan(200);
    await screenshot(page, 'admin-rollover-preview-desktop-ko');
    const after = await api('/v1/students?email=star%40gsm.hs.kr');
    expect(after.etag).to.equal(before.etag);
    expect((after.data['students']?.[0] as { studentNumber: number }).studentNumber).to.equal(1217);
  });

  it('the audit log shows each change with its fields, filterable by record', async () => {
    await page.goto(`${t.url}/admin/audit`);
    const text = (await page.textContent('table.audit')) ?? '';
    expect(text).to.include('Rocket Lab');
    expect(text).to.include('새별');
    expect(text).to.include('가져온17');
    expect(text).to.include(ROOT.email);
    await screenshot(page, 'admin-audit-desktop-ko');
    await page.selectOption('#f-entity', 'CLUB');
    await Promise.all([page.waitForURL(/entity=CLUB/), page.click('form.filters button[type=submit]')]);
    const clubRows = await page.$$eval('table.audit tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''));
    expect(clubRows).to.have.length(1);
    expect(clubRows[0]).to.include('Rocket Lab');
    expect(clubRows[0]).to.include('설립연도');
  });

  it('an interrupted change shows at the top of the audit log with what became of it, and on its own page', async () => {
    // A writer that journaled a change and died before settling it (nobody holds the write lease):
    // the first reader rolls it back and marks it interrupted.
    const student = await t.db.models.students.findOne({ email: 'star@gsm.hs.kr' }).lean<StudentDoc>();
    if (!student) throw new Error('no student star@gsm.hs.kr');
    const batchId = await journalBatch(
      t.db,
      {
        actor: { kind: 'CLI' },
        action: 'IMPORT',
        summary: 'import crash.csv: 0 created, 1 updated, 0 removed, 0 unchanged',
        source: 'crash.csv',
        changes: [{ entity: 'STUDENT', id: student._id, before: student, after: { ...student, specialty: '반쯤 적용된 값' } }],
      },
      new Date(),
    );
    expect(await settleSchool(t.db)).to.deep.equal([batchId]);
    const ids = async () => (await t.db.models.students.findOne({ email: 'star@gsm.hs.kr' }).lean<StudentDoc>())?.specialty;
    expect(await ids()).to.equal(student.specialty ?? null);

    for (const [lang, viewport] of [
      ['ko', 'desktop'],
      ['en', 'desktop'],
      ['ko', 'phone'],
      ['en', 'phone'],
    ] as const) {
      await page.setViewportSize(VIEWPORTS[viewport]);
      await page.goto(`${t.url}/admin/audit?lang=${lang}`);
      const section = (await page.textContent('section[aria-labelledby="interrupted-heading"]')) ?? '';
      expect(section).to.include(lang === 'ko' ? '중단된 변경' : 'Interrupted changes');
      expect(section).to.include('import crash.csv');
      expect(section).to.match(/campus before a read \(pid \d+ on /);
      expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).to.be.at.most(VIEWPORTS[viewport].width);
      await screenshot(page, `admin-audit-interrupted-${viewport}-${lang}`);
    }
    await page.click(`li[data-batch="${batchId}"] a`);
    expect(await page.textContent('[data-status="ROLLED_BACK"]')).to.equal('Interrupted: rolled back to before it');
    expect(await page.textContent('#batch-heading + dl')).to.match(/Rolled back by\s*campus before a read/);
    await screenshot(page, 'admin-audit-interrupted-batch-phone-en');
    await page.setViewportSize(VIEWPORTS.desktop);
  });

  it('applies a rollover in the background: the job page shows its progress, then leads to its changes', async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('새 학년');
    sheet.addRow(['학번', '새 반', '새 번호']);
    sheet.addRow(['1217', 2, 17]);
    await upload('/admin/school-year?lang=ko', 'rollover.xlsx', Buffer.from(await workbook.xlsx.writeBuffer()));
    // The writer (this process: the app runs in the test) stops after 100 records until SIGUSR2.
    process.env['CAMPUS_TEST_PAUSE_AFTER'] = '100';
    let total: number;
    try {
      await Promise.all([page.waitForURL(/\/admin\/jobs\/[0-9a-f-]{36}$/), page.click('form[action="/admin/school-year/apply"] button')]);
      const jobUrl = page.url();
      // The request answered at once; the job goes on. Its page reloads itself until the job is done.
      const progress = await page.waitForSelector('[data-progress^="100/"]', { timeout: 30000 });
      total = Number((await progress.getAttribute('data-progress'))?.split('/')[1]);
      expect(total).to.be.greaterThan(200);
      expect(await progress.textContent()).to.equal(`레코드 ${total}개 중 100개 씀`);
      const res = await t.request(new URL(jobUrl).pathname, {
        headers: { cookie: (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ') },
      });
      expect(res.status).to.equal(200);
      expect(res.headers.get('refresh')).to.equal('1');
      await res.arrayBuffer();
      await screenshot(page, 'admin-job-running-desktop-ko');
      for (const [lang, viewport] of [
        ['en', 'desktop'],
        ['ko', 'phone'],
        ['en', 'phone'],
      ] as const) {
        await page.setViewportSize(VIEWPORTS[viewport]);
        await page.goto(`${jobUrl}?lang=${lang}`);
        const shown = (await page.textContent('[data-progress]')) ?? '';
        expect(shown).to.equal(lang === 'ko' ? `레코드 ${total}개 중 100개 씀` : `100 of ${total} records written`);
        expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).to.be.at.most(VIEWPORTS[viewport].width);
        await screenshot(page, `admin-job-running-${viewport}-${lang}`);
      }
      await page.setViewportSize(VIEWPORTS.desktop);
      await page.goto(`${jobUrl}?lang=ko`);
    } finally {
      delete process.env['CAMPUS_TEST_PAUSE_AFTER'];
      // Resumes the paused writer (only when one waits: the signal would otherwise end this process).
      if (process.listenerCount('SIGUSR2') > 0) process.kill(process.pid, 'SIGUSR2');
    }
    // Once written, the page leads to the batch in the audit log.
    await page.waitForURL(/\/admin\/audit\?batchId=[0-9a-f-]+$/, { timeout: 30000 });
    expect(await page.textContent('main')).to.include('학년도를 전환했습니다');
    expect(await page.textContent('[data-status]')).to.equal('적용됨');
  });
});
