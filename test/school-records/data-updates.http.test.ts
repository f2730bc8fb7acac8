import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { runCampus } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/database.js';
import { buildClub, buildStudent, insertSchool } from '../helpers/factories.js';
import { authorize, CookieJar, createClient, REDIRECT_URI, signInToConsole, type ConsoleSession } from '../helpers/oauth.js';
import { AccountService } from '../../src/oauth/accounts.js';

/**
 * Data updates asked at sign-in, over HTTP (test/accounts/student-self.browser.test.ts walks them
 * in Chromium): an admin asks chosen students to check chosen fields; the next sign-in of exactly
 * those students, single sign-on included, shows the form before the app gets its code; the
 * answer is validated like the admin form and written with the student as the actor; a withdrawn
 * request asks no more; the `campus students request-update` command makes, lists and withdraws
 * requests.
 */
describe('school records: data updates asked at sign-in (/admin/students/requests, campus students request-update)', function () {
  this.timeout(180000);
  let t: TestApp;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let admin: ConsoleSession;
  let clientId: string;
  const mina = { email: 'mina@school.test', password: 'mina reads at night' };
  const jun = { email: 'jun@school.test', password: 'jun plays the drums' };
  const boss = { email: 'admin@school.test', password: 'the admin of the school' };
  const jars = { mina: new CookieJar(), jun: new CookieJar() };
  const params = (state: string) => ({ client_id: clientId, redirect_uri: REDIRECT_URI, response_type: 'code', state });
  const campus = (...args: string[]) => runCampus({ MONGODB_URI: db.uri }, ['students', 'request-update', ...args]);

  before(async () => {
    db = await createTestDatabase('data_updates');
    t = await buildTestApp('data_updates', { db });
    await insertSchool(t.db, {
      clubs: [buildClub({ _id: 1, name: '전공A', type: 'MAJOR_CLUB' })],
      students: [
        buildStudent({ _id: 1, email: mina.email, name: '이민아', grade: 2, classNum: 1, number: 3, dormitoryRoom: 301 }),
        buildStudent({ _id: 2, email: jun.email, name: '최준', grade: 2, classNum: 2, number: 4 }),
      ],
    });
    const accounts = new AccountService(t.db);
    for (const user of [mina, jun]) await accounts.create({ email: user.email, password: user.password });
    await accounts.create({ email: boss.email, password: boss.password, role: 'ADMIN' });
    clientId = (await createClient(t.db, { name: 'Club app', firstParty: true })).client.id;
    // Both students sign in to the app once: their browsers then have single sign-on.
    for (const [name, user] of [
      ['mina', mina],
      ['jun', jun],
    ] as const) {
      const first = await authorize(t, params('first'), user, { jar: jars[name] });
      expect(first.code).to.be.a('string');
    }
    admin = await signInToConsole(t, boss, '/admin/students/requests');
  });
  after(async () => {
    await t?.close();
    await db?.drop();
  });

  /** Posts the data-update form of an interaction page and follows the redirects to the app (or the next page). */
  async function answer(jar: CookieJar, pageHtml: string, fields: Record<string, string>) {
    const csrf = /name="csrf" value="([^"]+)"/.exec(pageHtml)?.[1] ?? '';
    const action = /<form method="post" action="([^"]+\/data-update)"/.exec(pageHtml)?.[1] ?? '';
    expect(action, 'the data-update form').to.not.equal('');
    let res = await fetch(new URL(action, t.url), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded', origin: t.url },
      body: new URLSearchParams({ csrf, ...fields }).toString(),
    });
    jar.store(res);
    for (let hop = 0; hop < 8 && res.headers.get('location'); hop++) {
      const target = new URL(res.headers.get('location') ?? '', t.url);
      if (target.origin !== t.url) return { status: res.status, code: target.searchParams.get('code'), html: '' };
      res = await fetch(target, { redirect: 'manual', headers: { cookie: jar.header() } });
      jar.store(res);
    }
    return { status: res.status, code: null, html: await res.text() };
  }

  it('an admin asks one student (by student number) to check the dormitory room and GitHub id, with a message', async () => {
    const res = await admin.post('/admin/students/requests', {
      students: '2103',
      fields: ['dormitoryRoom', 'githubId'],
      message: '기숙사 호실을 확인하세요',
    });
    expect(res.res.status).to.equal(303);
    const detail = await admin.get(res.res.headers.get('location') ?? '');
    expect(detail.res.status).to.equal(200);
    expect(detail.html).to.include('이민아').and.include('data-answered="no"').and.not.include('최준');
    // The access log names the admin who asked, what and of how many.
    const id = (res.res.headers.get('location') ?? '').split('/').at(-1);
    const entry = await t.db.models.accessAudit.findOne({ action: 'DATA_UPDATE_REQUESTED', targetId: id }).lean();
    expect(entry).to.deep.include({
      actorKind: 'ACCOUNT',
      actorEmail: boss.email,
      targetKind: 'UPDATE_REQUEST',
      targetLabel: 'dormitoryRoom, githubId',
      detail: { fields: ['dormitoryRoom', 'githubId'], students: 1 },
    });
  });

  it("the request interrupts that student's next sign-in through single sign-on, with the current values and the message; the other student is not asked", async () => {
    const junWalk = await authorize(t, params('jun-2'), jun, { jar: jars.jun });
    expect(junWalk.code).to.be.a('string');
    expect(junWalk.pages).to.have.length(0);

    const walk = await authorize(t, params('mina-2'), mina, { jar: jars.mina, stopOn: 200 });
    expect(walk.code).to.equal(null);
    const form = walk.pages.at(-1) ?? '';
    expect(form)
      .to.include('기숙사 호실을 확인하세요')
      .and.include('name="dormitoryRoom"')
      .and.include('value="301"')
      .and.include('name="githubId"');
    expect(form).not.to.include('name="password"').and.not.include('name="specialty"');

    // Validated like the admin form: a room outside 201-518 comes back at its field, nothing written.
    const batches = await t.db.models.auditBatches.countDocuments();
    const refused = await answer(jars.mina, form, { dormitoryRoom: '999', githubId: 'mina-lee' });
    expect(refused.status).to.equal(422);
    expect(refused.html).to.include('호실: 201~518 사이의 정수여야 합니다 (입력: 999)');
    expect(await t.db.models.auditBatches.countDocuments()).to.equal(batches);

    // The answer: written with the student as the actor, and the app gets its code.
    const done = await answer(jars.mina, form, { dormitoryRoom: '412', githubId: 'mina-lee' });
    expect(done.code, done.html.slice(-500)).to.be.a('string');
    const batch = await t.db.models.auditBatches
      .findOne({ summary: /student #1/ })
      .sort({ at: -1 })
      .lean();
    expect(batch).to.include({ actorKind: 'ACCOUNT', actorEmail: mina.email, action: 'UPDATE', status: 'APPLIED' });
    const student = await t.db.models.students.findOne({ _id: 1 }).lean();
    expect(student).to.include({ dormitoryRoom: 412, githubId: 'mina-lee' });

    // Answered: the next sign-in goes straight to the app.
    const after = await authorize(t, params('mina-3'), mina, { jar: jars.mina });
    expect(after.code).to.be.a('string');
    expect(after.pages).to.have.length(0);
    const detail = await admin.get('/admin/students/requests');
    expect(detail.html).to.include('1 / 1명');
  });

  it('a request asked of a whole class and withdrawn no longer interrupts', async () => {
    const res = await admin.post('/admin/students/requests', { grade: '2', classNum: '2', fields: ['specialty'] });
    expect(res.res.status).to.equal(303);
    const path = res.res.headers.get('location') ?? '';
    const asked = await authorize(t, params('jun-3'), jun, { jar: jars.jun, stopOn: 200 });
    expect(asked.code).to.equal(null);
    expect(asked.pages.at(-1)).to.include('name="specialty"');
    const withdrawn = await admin.post(`${path}/withdraw`, {});
    expect(withdrawn.res.status).to.equal(303);
    expect((await admin.get(path)).html).to.include('data-status="WITHDRAWN"');
    const entry = await t.db.models.accessAudit.findOne({ action: 'DATA_UPDATE_WITHDRAWN', targetId: path.split('/').at(-1) }).lean();
    expect(entry).to.deep.include({ actorKind: 'ACCOUNT', actorEmail: boss.email, targetKind: 'UPDATE_REQUEST', targetLabel: 'specialty' });
    const free = await authorize(t, params('jun-4'), jun, { jar: jars.jun });
    expect(free.code).to.be.a('string');
    expect(free.pages).to.have.length(0);
  });

  it('a request without students or fields is refused at the form (422)', async () => {
    const res = await admin.post('/admin/students/requests', { message: 'x' });
    expect(res.res.status).to.equal(422);
    expect(res.html).to.include('학생 목록, 학년 또는 검색 중 하나를 채우세요.').and.include('확인할 항목을 하나 이상 고르세요.');
    const unknown = await admin.post('/admin/students/requests', { students: 'nobody@school.test', fields: ['githubId'] });
    expect(unknown.res.status).to.equal(422);
    expect(unknown.html).to.include('No enrolled student is nobody@school.test');
  });

  it('campus students request-update makes, lists (with who answered) and withdraws requests', async () => {
    const made = await campus('--students', jun.email, '--fields', 'githubId,specialty', '--message', 'Check please', '--json');
    expect(made.code, made.stderr).to.equal(0);
    const request = JSON.parse(made.stdout) as {
      id: string;
      status: string;
      fields: string[];
      asked: number;
      students: { email: string }[];
    };
    expect(request).to.include({ status: 'OPEN', asked: 1 });
    expect(request.fields).to.deep.equal(['githubId', 'specialty']);
    const listed = await campus('--list', '--json');
    expect(listed.code, listed.stderr).to.equal(0);
    const all = JSON.parse(listed.stdout) as { id: string; answered: number; students: { email: string; answeredAt: string | null }[] }[];
    expect(all.map((r) => r.id)).to.include(request.id);
    const answered = all.find((r) => r.students.some((s) => s.email === mina.email && s.answeredAt));
    expect(answered?.answered).to.equal(1);
    const withdrawn = await campus('--withdraw', request.id, '--json');
    expect(withdrawn.code, withdrawn.stderr).to.equal(0);
    expect(JSON.parse(withdrawn.stdout)).to.include({ id: request.id, status: 'WITHDRAWN' });
    const logged = await t.db.models.accessAudit.find({ targetId: request.id }).sort({ at: 1 }).lean();
    expect(logged.map((e) => [e.action, e.actorKind, e.actorEmail])).to.deep.equal([
      ['DATA_UPDATE_REQUESTED', 'CLI', null],
      ['DATA_UPDATE_WITHDRAWN', 'CLI', null],
    ]);
    const bad = await campus('--students', jun.email, '--fields', 'name');
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.include('Unknown field name');
  });

  it("campus accounts sessions lists a person's sign-ins and ends them: that browser is asked for its password again", async () => {
    const accounts = (...args: string[]) => runCampus({ MONGODB_URI: db.uri }, ['accounts', 'sessions', ...args]);
    const listed = await accounts(mina.email, '--json');
    expect(listed.code, listed.stderr).to.equal(0);
    const { sessions } = JSON.parse(listed.stdout) as { sessions: { id: string; current: boolean }[] };
    expect(sessions).to.have.length(1);
    const ended = await accounts('end', mina.email, '--id', sessions[0]?.id ?? '', '--json');
    expect(ended.code, ended.stderr).to.equal(0);
    expect(JSON.parse(ended.stdout)).to.deep.equal({ email: mina.email, ended: 1 });
    const again = await authorize(t, params('mina-4'), mina, { jar: jars.mina });
    expect(again.code).to.be.a('string');
    expect(again.pages.some((p) => p.includes('name="password"'))).to.equal(true);
    const all = await accounts('end', jun.email, '--all', '--json');
    expect(JSON.parse(all.stdout)).to.deep.equal({ email: jun.email, ended: 1 });
    const none = await accounts('end', jun.email);
    expect(none.code).to.equal(1);
    expect(none.stderr).to.include('exactly one of --id <id> and --all');
  });
});
