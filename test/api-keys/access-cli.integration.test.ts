import { expect } from 'chai';
import { AccountStore } from '../../src/data/accounts/store.js';
import { migrate } from '../../src/data/migrations.js';
import { hashPassword } from '../../src/oauth/secrets.js';
import { jsonOf, runCampus } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/** The approval commands, run as people run them: keys by owner and their approval, apps by owner and their state, teachers' sign-ups. */
const campus = (uri: string, ...args: string[]) => runCampus({ MONGODB_URI: uri, SMTP_URL: '' }, args);

describe('API keys: campus keys --owner|approve|refuse, clients --owner|approve|disable|enable, accounts approve|refuse', function () {
  this.timeout(180000);
  let uri: string;
  let db: TestDatabase;

  before(async () => {
    db = await createTestDatabase('access_cli');
    uri = db.uri;
    await migrate(db);
    const store = new AccountStore(db);
    const hash = await hashPassword('a long enough password');
    await store.create({ email: 'student@school.test', passwordHash: hash, role: 'USER' });
    await store.create({ email: 'teacher@school.test', passwordHash: hash, role: 'TEACHER' });
    await store.create({
      email: 'applicant@school.test',
      passwordHash: hash,
      role: 'USER',
      name: '김선생',
      department: '정보과',
      approval: 'PENDING',
    });
    await store.create({
      email: 'other@school.test',
      passwordHash: hash,
      role: 'USER',
      name: '이선생',
      department: '수학과',
      approval: 'PENDING',
    });
  });
  after(() => db.drop());

  it('keys issue --owner follows the role’s policy; approve and refuse decide; list --json shows each scope’s state', async () => {
    const issued = await campus(
      uri,
      'keys',
      'issue',
      '--owner',
      'student@school.test',
      '--scopes',
      'CLUB_READ,STUDENT_READ',
      '--purpose',
      '출석부',
      '--json',
    );
    const key = jsonOf<{
      id: string;
      prefix: string;
      scopes: string[];
      pendingScopes: string[];
      scopeStates: object;
      ownerAccountId: number;
    }>(issued);
    expect(key).to.deep.include({ scopes: ['CLUB_READ'], pendingScopes: ['STUDENT_READ'] });
    expect(key.scopeStates).to.deep.equal({ CLUB_READ: 'approved', STUDENT_READ: 'pending' });

    const noPurpose = await campus(uri, 'keys', 'issue', '--owner', 'student@school.test', '--scopes', 'STUDENT_READ');
    expect(noPurpose.code).to.not.equal(0);
    expect(noPurpose.stderr).to.include('STUDENT_READ needs an administrator');
    const withDays = await campus(uri, 'keys', 'issue', '--owner', 'student@school.test', '--scopes', 'CLUB_READ', '--days', '3');
    expect(withDays.stderr).to.include('--days and --rate-limit are not allowed with it');
    const teacher = JSON.parse(
      (await campus(uri, 'keys', 'issue', '--owner', 'teacher@school.test', '--scopes', 'STUDENT_READ', '--json')).stdout,
    ) as {
      scopes: string[];
    };
    expect(teacher.scopes).to.deep.equal(['STUDENT_READ']);
    const operator = JSON.parse((await campus(uri, 'keys', 'issue', '--scopes', 'STUDENT_READ', '--json')).stdout) as {
      scopes: string[];
      ownerAccountId: null;
    };
    expect(operator).to.deep.include({ scopes: ['STUDENT_READ'], ownerAccountId: null });

    const approved = await campus(uri, 'keys', 'approve', key.prefix, '--json');
    expect(approved.code, approved.stderr).to.equal(0);
    expect((JSON.parse(approved.stdout) as { scopeStates: object }).scopeStates).to.deep.equal({
      STUDENT_READ: 'approved',
      CLUB_READ: 'approved',
    });
    const again = await campus(uri, 'keys', 'refuse', key.prefix);
    expect(again.stderr).to.include('has no scope awaiting approval');

    const second = JSON.parse(
      (
        await campus(
          uri,
          'keys',
          'issue',
          '--owner',
          'student@school.test',
          '--scopes',
          'NEIS_READ,STUDENT_READ',
          '--purpose',
          'x',
          '--json',
        )
      ).stdout,
    ) as { id: string };
    expect((await campus(uri, 'keys', 'refuse', second.id)).stdout).to.include('Refused STUDENT_READ');
    const list = JSON.parse((await campus(uri, 'keys', 'list', '--json')).stdout) as { id: string; scopeStates: object }[];
    expect(list.find((k) => k.id === second.id)?.scopeStates).to.deep.equal({ NEIS_READ: 'approved', STUDENT_READ: 'refused' });
    expect(
      await db.models.accessAudit.countDocuments({ actorKind: 'CLI', action: { $in: ['KEY_SCOPES_APPROVED', 'KEY_SCOPES_REFUSED'] } }),
    ).to.equal(2);
  });

  it('clients create --owner registers as the console would; approve, disable, enable; list --json shows owner and state', async () => {
    const school = await campus(
      uri,
      'clients',
      'create',
      '--name',
      '동아리 출석부',
      '--redirect-uri',
      'https://school.example/cb',
      '--json',
    );
    expect(school.code, school.stderr).to.equal(0);
    const copy = await campus(
      uri,
      'clients',
      'create',
      '--owner',
      'student@school.test',
      '--name',
      '동아리\u200b출석부'.replace('\u200b', ' '),
      '--redirect-uri',
      'https://a.example/cb',
    );
    expect(copy.stderr).to.include("belongs to one of the school's own apps");
    const created = await campus(
      uri,
      'clients',
      'create',
      '--owner',
      'student@school.test',
      '--name',
      'My club app',
      '--redirect-uri',
      'https://a.example/cb',
      '--scope',
      'self:read',
      '--json',
    );
    const app = jsonOf<{ id: string; state: string; firstParty: boolean; ownerAccountId: number }>(created);
    expect(app).to.deep.include({ state: 'testing', firstParty: false });
    expect(
      (
        await campus(
          uri,
          'clients',
          'create',
          '--owner',
          'student@school.test',
          '--name',
          'x',
          '--redirect-uri',
          'https://a.example/cb',
          '--first-party',
        )
      ).stderr,
    ).to.include('not allowed with it');

    for (const [action, state] of [
      ['approve', 'active'],
      ['disable', 'disabled'],
      ['enable', 'active'],
    ] as const) {
      const done = await campus(uri, 'clients', action, app.id, '--json');
      expect(done.code, done.stderr).to.equal(0);
      expect((JSON.parse(done.stdout) as { state: string }).state, action).to.equal(state);
    }
    const list = JSON.parse((await campus(uri, 'clients', 'list', '--json')).stdout) as {
      id: string;
      ownerEmail: string | null;
      state: string;
      name: string;
    }[];
    expect(list.map((c) => [c.name, c.ownerEmail, c.state])).to.deep.equal([
      ['동아리 출석부', null, 'active'],
      ['My club app', 'student@school.test', 'active'],
    ]);
    expect((await campus(uri, 'clients', 'list')).stdout)
      .to.include('owner=student@school.test')
      .and.include('owner=operator');
    const log = await db.models.accessAudit.find({ targetKind: 'APP' }).sort({ at: 1 }).lean();
    expect(log.map((e) => [e.actorKind, e.action])).to.deep.equal([
      ['CLI', 'APP_APPROVED'],
      ['CLI', 'APP_DISABLED'],
      ['CLI', 'APP_ENABLED'],
    ]);
  });

  it('accounts approve makes a teacher TEACHER; refuse leaves USER; both in the access log', async () => {
    const approved = await campus(uri, 'accounts', 'approve', 'applicant@school.test', '--json');
    expect(approved.code, approved.stderr).to.equal(0);
    expect(JSON.parse(approved.stdout)).to.deep.include({ role: 'TEACHER', approval: 'APPROVED', mailed: true });
    const refused = await campus(uri, 'accounts', 'refuse', 'other@school.test');
    expect(refused.stdout).to.include('Refused: ').and.include('other@school.test USER');
    expect((await campus(uri, 'accounts', 'refuse', 'other@school.test')).stderr).to.include('is not waiting for approval');
    expect((await campus(uri, 'accounts', 'approve', 'nobody@school.test')).stderr).to.include('No account nobody@school.test');
    const log = await db.models.accessAudit.find({ targetKind: 'ACCOUNT' }).sort({ at: 1 }).lean();
    expect(log.map((e) => [e.actorKind, e.action, e.targetLabel])).to.deep.equal([
      ['CLI', 'TEACHER_APPROVED', 'applicant@school.test'],
      ['CLI', 'TEACHER_REFUSED', 'other@school.test'],
    ]);
    for (const command of [
      'keys approve',
      'keys refuse',
      'clients approve',
      'clients disable',
      'clients enable',
      'accounts approve',
      'accounts refuse',
    ]) {
      const help = await campus(uri, ...command.split(' '), '--help');
      expect(help.stdout, command).to.include('--json');
    }
  });
});
