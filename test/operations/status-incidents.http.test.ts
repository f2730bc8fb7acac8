import { expect } from 'chai';
import type { Database } from '../../src/data/database.js';
import type { PublicIncident, StatusReport } from '../../src/data/operations/status.js';
import { keepUpload } from '../../src/data/school/uploads.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { jsonOf, runCampus } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/database.js';
import { createAccount, signInToConsole, type ConsoleSession } from '../helpers/oauth.js';

/**
 * Incidents and planned maintenance on the status page (src/data/operations/incidents.ts): posted,
 * updated and closed by staff in /admin/status and by `campus status incident`, shown on /status
 * and in GET /v1/status with their updates (who posted stays with staff); a previewed school-year
 * rollover shows as planned maintenance; the front door links to the page. The clock is the
 * test's: what another process wrote is read again once the page's memory of it (10 s) is past.
 */
describe('operations: incidents and maintenance, posted from the admin console and from the command, on the status page', function () {
  this.timeout(120000);
  let db: Database & { uri: string; drop(): Promise<void> };
  let t: TestApp;
  let admin: ConsoleSession;
  // Today, to the second: a staff page wants a sign-in of the last 15 minutes by this clock.
  let clock = new Date(Math.floor(Date.now() / 1000) * 1000);
  const later = (seconds = 11) => (clock = new Date(clock.getTime() + seconds * 1000));
  const campus = (...args: string[]) => runCampus({ MONGODB_URI: db.uri, NEIS_SYNC_ENABLED: 'false' }, ['status', ...args]);

  const status = async (): Promise<StatusReport> => {
    const res = await t.request('/v1/status');
    expect(res.status).to.equal(200);
    return ((await res.json()) as { data: StatusReport }).data;
  };
  const page = async (lang: 'ko' | 'en' = 'ko') => {
    const res = await t.request(`/status?lang=${lang}`);
    expect(res.status).to.equal(200);
    return res.text();
  };

  before(async () => {
    db = await createTestDatabase('status_incidents');
    t = await buildTestApp('status_incidents', { db, now: () => clock });
    const id = await createAccount(db, 'admin@gsm.hs.kr', 'admin keeps the status page');
    await db.models.accounts.updateOne({ _id: id }, { $set: { role: 'ADMIN' } });
    admin = await signInToConsole(t, { email: 'admin@gsm.hs.kr', password: 'admin keeps the status page' }, '/admin/status');
  });
  after(async () => {
    await t.close();
    await db.drop();
  });

  it('the front door links to the status page, which anyone may open; /admin/status is for staff', async () => {
    expect(await (await t.request('/')).text()).to.include('<a href="/status">서비스 상태</a>');
    const shown = await page('en');
    expect(shown).to.include('<h1');
    expect(shown).to.include('Service status');
    expect(shown).to.include('No incident or maintenance is under way.');
    expect(shown).to.include('<a href="/v1/status">/v1/status</a>');
    const anonymous = await t.request('/admin/status', { redirect: 'manual' });
    expect(anonymous.status).to.equal(303);
    expect(anonymous.headers.get('location')).to.equal('/web/signin?next=%2Fadmin%2Fstatus');
    expect((await admin.get('/admin/status')).res.status).to.equal(200);
    expect((await admin.get('/admin/status/0000000z')).res.status).to.equal(404);
    // GET /v1/health says no rollover is being applied.
    const health = (await (await t.request('/v1/health')).json()) as { data: { rollover: unknown } };
    expect(health.data.rollover).to.deep.equal({ underWay: false });
  });

  it('posts, updates and resolves an incident from the console: the page and /v1/status show it with its updates', async () => {
    const refused = await admin.post('/admin/status', {
      kind: 'INCIDENT',
      title: '',
      message: '원인을 찾고 있습니다.',
      state: '',
      startsAt: '',
      endsAt: '',
    });
    expect(refused.res.status).to.equal(422);
    expect(refused.html).to.include('제목은 1자에서 120자까지입니다.');
    const badTime = await admin.post('/admin/status', { kind: 'INCIDENT', title: 'x', message: 'y', startsAt: '2026-13-01T09:00' });
    expect(badTime.res.status).to.equal(422);
    expect(badTime.html).to.include('날짜와 시각을 골라 주세요.');

    const opened = await admin.post('/admin/status', {
      kind: 'INCIDENT',
      title: '급식 API가 응답하지 않습니다',
      message: 'NEIS에서 급식을 가져오지 못하고 있습니다. 원인을 찾고 있습니다.',
      parts: ['data-api', 'neis'],
      state: '',
      startsAt: '',
      endsAt: '',
    });
    expect(opened.res.status).to.equal(303);
    const path = opened.res.headers.get('location') ?? '';
    expect(path).to.match(/^\/admin\/status\/[0-9a-f]{8}$/);
    const id = path.split('/').at(-1) ?? '';
    let report = await status();
    expect(report.current).to.deep.equal([
      {
        id,
        kind: 'INCIDENT',
        title: '급식 API가 응답하지 않습니다',
        parts: ['data-api', 'neis'],
        state: 'INVESTIGATING',
        startsAt: clock.toISOString(),
        endsAt: null,
        resolvedAt: null,
        updates: [
          { at: clock.toISOString(), state: 'INVESTIGATING', message: 'NEIS에서 급식을 가져오지 못하고 있습니다. 원인을 찾고 있습니다.' },
        ],
      },
    ] satisfies PublicIncident[]);
    expect(report.parts.find((p) => p.part === 'neis')?.incidents).to.deep.equal([id]);
    let shown = await page();
    expect(shown).to.include('급식 API가 응답하지 않습니다');
    expect(shown).to.include('조사 중');
    // Who posted it is for staff only.
    expect(shown).to.not.include('admin@gsm.hs.kr');
    expect(JSON.stringify(report)).to.not.include('admin@gsm.hs.kr');
    expect((await admin.get(path)).html).to.include('올린 사람: admin@gsm.hs.kr');

    later(60);
    const updated = await admin.post(path, { state: 'IDENTIFIED', message: 'NEIS 점검 때문입니다. 끝나면 다시 가져옵니다.' });
    expect(updated.res.status).to.equal(303);
    report = await status();
    expect(report.current[0]?.state).to.equal('IDENTIFIED');
    expect(report.current[0]?.updates.map((u) => u.state)).to.deep.equal(['INVESTIGATING', 'IDENTIFIED']);
    shown = await page('en');
    expect(shown.indexOf('NEIS 점검 때문입니다')).to.be.lessThan(shown.indexOf('원인을 찾고 있습니다'));
    expect(shown).to.include('Identified');

    later(60);
    const resolved = await admin.post(`${path}/resolve`, { closing: '급식을 다시 가져왔습니다.' });
    expect(resolved.res.status).to.equal(303);
    report = await status();
    expect(report.current).to.deep.equal([]);
    expect(report.past[0]).to.deep.include({ id, state: 'RESOLVED', resolvedAt: clock.toISOString() });
    expect(report.past[0]?.updates).to.have.length(3);
    expect(await page()).to.include('해결됨');
    // A closed incident takes no more updates.
    const again = await admin.post(path, { state: 'MONITORING', message: '한 번 더' });
    expect(again.res.status).to.equal(409);
    expect(again.html).to.include('닫힌 공지에는 소식을 올릴 수 없습니다.');
  });

  it('posts, updates and completes planned maintenance with `campus status incident ... --json`; `campus status --json` prints the report', async () => {
    const opened = await campus(
      'incident',
      'open',
      '--kind',
      'maintenance',
      '--title',
      '데이터베이스 점검',
      '--message',
      '12월 5일 밤에 데이터베이스를 옮깁니다.',
      '--parts',
      'database,data-api',
      '--starts',
      '2026-12-05 22:00',
      '--ends',
      '2026-12-05T23:30:00+09:00',
      '--json',
    );
    const incident = jsonOf<{
      _id: string;
      state: string;
      startsAt: string;
      endsAt: string;
      updates: { byKind: string }[];
    }>(opened);
    expect(incident).to.deep.include({ state: 'SCHEDULED', startsAt: '2026-12-05T13:00:00.000Z', endsAt: '2026-12-05T14:30:00.000Z' });
    expect(incident.updates[0]?.byKind).to.equal('CLI');
    later();
    let report = await status();
    expect(report.current.find((i) => i.id === incident._id)).to.deep.include({
      kind: 'MAINTENANCE',
      state: 'SCHEDULED',
      parts: ['data-api', 'database'],
    });
    // Planned: shown under planned maintenance, and not yet against the parts.
    expect(report.parts.find((p) => p.part === 'database')?.incidents).to.deep.equal([]);
    expect(await page('en')).to.match(/Planned maintenance<\/h2>[\s\S]*데이터베이스 점검/);

    const refused = await campus('incident', 'update', incident._id, '--message', '끝', '--state', 'COMPLETED');
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.equal("campus: state: one of SCHEDULED, IN_PROGRESS for maintenance (got 'COMPLETED').\n");
    expect((await campus('incident', 'open', '--kind', 'party', '--title', 't', '--message', 'm')).stderr).to.equal(
      "campus: --kind: incident or maintenance (got 'party').\n",
    );
    expect((await campus('incident', 'update', 'nope', '--message', 'm')).stderr).to.equal('campus: No incident nope.\n');

    const started = await campus('incident', 'update', incident._id, '--message', '시작했습니다.', '--state', 'in_progress', '--json');
    expect(started.code, started.stderr).to.equal(0);
    expect((JSON.parse(started.stdout) as { state: string }).state).to.equal('IN_PROGRESS');
    later();
    report = await status();
    expect(report.current.find((i) => i.id === incident._id)?.state).to.equal('IN_PROGRESS');
    expect(report.parts.find((p) => p.part === 'database')?.incidents).to.deep.equal([incident._id]);
    expect(await page('en')).to.match(/Incidents and maintenance now<\/h2>[\s\S]*데이터베이스 점검[\s\S]*In progress/);

    const done = await campus('incident', 'resolve', incident._id, '--message', '끝났습니다.', '--json');
    expect(done.code, done.stderr).to.equal(0);
    expect((JSON.parse(done.stdout) as { state: string }).state).to.equal('COMPLETED');
    later();
    report = await status();
    expect(report.current).to.deep.equal([]);
    expect(report.past.map((i) => [i.id, i.state])[0]).to.deep.equal([incident._id, 'COMPLETED']);

    const listed = await campus('incident', 'list', '--json');
    expect((JSON.parse(listed.stdout) as { _id: string }[]).map((i) => i._id)).to.include(incident._id);
    const printed = await campus('--json');
    const fromCommand = jsonOf<StatusReport>(printed);
    expect(fromCommand.parts.map((p) => p.part)).to.deep.equal(['data-api', 'sign-in', 'userinfo', 'database', 'neis', 'webhooks']);
    expect(fromCommand.past.map((i) => i.id)).to.include(incident._id);
    expect((await campus()).stdout).to.match(/^Status: (UP|DEGRADED|DOWN) \(checked /);
  });

  it('a school-year rollover previewed in the admin console shows as planned maintenance until its preview expires', async () => {
    await keepUpload(db, {
      kind: 'ROLLOVER',
      entity: 'STUDENT',
      accountId: 1,
      fileName: 'rollover.csv',
      content: Buffer.from('학번,새 반\r\n1101,2\r\n'),
      removeMissing: false,
      now: clock,
    });
    later();
    const report = await status();
    expect(report.rollover).to.deep.equal({
      underWay: null,
      planned: {
        previewedAt: new Date(clock.getTime() - 11_000).toISOString(),
        until: new Date(clock.getTime() - 11_000 + 3_600_000).toISOString(),
      },
    });
    expect(await page()).to.match(/예정된 점검<\/h2>[\s\S]*학년도 전환/);
    expect(await page('en')).to.include('Staff previewed the school-year rollover');
    // An hour on, the preview is gone and so is the plan.
    later(3600);
    expect((await status()).rollover.planned).to.equal(null);
  });
});
