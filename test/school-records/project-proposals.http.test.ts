import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { runCampus } from '../helpers/cli.js';
import { testDatabaseUri } from '../helpers/database.js';
import { expectOk } from '../helpers/expect.js';
import { eventually } from '../helpers/receiver.js';
import { buildClub, buildProject, buildStudent, insertSchool, issueKey } from '../helpers/factories.js';
import { createAccount, signInToConsole, type ConsoleSession } from '../helpers/oauth.js';
import { MAX_PENDING_PROPOSALS } from '../../src/limits.js';

/**
 * Project proposals: a student proposes a new project or a change to one they take part in
 * (/console/projects); admins review it beside the current record (/admin/proposals) and accept
 * it (written through the one write path: it appears in GET /v1/projects, the audit batch names
 * the admin) or refuse it with a reason (nothing changes); the student sees the outcome.
 * `campus projects proposals list|accept|refuse`. The proposal and each decision are in the access
 * log with their actor.
 */

interface Project {
  id: number;
  name: string;
  description: string;
  club: { id: number; name: string } | null;
  participants: { email: string }[];
}

describe('school records: project proposals (/console/projects, /admin/proposals, campus projects proposals)', function () {
  this.timeout(180000);
  let t: TestApp;
  let student: ConsoleSession;
  let admin: ConsoleSession;
  let key: string;
  const ids: Record<string, number> = {};

  async function account(name: string, role: 'USER' | 'ADMIN' = 'USER') {
    const user = { email: `${name}@gsm.hs.kr`, password: `${name} has a long password` };
    ids[name] = await createAccount(t.db, user.email, user.password);
    if (role !== 'USER') await t.db.models.accounts.updateOne({ _id: ids[name] }, { $set: { role } });
    return user;
  }
  const projects = async () =>
    (await expectOk<{ projects: Project[] }>(await t.request('/v1/projects', { headers: { 'X-API-KEY': key } }))).projects;
  const flashOf = (html: string) => /<p class="flash (?:ok|error)" role="(?:status|alert)">([^<]*)<\/p>/.exec(html)?.[1] ?? '';
  const proposalIds = async () => (await t.db.models.projectProposals.find({}).sort({ createdAt: 1 }).lean()).map((p) => p._id);
  const campus = (...args: string[]) => {
    const uri = new URL(testDatabaseUri('unused'));
    uri.pathname = `/${t.db.name}`;
    return runCampus({ MONGODB_URI: uri.href }, args);
  };

  before(async () => {
    t = await buildTestApp('project_proposals');
    await insertSchool(t.db, {
      students: [
        buildStudent({ _id: 1, name: '김학생', email: 'kim@gsm.hs.kr', grade: 2, classNum: 1, number: 1, majorClubId: 10 }),
        buildStudent({ _id: 2, name: '이학생', email: 'lee@gsm.hs.kr', grade: 2, classNum: 1, number: 2 }),
        buildStudent({ _id: 3, name: '박학생', email: 'park@gsm.hs.kr', grade: 2, classNum: 1, number: 3 }),
        buildStudent({ _id: 4, name: '최학생', email: 'choi@gsm.hs.kr', grade: 2, classNum: 1, number: 4 }),
      ],
      clubs: [buildClub({ _id: 10, name: 'Robotics', type: 'MAJOR_CLUB', leaderId: 1 })],
      projects: [
        buildProject({ _id: 1, name: 'Smart Farm', description: 'Sensors', clubId: 10, participantIds: [1], startYear: 2025 }),
        buildProject({ _id: 2, name: 'Not Mine', description: 'Someone else', clubId: null, participantIds: [2] }),
      ],
    });
    key = await issueKey(t.db, { scopes: ['PROJECT_READ'], rateLimit: { points: 100000, durationSeconds: 60 } });
    student = await signInToConsole(t, await account('kim'), '/console/projects');
    admin = await signInToConsole(t, await account('admin', 'ADMIN'), '/admin/proposals');
  });
  after(() => t?.close());

  it('a student sees their projects; a refused proposal (the admin form’s rules) is not stored; a project not theirs is 404', async () => {
    const page = await student.get('/console/projects');
    expect(page.res.status).to.equal(200);
    expect(page.html).to.include('Smart Farm').and.include('href="/console/projects/1/propose"');
    expect(page.html).to.not.include('Not Mine');
    const bad = await student.post('/console/projects/new', { name: 'Ghost', participants: 'nobody@gsm.hs.kr', status: 'ACTIVE' });
    expect(bad.res.status).to.equal(422);
    expect(bad.html).to.include('nobody@gsm.hs.kr');
    const ended = await student.post('/console/projects/new', { name: 'No End', status: 'ENDED' });
    expect(ended.res.status).to.equal(422);
    expect(await t.db.models.projectProposals.countDocuments()).to.equal(0);
    expect((await student.get('/console/projects/2/propose')).res.status).to.equal(404);
    expect((await student.post('/console/projects/2/propose', { name: 'Taken over', status: 'ACTIVE' })).res.status).to.equal(404);
  });

  it('a new project proposed and accepted appears in /v1/projects, written as the admin; the student sees it accepted', async () => {
    const sent = await student.post('/console/projects/new', {
      name: 'Campus Map',
      description: 'A map of the school',
      clubId: '10',
      participants: 'lee@gsm.hs.kr',
      startYear: '2026',
      status: 'ACTIVE',
      note: 'For the new students',
    });
    expect(sent.res.status).to.equal(303);
    expect(sent.res.headers.get('location')).to.equal('/console/projects');
    const [id = ''] = await proposalIds();
    const [proposed] = await t.db.models.accessAudit.find({ action: 'PROJECT_PROPOSED' }).lean();
    expect(proposed).to.deep.include({
      actorKind: 'ACCOUNT',
      actorId: ids['kim'],
      actorEmail: 'kim@gsm.hs.kr',
      targetKind: 'PROPOSAL',
      targetId: id,
    });
    expect((await projects()).map((p) => p.name)).to.deep.equal(['Smart Farm', 'Not Mine']);

    const list = await admin.get('/admin/proposals');
    expect(list.html).to.include(`href="/admin/proposals/${id}"`).and.include('새 프로젝트: Campus Map').and.include('kim@gsm.hs.kr');
    const detail = await admin.get(`/admin/proposals/${id}`);
    expect(detail.html).to.include('For the new students').and.include('(새 프로젝트)').and.include('수락하고 반영');
    const accepted = await admin.post(`/admin/proposals/${id}/accept`, {});
    expect(accepted.res.status).to.equal(303);

    const all = await projects();
    const made = all.find((p) => p.name === 'Campus Map');
    expect(made).to.deep.include({ description: 'A map of the school' });
    expect(made?.club?.name).to.equal('Robotics');
    // The proposer takes part in the project they proposed.
    expect(made?.participants.map((p) => p.email)).to.deep.equal(['kim@gsm.hs.kr', 'lee@gsm.hs.kr']);
    const stored = await t.db.models.projectProposals.findOne({ _id: id }).lean();
    const batch = await t.db.models.auditBatches.findOne({ _id: stored?.batchId }).lean();
    expect(batch).to.deep.include({ actorKind: 'ACCOUNT', actorId: ids['admin'], actorEmail: 'admin@gsm.hs.kr', action: 'CREATE' });
    const [decision] = await t.db.models.accessAudit.find({ action: 'PROPOSAL_ACCEPTED' }).lean();
    expect(decision).to.deep.include({ actorKind: 'ACCOUNT', actorId: ids['admin'], targetId: id });
    expect(flashOf((await admin.get(`/admin/proposals/${id}`)).html)).to.equal(`제안을 수락해 프로젝트 #${made?.id}에 반영했습니다.`);
    expect((await admin.post(`/admin/proposals/${id}/accept`, {})).res.headers.get('location')).to.equal(`/admin/proposals/${id}`);
    expect(flashOf((await admin.get(`/admin/proposals/${id}`)).html)).to.equal('이미 결정된 제안입니다.');
    expect(all).to.have.length(3);

    const mine = await student.get('/console/projects');
    expect(mine.html).to.include('새 프로젝트: Campus Map').and.include(`반영됨 (프로젝트 #${made?.id})`);
  });

  it('a change refused (a reason is required) does not appear in /v1/projects; the student reads the reason', async () => {
    const form = await student.get('/console/projects/1/propose');
    expect(form.html).to.include('value="Smart Farm"').and.include('kim@gsm.hs.kr');
    const sent = await student.post('/console/projects/1/propose', {
      name: 'Smart Farm',
      description: 'Sensors and a robot arm',
      clubId: '10',
      participants: 'kim@gsm.hs.kr',
      startYear: '2025',
      status: 'ACTIVE',
    });
    expect(sent.res.status).to.equal(303);
    const id = (await proposalIds()).at(-1) ?? '';
    const detail = await admin.get(`/admin/proposals/${id}`);
    // Beside the current record: the changed field is marked, the others are not.
    expect(detail.html).to.include('Sensors and a robot arm').and.include('#1 변경: Smart Farm');
    expect(detail.html.match(/<span class="tag">바뀜<\/span>/g)).to.have.length(1);

    const noReason = await admin.post(`/admin/proposals/${id}/refuse`, { reason: '  ' });
    expect(noReason.res.status).to.equal(422);
    expect(noReason.html).to.include('거절 이유를 적으세요.');
    const refused = await admin.post(`/admin/proposals/${id}/refuse`, { reason: 'The arm is another project' });
    expect(refused.res.status).to.equal(303);
    const farm = (await projects()).find((p) => p.id === 1);
    expect(farm?.description).to.equal('Sensors');
    const [decision] = await t.db.models.accessAudit.find({ action: 'PROPOSAL_REFUSED' }).lean();
    expect(decision).to.deep.include({ actorKind: 'ACCOUNT', actorId: ids['admin'], targetId: id });
    const mine = await student.get('/console/projects');
    expect(mine.html).to.include('변경: Smart Farm').and.include('거절됨').and.include('이유: The arm is another project');
  });

  it('`campus projects proposals list|accept|refuse` decide as the operator (CLI)', async () => {
    for (const name of ['Weather Station', 'Drone Club Site']) {
      const sent = await student.post('/console/projects/new', { name, status: 'ACTIVE' });
      expect(sent.res.status).to.equal(303);
    }
    const [weather = '', drone = ''] = (await proposalIds()).slice(-2);
    const listed = await campus('projects', 'proposals', 'list', '--state', 'PENDING', '--json');
    expect(listed.code, listed.stderr).to.equal(0);
    const pending = JSON.parse(listed.stdout) as { _id: string; state: string; proposerEmail: string }[];
    expect(pending.map((p) => p._id).sort()).to.deep.equal([weather, drone].sort());
    expect(pending.every((p) => p.state === 'PENDING' && p.proposerEmail === 'kim@gsm.hs.kr')).to.equal(true);

    const accepted = await campus('projects', 'proposals', 'accept', weather, '--json');
    expect(accepted.code, accepted.stderr).to.equal(0);
    const written = JSON.parse(accepted.stdout) as { state: string; resultProjectId: number; decidedByKind: string; batchId: string };
    expect(written).to.deep.include({ state: 'ACCEPTED', decidedByKind: 'CLI' });
    // The service in this process learns of another process's write within a second (the data
    // version's age, src/data/platform/versions.ts), so the new project is waited for, not read at once.
    await eventually(
      async () => (await projects()).some((p) => p.name === 'Weather Station'),
      5000,
      'the accepted project in /v1/projects',
    );
    const batch = await t.db.models.auditBatches.findOne({ _id: written.batchId }).lean();
    expect(batch).to.deep.include({ actorKind: 'CLI', action: 'CREATE' });

    const noReason = await campus('projects', 'proposals', 'refuse', drone);
    expect(noReason.code).to.equal(1);
    expect(noReason.stderr).to.include("required option '--reason <text>' not specified");
    const refused = await campus('projects', 'proposals', 'refuse', drone, '--reason', 'Not a project', '--json');
    expect(refused.code, refused.stderr).to.equal(0);
    expect(JSON.parse(refused.stdout)).to.deep.include({ state: 'REFUSED', reason: 'Not a project', decidedByKind: 'CLI' });
    expect(await t.db.models.projects.countDocuments({ name: 'Drone Club Site' })).to.equal(0);
    const human = await campus('projects', 'proposals', 'list', '--state', 'refused');
    expect(human.stdout).to.include(`${drone} REFUSED new project "Drone Club Site" by kim@gsm.hs.kr (reason: Not a project)`);
    const again = await campus('projects', 'proposals', 'accept', drone);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.include(`Proposal ${drone} is not waiting: it was refused already.`);
    const [entry] = await t.db.models.accessAudit.find({ action: 'PROPOSAL_REFUSED', targetId: drone }).lean();
    expect(entry).to.deep.include({ actorKind: 'CLI', actorId: null });
  });

  it('an account without a student record is told only students propose', async () => {
    const teacher = await signInToConsole(t, await account('teacher'), '/console/projects');
    const page = await teacher.get('/console/projects');
    expect(page.html).to.include('프로젝트 제안은 학생만 할 수 있습니다');
    expect((await teacher.post('/console/projects/new', { name: 'X', status: 'ACTIVE' })).res.status).to.equal(403);
  });

  it(`at most ${MAX_PENDING_PROPOSALS} proposals of a student wait at once: the next is 422 naming the cap, a decision makes room`, async () => {
    const park = await signInToConsole(t, await account('park'), '/console/projects');
    const csrf = await park.csrf();
    const propose = (name: string) => park.post('/console/projects/new', { name, status: 'ACTIVE' }, csrf);
    for (let i = 1; i <= MAX_PENDING_PROPOSALS; i++) expect((await propose(`Park idea ${i}`)).res.status).to.equal(303);
    const over = await propose('Park idea 6');
    expect(over.res.status).to.equal(422);
    expect(over.html).to.include('검토를 기다리는 제안이 이미 5개입니다 (한 번에 5개까지). 관리자가 하나를 수락하거나 거절한 뒤 보내세요.');
    expect(over.html).to.include('value="Park idea 6"');
    const english = await park.post('/console/projects/new?lang=en', { name: 'Park idea 6', status: 'ACTIVE' }, csrf);
    expect(english.res.status).to.equal(422);
    expect(english.html).to.include('You already have 5 proposals waiting for a decision (the most at once).');
    const pending = await t.db.models.projectProposals.find({ proposerAccountId: ids['park'], state: 'PENDING' }).lean();
    expect(pending.map((p) => (p.proposed as { name: string }).name).sort()).to.deep.equal([1, 2, 3, 4, 5].map((i) => `Park idea ${i}`));
    expect((await park.get('/console/projects?lang=ko')).html).to.include(
      '검토를 기다리는 제안은 한 번에 5개까지 둘 수 있습니다 (지금 5개).',
    );
    // Refused by an admin: room for one more.
    expect((await admin.post(`/admin/proposals/${pending[0]?._id ?? ''}/refuse`, { reason: 'One at a time' })).res.status).to.equal(303);
    expect((await propose('Park idea 6')).res.status).to.equal(303);
    expect((await propose('Park idea 7')).res.status).to.equal(422);
  });

  it('proposals sent at once cannot pass the cap together (counted again once stored)', async () => {
    const choi = await signInToConsole(t, await account('choi'), '/console/projects');
    const csrf = await choi.csrf();
    const sent = await Promise.all(
      Array.from({ length: 12 }, (_, i) => choi.post('/console/projects/new', { name: `Choi idea ${i}`, status: 'ACTIVE' }, csrf)),
    );
    const statuses = sent.map((r) => r.res.status);
    expect(
      statuses.every((s) => s === 303 || s === 422),
      String(statuses),
    ).to.equal(true);
    const stored = await t.db.models.projectProposals.countDocuments({ proposerAccountId: ids['choi'], state: 'PENDING' });
    expect(stored).to.equal(statuses.filter((s) => s === 303).length);
    expect(stored).to.be.at.most(MAX_PENDING_PROPOSALS);
    // Their audit records are the stored proposals' only.
    expect(await t.db.models.accessAudit.countDocuments({ action: 'PROJECT_PROPOSED', actorEmail: 'choi@gsm.hs.kr' })).to.equal(stored);
  });
});
