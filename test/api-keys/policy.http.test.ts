import { ApiKeyService } from '../../src/data/keys/store.js';
import { expect } from 'chai';
import { AccountStore } from '../../src/data/accounts/store.js';
import { DEFAULT_SCOPE_POLICY, POLICY_SCOPES, type PolicyRole, type PolicyScope } from '../../src/config/scope-policy.js';
import { hashPassword } from '../../src/oauth/secrets.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { buildClub, buildStudent, insertSchool } from '../helpers/factories.js';
import { signInToConsole, type ConsoleSession } from '../helpers/oauth.js';

/**
 * Scopes by role, with approval (docs/api-keys.md, "Scopes by role, with approval"): the policy table per role in the developer console;
 * a pending scope answers 403 FORBIDDEN saying it awaits approval while the key's other scopes
 * work; an admin approves (it works at once) or refuses (it stays refused); every decision is in
 * the access log.
 */

const STUDENT = { email: 'jiho@school.test', password: 'key policy student' };
const TEACHER = { email: 'park.teacher@school.test', password: 'key policy teacher' };
const ADMIN = { email: 'admin@school.test', password: 'key policy admin!' };
const ROOT = { email: 'root@school.test', password: 'key policy root!!' };

/** An endpoint of the data API for each scope: what a key holding it reads. */
const SCOPE_ENDPOINTS = {
  STUDENT_READ: '/v1/students',
  CLUB_READ: '/v1/clubs',
  PROJECT_READ: '/v1/projects',
  NEIS_READ: '/v1/neis/meals',
} as const satisfies Record<PolicyScope, string>;

async function accountWith(t: TestApp, user: { email: string; password: string }, role: PolicyRole): Promise<number> {
  return (await new AccountStore(t.db).create({ email: user.email, passwordHash: await hashPassword(user.password), role }))._id;
}

/** Follows the redirect after a console POST; the page it lands on. */
async function follow(session: ConsoleSession, res: Response): Promise<string> {
  return (await session.get(res.headers.get('location') ?? '')).html;
}

const shownKey = (html: string) => /id="shown-once"[^>]*>([0-9a-f-]{36})</.exec(html)?.[1] ?? '';

