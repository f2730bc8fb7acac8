import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildClub, buildStudent, insertSchool, issueKey } from '../helpers/factories.js';
import { authorize, CookieJar, createAccount, createClient, signInToConsole, type ConsoleSession } from '../helpers/oauth.js';
import { COOKIE_NAMES } from '../../src/oauth/constants.js';
import { PROFILE_SAVE_LIMIT } from '../../src/limits.js';

/**
 * My profile and my sign-ins over HTTP: a student edits their own record in /console/profile through
 * the one write path (the data API shows it with a new ETag, the audit log names the student, an
 * event is written), a field not theirs is refused; /console/sessions lists the person's sign-ins
 * and ends them (that browser is asked for its password again).
 */
describe('accounts and sign-in: my profile and my sign-ins (/console/profile, /console/sessions)', function () {
  this.timeout(120000);
  let t: TestApp;
  let key: string;
  const mina = { email: 'mina@school.test', password: 'mina reads at night' };
  const teacher = { email: 'kim@school.test', password: 'kim teaches maths' };
  const jun = { email: 'jun@school.test', password: 'jun saves too often' };
  let m: ConsoleSession;

  before(async () => {
    t = await buildTestApp('self_profile');
    await insertSchool(t.db, {
      clubs: [buildClub({ _id: 1, name: 'SW 동아리', type: 'MAJOR_CLUB' })],
      students: [
        buildStudent({ _id: 7, email: mina.email, name: '이민아', specialty: 'Backend', githubId: 'mina' }),
        buildStudent({ _id: 8, email: jun.email, name: '박준', grade: 2, classNum: 1, number: 2 }),
      ],
    });
    await createAccount(t.db, jun.email, jun.password);
    await createAccount(t.db, mina.email, mina.password);
    await createAccount(t.db, teacher.email, teacher.password);
    key = await issueKey(t.db, { scopes: ['STUDENT_READ'] });
    m = await signInToConsole(t, mina, '/console/profile');
  });
  after(() => t?.close());

  const studentApi = () => t.request('/v1/students?email=mina@school.test', { headers: { 'X-API-KEY': key } });

  describe('my profile', () => {
    it('shows the record as the data API serves it, with a form of the editable fields only', async () => {
      const { res, html } = await m.get('/console/profile');
      expect(res.status).to.equal(200);
      expect(html).to.include('이민아').and.include('Backend');
      expect(html).to.include('name="specialty"').and.include('name="githubId"');
      expect(html).not.to.include('name="dormitoryRoom"').and.not.include('name="name"');
    });

    it('a specialty edited by the student: the data API shows it with a new ETag, audited and announced with the student as actor', async () => {
      const before = await studentApi();
      const etag = before.headers.get('etag');
      const saved = await m.post('/console/profile', { specialty: '  Security  ', githubId: 'mina' });
      expect(saved.res.status).to.equal(303);
      expect(saved.res.headers.get('location')).to.equal('/console/profile');
      const after = await studentApi();
      expect(after.status).to.equal(200);
      expect(after.headers.get('etag')).to.be.a('string').and.not.equal(etag);
      const body = (await after.json()) as { data: { students: { specialty: string; githubId: string }[] } };
      expect(body.data.students[0]).to.include({ specialty: 'Security', githubId: 'mina' });
      const batch = await t.db.models.auditBatches
        .findOne({ summary: /student #7/ })
        .sort({ at: -1 })
        .lean();
      expect(batch).to.include({ actorKind: 'ACCOUNT', actorEmail: mina.email, action: 'UPDATE', status: 'APPLIED' });
      const entries = await t.db.models.auditEntries.find({ batchId: batch?._id }).lean();
      expect(entries.map((e) => e.recordId)).to.deep.equal([7]);
      const event = await t.db.client
        .db()
        .collection('school_events')
        .findOne({ type: 'student.updated' }, { sort: { _id: -1 } });
      expect(event).to.not.equal(null);
    });

    it('a field the student may not edit is refused (422, named at the form) and nothing is written', async () => {
      const batches = await t.db.models.auditBatches.countDocuments();
      const res = await m.post('/console/profile', { specialty: 'Games', dormitoryRoom: '301' });
      expect(res.res.status).to.equal(422);
      expect(res.html).to.include('호실: 직접 고칠 수 없는 항목입니다');
      expect(await t.db.models.auditBatches.countDocuments()).to.equal(batches);
      const body = (await (await studentApi()).json()) as { data: { students: { specialty: string; dormitoryRoom: number | null }[] } };
      expect(body.data.students[0]?.specialty).to.equal('Security');
    });

    it('the rules of the admin form apply: a bad GitHub id comes back at its field', async () => {
      const res = await m.post('/console/profile', { githubId: '-not-valid-' });
      expect(res.res.status).to.equal(422);
      expect(res.html).to.include('GitHub 아이디: GitHub 아이디 형식이 아닙니다');
      expect(res.html).to.match(/id="f-githubId"[^>]*aria-invalid="true"|aria-invalid="true"[^>]*id="f-githubId"/);
    });

    it('an account with no student record sees that, and cannot post', async () => {
      const k = await signInToConsole(t, teacher, '/console/profile');
      const page = await k.get('/console/profile');
      expect(page.res.status).to.equal(200);
      expect(page.html).to.include('학생 정보가 연결되어 있지 않습니다');
      expect((await k.post('/console/profile', { specialty: 'x' })).res.status).to.equal(403);
    });

    it(`at most ${PROFILE_SAVE_LIMIT.points} saves a minute per account: of 15 sent at once the rest are 429 with Retry-After, the form keeping what was typed; another account still saves`, async () => {
      const j = await signInToConsole(t, jun, '/console/profile');
      const csrf = await j.csrf();
      const sent = await Promise.all(Array.from({ length: 15 }, (_, i) => j.post('/console/profile', { specialty: `Try ${i}` }, csrf)));
      const statuses = sent.map((s) => s.res.status);
      expect(statuses.filter((s) => s === 303)).to.have.length(PROFILE_SAVE_LIMIT.points);
      expect(statuses.filter((s) => s === 429)).to.have.length(15 - PROFILE_SAVE_LIMIT.points);
      const refused = sent.find((s) => s.res.status === 429);
      const wait = Number(refused?.res.headers.get('retry-after'));
      expect(wait).to.be.within(1, PROFILE_SAVE_LIMIT.durationSeconds);
      expect(refused?.html).to.include(`저장은 1분에 10번까지입니다. ${wait}초 뒤에 다시 저장하세요.`);
      expect(refused?.html).to.match(/name="specialty"[^>]*value="Try \d+"|value="Try \d+"[^>]*name="specialty"/);
      const english = await j.post('/console/profile?lang=en', { specialty: 'Later' }, csrf);
      expect(english.res.status).to.equal(429);
      expect(english.html).to.match(/At most 10 saves every minute\. Save again in \d+ seconds?\./);
      // Nothing of the refused saves was written: the batches of this student are the saves let through.
      expect(await t.db.models.auditBatches.countDocuments({ actorEmail: jun.email })).to.equal(PROFILE_SAVE_LIMIT.points);
      expect((await m.post('/console/profile', { specialty: 'Security', githubId: 'mina' })).res.status).to.equal(303);
    });
  });

  describe('my sign-ins', () => {
    it('lists the sign-ins with browser and system from the user agent, this one marked; ending another makes that browser sign in again', async () => {
      const app = await createClient(t.db, { name: 'Other app', firstParty: true });
      // A second browser (a phone) signs in to an app.
      const phone = new CookieJar();
      const ua = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36';
      const first = await authorize(
        t,
        { client_id: app.client.id, redirect_uri: 'http://127.0.0.1:9/callback', response_type: 'code', state: 's1' },
        mina,
        {
          jar: phone,
          userAgent: ua,
        },
      );
      expect(first.code).to.be.a('string');
      const list = await m.get('/console/sessions');
      expect(list.res.status).to.equal(200);
      expect(list.html).to.include('Chrome 131').and.include('Android');
      expect(list.html.match(/data-current="yes"/g)).to.have.length(1);
      // Single sign-on: the phone is not asked for its password again.
      const again = await authorize(
        t,
        { client_id: app.client.id, redirect_uri: 'http://127.0.0.1:9/callback', response_type: 'code', state: 's2' },
        mina,
        {
          jar: phone,
          userAgent: ua,
        },
      );
      expect(again.code).to.be.a('string');
      expect(again.pages).to.have.length(0);
      // End the phone's sign-in from this browser's page.
      const phoneRow = list.html.split('<tr').find((row) => row.includes('Chrome 131')) ?? '';
      const phoneId = /action="\/console\/sessions\/([^/"]+)\/end"/.exec(phoneRow)?.[1];
      expect(phoneId).to.be.a('string');
      const ended = await m.post(`/console/sessions/${phoneId ?? ''}/end`, {});
      expect(ended.res.status).to.equal(303);
      expect((await m.get('/console/sessions')).html).not.to.include('Chrome 131');
      // The phone is asked for its password again.
      const third = await authorize(
        t,
        { client_id: app.client.id, redirect_uri: 'http://127.0.0.1:9/callback', response_type: 'code', state: 's3' },
        mina,
        {
          jar: phone,
          userAgent: ua,
        },
      );
      expect(third.code).to.be.a('string');
      expect(third.pages.some((p) => p.includes('name="password"'))).to.equal(true);
      // This browser is still signed in.
      expect((await m.get('/console/sessions')).res.status).to.equal(200);
      expect(m.jar.get(COOKIE_NAMES.session)).to.be.a('string');
    });

    it('"sign out every other browser" keeps only this one', async () => {
      const app = await createClient(t.db, { name: 'Third app', firstParty: true });
      await authorize(
        t,
        { client_id: app.client.id, redirect_uri: 'http://127.0.0.1:9/callback', response_type: 'code', state: 'x' },
        mina,
      );
      const before = await m.get('/console/sessions');
      expect(before.html.match(/\/end"/g)?.length ?? 0).to.be.greaterThan(1);
      const res = await m.post('/console/sessions/end-others', {});
      expect(res.res.status).to.equal(303);
      const after = await m.get('/console/sessions');
      expect(after.html.match(/\/end"/g)).to.have.length(1);
      expect(after.html).to.include('data-current="yes"');
    });

    it("another person's sign-in cannot be ended (it reads as not found)", async () => {
      const k = await signInToConsole(t, teacher, '/console/sessions');
      const theirs = /action="\/console\/sessions\/([^/"]+)\/end"/.exec((await k.get('/console/sessions')).html)?.[1] ?? '';
      const res = await m.post(`/console/sessions/${theirs}/end`, {});
      expect(res.res.status).to.equal(303);
      expect((await k.get('/console/sessions')).res.status).to.equal(200);
      expect((await k.get('/console/sessions')).html).to.include(`/console/sessions/${theirs}/end`);
    });
  });
});