describe('API keys: scopes by role, with approval', () => {
  let t: TestApp;
  let student: ConsoleSession;
  let teacher: ConsoleSession;
  let admin: ConsoleSession;

  before(async () => {
    t = await buildTestApp('key_policy');
    await insertSchool(t.db, {
      students: [buildStudent({ _id: 1, email: STUDENT.email, name: '최지호', majorClubId: 5, dormitoryRoom: 410 })],
      clubs: [buildClub({ _id: 5, name: 'Robots', type: 'MAJOR_CLUB' })],
    });
    await accountWith(t, STUDENT, 'USER');
    await accountWith(t, TEACHER, 'TEACHER');
    await accountWith(t, ADMIN, 'ADMIN');
    student = await signInToConsole(t, STUDENT);
    teacher = await signInToConsole(t, TEACHER);
    admin = await signInToConsole(t, ADMIN, '/admin');
  });
  after(() => t.close());

  const get = (path: string, key: string) => t.request(path, { headers: { 'X-API-KEY': key } });

  it('a student: CLUB_READ works at once; STUDENT_READ needs a purpose, then waits (403 saying so) until an admin approves', async () => {
    const form = await student.get('/console/keys');
    expect(form.html).to.include('관리자 승인 필요').and.include('바로 사용');

    const noPurpose = await student.post('/console/keys', { label: 'club app', scopes: ['CLUB_READ', 'STUDENT_READ'] });
    expect(noPurpose.res.status).to.equal(422);
    expect(noPurpose.html).to.include('STUDENT_READ은(는) 관리자의 승인이 필요합니다. 사용 목적을 적으세요.');
    expect(await t.db.models.apiKeys.countDocuments({})).to.equal(0);

    const created = await student.post('/console/keys', {
      label: 'club app',
      scopes: ['CLUB_READ', 'STUDENT_READ'],
      purpose: '동아리 출석부에 부원 학번을 보여 주려고',
    });
    expect(created.res.status).to.equal(303);
    const page = await follow(student, created.res);
    const key = shownKey(page);
    expect(key).to.match(/^[0-9a-f-]{36}$/);
    expect(page).to.include('STUDENT_READ은(는) 관리자의 승인을 기다립니다.');
    expect(page).to.include('data-scope-state="pending"').and.include('data-scope-state="approved"');

    await expectOk(await get('/v1/clubs', key));
    await expectEnvelope(
      await get('/v1/students', key),
      403,
      'FORBIDDEN',
      "This API key's STUDENT_READ scope awaits an administrator's approval; it works for its other scopes meanwhile.",
    );
    expect((await student.get('/console/keys')).html).to.include('STUDENT_READ · 승인 대기');

    // The admin sees it on /admin: owner, purpose, scopes.
    const home = await admin.get('/admin');
    expect(home.html)
      .to.include('승인을 기다리는 키 권한 요청 1건')
      .and.include(STUDENT.email)
      .and.include('동아리 출석부에 부원 학번을 보여 주려고');
    const id = String((await t.db.models.apiKeys.findOne({}).lean())?._id);
    const approved = await admin.post(`/admin/keys/${id}/scopes`, { decision: 'approve', back: '/admin' });
    expect(approved.res.status).to.equal(303);
    expect(await follow(admin, approved.res)).to.include('권한 요청을 승인했습니다.');

    const students = await expectOk<{ students: { dormitoryRoom: number }[] }>(await get('/v1/students', key));
    expect(students.students[0]?.dormitoryRoom).to.equal(410);
    expect((await student.get('/console/keys')).html).not.to.include('승인 대기');
    expect((await admin.get('/admin')).html).not.to.include('승인을 기다리는 키 권한 요청');

    const entry = await t.db.models.accessAudit.findOne({ action: 'KEY_SCOPES_APPROVED' }).lean();
    expect(entry).to.include({ actorKind: 'ACCOUNT', actorEmail: ADMIN.email, targetKind: 'API_KEY', targetId: id });
    expect(entry?.detail).to.deep.include({ scopes: ['STUDENT_READ'], after: ['CLUB_READ', 'STUDENT_READ'] });
  });

  it('a refused request stays refused: the key keeps its other scopes', async () => {
    const created = await student.post('/console/keys', { label: 'second', scopes: ['NEIS_READ', 'STUDENT_READ'], purpose: '급식 앱' });
    const key = shownKey(await follow(student, created.res));
    const doc = await t.db.models.apiKeys.findOne({ label: 'second' }).lean();
    const refused = await admin.post(`/admin/keys/${String(doc?._id)}/scopes`, { decision: 'refuse', back: '/admin' });
    expect(await follow(admin, refused.res)).to.include('권한 요청을 거절했습니다.');
    await expectEnvelope(
      await get('/v1/students', key),
      403,
      'FORBIDDEN',
      'This API key lacks the STUDENT_READ scope that this endpoint requires.',
    );
    expect((await t.request('/v1/neis/meals', { headers: { 'X-API-KEY': key } })).status).to.equal(200);
    expect((await student.get('/console/keys')).html).to.include('STUDENT_READ · 거절됨');
    // Deciding again: nothing is pending.
    const again = await admin.post(`/admin/keys/${String(doc?._id)}/scopes`, { decision: 'approve', back: '/admin' });
    expect(await follow(admin, again.res)).to.include('그 키에는 승인을 기다리는 권한이 없습니다.');
    expect(await t.db.models.accessAudit.countDocuments({ action: 'KEY_SCOPES_REFUSED', targetId: String(doc?._id) })).to.equal(1);
  });

  it('/admin/audit?log=access lists the decisions, filterable by action, actor and target', async () => {
    const all = await admin.get('/admin/audit?log=access');
    expect(all.res.status).to.equal(200);
    expect(all.html)
      .to.include('<h1>접근 기록</h1>')
      .and.include('data-action="KEY_SCOPES_APPROVED"')
      .and.include('data-action="KEY_SCOPES_REFUSED"');
    expect(all.html).to.include(ADMIN.email).and.include(STUDENT.email);
    const approvals = await admin.get('/admin/audit?log=access&action=KEY_SCOPES_APPROVED');
    expect(approvals.html).to.include('data-action="KEY_SCOPES_APPROVED"').and.not.include('data-action="KEY_SCOPES_REFUSED"');
    expect((await admin.get('/admin/audit?log=access&actor=CLI')).html).to.include('기록이 없습니다.');
    expect((await admin.get(`/admin/audit?log=access&target=${encodeURIComponent(STUDENT.email)}`)).html).to.include('2건');
    expect((await admin.get('/admin/audit?log=access&from=2000-01-01&to=2000-01-02')).html).to.include('기록이 없습니다.');
    // The school data's log links to it, and back.
    expect((await admin.get('/admin/audit')).html).to.include('href="/admin/audit?log=access"');
  });

  it('exports of personal data are in the access log: who, what, with which filter', async () => {
    const file = await admin.get('/admin/export/file?entity=STUDENT&format=CSV&includeGraduates=yes');
    expect(file.res.status).to.equal(200);
    const audit = await admin.get('/admin/audit/export?format=CSV&entity=STUDENT');
    expect(audit.res.status).to.equal(200);
    const exports = await t.db.models.accessAudit.find({ action: 'DATA_EXPORTED' }).sort({ at: 1 }).lean();
    expect(exports.map((e) => [e.actorEmail, e.targetId, e.detail])).to.deep.equal([
      [ADMIN.email, 'STUDENT', { entity: 'STUDENT', format: 'CSV', includeGraduates: true }],
      [ADMIN.email, 'AUDIT_LOG', { format: 'CSV', filter: { entity: 'STUDENT' } }],
    ]);
    expect((await admin.get('/admin/audit?log=access&action=DATA_EXPORTED')).html)
      .to.include('개인정보 내보내기')
      .and.include('includeGraduates');
  });

  it('a teacher and an admin get all four scopes at once', async () => {
    for (const [session, label] of [
      [teacher, 'teacher key'],
      [admin, 'admin key'],
    ] as const) {
      const created = await session.post('/console/keys', {
        label,
        scopes: ['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ', 'NEIS_READ'],
      });
      const key = shownKey(await follow(session, created.res));
      await expectOk(await get('/v1/students', key));
      const doc = await t.db.models.apiKeys.findOne({ label }).lean();
      const summary = await new ApiKeyService(t.db, t.config.policy).get(String(doc?._id));
      expect(summary?.pendingScopes).to.deep.equal([]);
    }
  });

  it('the default table: USER gets NEIS, CLUB and PROJECT at once and STUDENT_READ on approval; TEACHER, ADMIN, ROOT all four', async () => {
    await accountWith(t, ROOT, 'ROOT');
    const root = await signInToConsole(t, ROOT);
    const answers: Partial<Record<PolicyRole, Record<string, number>>> = {};
    const keys: Partial<Record<PolicyRole, string>> = {};
    for (const [role, session] of [
      ['USER', student],
      ['TEACHER', teacher],
      ['ADMIN', admin],
      ['ROOT', root],
    ] as const) {
      // Each asks for every scope in the console, as a person would; the data API says what the key then reads.
      const created = await session.post('/console/keys', {
        label: `every scope (${role})`,
        scopes: [...POLICY_SCOPES],
        purpose: '표 확인',
      });
      expect(created.res.status, role).to.equal(303);
      const key = shownKey(await follow(session, created.res));
      keys[role] = key;
      const statuses: Record<string, number> = {};
      for (const scope of POLICY_SCOPES) {
        const res = await get(SCOPE_ENDPOINTS[scope], key);
        await res.arrayBuffer();
        statuses[scope] = res.status;
      }
      answers[role] = statuses;
    }
    const allFour = { STUDENT_READ: 200, CLUB_READ: 200, PROJECT_READ: 200, NEIS_READ: 200 };
    expect(answers).to.deep.equal({
      USER: { STUDENT_READ: 403, CLUB_READ: 200, PROJECT_READ: 200, NEIS_READ: 200 },
      TEACHER: allFour,
      ADMIN: allFour,
      ROOT: allFour,
    });
    // The USER's 403 is the wait for approval, not a refusal.
    await expectEnvelope(
      await get(SCOPE_ENDPOINTS.STUDENT_READ, keys.USER ?? ''),
      403,
      'FORBIDDEN',
      "This API key's STUDENT_READ scope awaits an administrator's approval; it works for its other scopes meanwhile.",
    );
  });
});

describe('API keys: the scope policy is configurable (KEY_SCOPE_POLICY)', () => {
  let t: TestApp;
  after(() => t.close());

  it('a role the policy does not allow a scope is refused at the field', async () => {
    t = await buildTestApp('key_policy_config', {
      env: { KEY_SCOPE_POLICY: JSON.stringify({ USER: { granted: ['NEIS_READ'], approval: ['CLUB_READ'] } }) },
    });
    expect(t.config.policy.scopePolicy.USER).to.deep.equal({ granted: ['NEIS_READ'], approval: ['CLUB_READ'] });
    expect(t.config.policy.scopePolicy.TEACHER).to.deep.equal(DEFAULT_SCOPE_POLICY.TEACHER);
    await accountWith(t, STUDENT, 'USER');
    const s = await signInToConsole(t, STUDENT);
    const refused = await s.post('/console/keys', { label: 'x', scopes: ['STUDENT_READ', 'NEIS_READ'] });
    expect(refused.res.status).to.equal(422);
    expect(refused.html).to.include('내 역할로는 STUDENT_READ 권한을 요청할 수 없습니다.');
    expect(await t.db.models.apiKeys.countDocuments({})).to.equal(0);
  });
});
