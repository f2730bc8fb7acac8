import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { authorize, createAccount, createClient, postJson, REDIRECT_URI, signInToConsole, type ConsoleSession } from '../helpers/oauth.js';
import { TestMailServer } from '../helpers/smtp.js';
import { AccountStore } from '../../src/data/accounts/store.js';
import { ApiKeyService } from '../../src/data/keys/store.js';
import { hashPassword } from '../../src/oauth/secrets.js';

/** The admin console's accounts and API keys pages (src/surfaces/admin/accounts.ts, keys.ts). */
describe("accounts and sign-in: every user's accounts and API keys in the admin console", function () {
  this.timeout(120000);
  let t: TestApp;
  let mail: TestMailServer;
  let admin: ConsoleSession;
  let root: ConsoleSession;
  const ids: Record<string, number> = {};

  async function account(
    name: string,
    role: 'USER' | 'TEACHER' | 'ADMIN' | 'ROOT' = 'USER',
    teacher?: { name: string; department: string },
  ): Promise<{ email: string; password: string }> {
    const user = { email: `${name}@gsm.hs.kr`, password: `${name} has a long password` };
    ids[name] = await createAccount(t.db, user.email, user.password);
    await t.db.models.accounts.updateOne(
      { _id: ids[name] },
      { $set: { role, ...(teacher ? { name: teacher.name, department: teacher.department, approval: 'PENDING' } : {}) } },
    );
    return user;
  }

  function flashOf(html: string): string {
    return /<p class="flash (?:ok|error)" role="(?:status|alert)">([^<]*)<\/p>/.exec(html)?.[1] ?? '';
  }

  before(async () => {
    mail = await TestMailServer.start();
    t = await buildTestApp('admin_accounts', { env: { SMTP_URL: mail.url } });
    admin = await signInToConsole(t, await account('admin', 'ADMIN'), '/admin/accounts');
    root = await signInToConsole(t, await account('root', 'ROOT'), '/admin/accounts');
  });
  after(async () => {
    await t?.close();
    await mail?.close();
  });

  it('only ADMIN and ROOT accounts open these pages', async () => {
    const user = await signInToConsole(t, await account('plain'), '/console');
    expect((await user.get('/admin/accounts')).res.status).to.equal(403);
    expect((await user.get('/admin/keys')).res.status).to.equal(403);
    expect((await user.post('/admin/accounts/1/role', { role: 'ROOT' })).res.status).to.equal(403);
    expect(await t.db.models.accounts.countDocuments({ role: 'ROOT' })).to.equal(1);
  });

  it('teachers waiting for approval are listed; approving makes the account TEACHER (not ADMIN) and mails the teacher', async () => {
    const teacher = await account('kimteacher', 'USER', { name: '김선생', department: '정보과' });
    await account('leeteacher', 'USER', { name: '이선생', department: '수학과' });
    const list = await admin.get('/admin/accounts?approval=PENDING');
    expect(list.html).to.include('승인을 기다리는 교사 신청이 2건 있습니다.').and.include('김선생 · 정보과').and.include('이선생 · 수학과');
    expect(list.html).not.to.include('plain@gsm.hs.kr');

    const approved = await admin.post(`/admin/accounts/${ids['kimteacher']}/approval`, {
      decision: 'approve',
      back: '/admin/accounts?approval=PENDING',
    });
    expect(approved.res.headers.get('location')).to.equal('/admin/accounts?approval=PENDING');
    expect(flashOf((await admin.get('/admin/accounts')).html)).to.equal('kimteacher@gsm.hs.kr을(를) 교사로 승인했습니다.');
    const stored = await t.db.models.accounts.findOne({ _id: ids['kimteacher'] }).lean();
    expect(stored).to.deep.include({ role: 'TEACHER', approval: 'APPROVED', approvalDecidedBy: ids['admin'] });
    const sent = await mail.waitFor(teacher.email);
    expect(sent.subject).to.include('교사 계정 승인');
    // A teacher is not an administrator: no admin console.
    const asTeacher = await signInToConsole(t, teacher, '/console');
    expect((await asTeacher.get('/admin')).res.status).to.equal(403);
    expect((await asTeacher.get('/admin/accounts')).res.status).to.equal(403);
    // Apps see the teacher record under self:read (and student:read), role TEACHER.
    const app = await createClient(t.db, { firstParty: true });
    const granted = await authorize(
      t,
      { client_id: app.client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's' },
      teacher,
    );
    const tokens = (await (
      await postJson(t, '/v1/oauth/token', {
        grant_type: 'authorization_code',
        code: granted.code,
        client_id: app.client.id,
        client_secret: app.secret,
        redirect_uri: REDIRECT_URI,
        code_verifier: granted.verifier,
      })
    ).json()) as { access_token: string };
    const info = (await (await t.request('/userinfo', { headers: { authorization: `Bearer ${tokens.access_token}` } })).json()) as Record<
      string,
      unknown
    >;
    expect(info).to.deep.include({ role: 'TEACHER', isStudent: false, student: null, teacher: { name: '김선생', department: '정보과' } });
    const logged = await t.db.models.accessAudit.findOne({ action: 'TEACHER_APPROVED', targetId: String(ids['kimteacher']) }).lean();
    expect(logged).to.deep.include({ actorKind: 'ACCOUNT', actorEmail: 'admin@gsm.hs.kr', targetLabel: teacher.email });
    expect(logged?.detail).to.deep.include({ name: '김선생', department: '정보과', from: 'USER', to: 'TEACHER' });

    await admin.post(`/admin/accounts/${ids['leeteacher']}/approval`, { decision: 'reject' });
    expect(await t.db.models.accounts.findOne({ _id: ids['leeteacher'] }).lean()).to.deep.include({ role: 'USER', approval: 'REJECTED' });
    expect(await t.db.models.accessAudit.countDocuments({ action: 'TEACHER_REFUSED', targetId: String(ids['leeteacher']) })).to.equal(1);
    // A decided sign-up is not decided again.
    await admin.post(`/admin/accounts/${ids['leeteacher']}/approval`, { decision: 'approve' });
    expect(flashOf((await admin.get('/admin/accounts')).html)).to.equal('승인을 기다리는 신청이 아닙니다.');
    expect(await t.db.models.accounts.findOne({ _id: ids['leeteacher'] }).lean()).to.deep.include({ role: 'USER' });
  });

  it('role changes: nobody changes their own; only a ROOT gives or takes ADMIN and ROOT, with a confirmation; each is in the access log', async () => {
    await account('dev');
    // An ADMIN may make an account TEACHER or USER, not ADMIN.
    await admin.post(`/admin/accounts/${ids['dev']}/role`, { role: 'TEACHER' });
    expect((await t.db.models.accounts.findOne({ _id: ids['dev'] }).lean())?.role).to.equal('TEACHER');
    await admin.post(`/admin/accounts/${ids['dev']}/role`, { role: 'ADMIN', confirm: 'yes' });
    expect(flashOf((await admin.get('/admin/accounts')).html)).to.equal(
      '관리자(ADMIN)·최고 관리자(ROOT) 계정과 그 역할은 최고 관리자만 다룰 수 있습니다.',
    );
    expect((await t.db.models.accounts.findOne({ _id: ids['dev'] }).lean())?.role).to.equal('TEACHER');
    const adminList = await admin.get('/admin/accounts?q=dev@');
    expect(adminList.html).not.to.include('<option value="ADMIN"').and.not.include('관리자 권한 부여 확인');
    await admin.post(`/admin/accounts/${ids['dev']}/role`, { role: 'ROOT' });
    expect(flashOf((await admin.get('/admin/accounts')).html)).to.equal(
      '관리자(ADMIN)·최고 관리자(ROOT) 계정과 그 역할은 최고 관리자만 다룰 수 있습니다.',
    );
    await admin.post(`/admin/accounts/${ids['root']}/role`, { role: 'USER' });
    expect(flashOf((await admin.get('/admin/accounts')).html)).to.equal(
      '관리자(ADMIN)·최고 관리자(ROOT) 계정과 그 역할은 최고 관리자만 다룰 수 있습니다.',
    );
    await admin.post(`/admin/accounts/${ids['admin']}/role`, { role: 'USER' });
    expect(flashOf((await admin.get('/admin/accounts')).html)).to.equal('자신의 역할이나 신청은 바꿀 수 없습니다.');
    expect((await t.db.models.accounts.findOne({ _id: ids['admin'] }).lean())?.role).to.equal('ADMIN');
    // A ROOT makes an account ADMIN only with the confirmation ticked.
    expect((await root.get('/admin/accounts?q=dev@')).html).to.include('관리자 권한 부여 확인');
    await root.post(`/admin/accounts/${ids['dev']}/role`, { role: 'ADMIN' });
    expect(flashOf((await root.get('/admin/accounts')).html)).to.equal(
      '관리자(ADMIN)나 최고 관리자(ROOT) 역할을 주려면 확인란을 선택하세요.',
    );
    expect((await t.db.models.accounts.findOne({ _id: ids['dev'] }).lean())?.role).to.equal('TEACHER');
    await root.post(`/admin/accounts/${ids['dev']}/role`, { role: 'ADMIN', confirm: 'yes' });
    expect((await t.db.models.accounts.findOne({ _id: ids['dev'] }).lean())?.role).to.equal('ADMIN');
    await root.post(`/admin/accounts/${ids['dev']}/role`, { role: 'ROOT', confirm: 'yes' });
    expect((await t.db.models.accounts.findOne({ _id: ids['dev'] }).lean())?.role).to.equal('ROOT');
    const changes = await t.db.models.accessAudit
      .find({ action: 'ROLE_CHANGED', targetId: String(ids['dev']) })
      .sort({ at: 1 })
      .lean();
    expect(changes.map((c) => [c.actorEmail, c.detail])).to.deep.equal([
      ['admin@gsm.hs.kr', { from: 'USER', to: 'TEACHER' }],
      ['root@gsm.hs.kr', { from: 'TEACHER', to: 'ADMIN' }],
      ['root@gsm.hs.kr', { from: 'ADMIN', to: 'ROOT' }],
    ]);
    // The list offers no role form on one's own row.
    const list = await admin.get(`/admin/accounts?q=admin@`);
    expect(list.html).not.to.include(`action="/admin/accounts/${ids['admin']}/role"`);
  });

  it('an approval is judged on the account as it is: a sign-up a ROOT made ADMIN meanwhile is a ROOT’s to decide, and stays ADMIN', async () => {
    await account('promoted', 'USER', { name: '최선생', department: '영어과' });
    await root.post(`/admin/accounts/${ids['promoted']}/role`, { role: 'ADMIN', confirm: 'yes' });
    expect(await t.db.models.accounts.findOne({ _id: ids['promoted'] }).lean()).to.deep.include({ role: 'ADMIN', approval: 'PENDING' });

    for (const decision of ['approve', 'reject']) {
      const refused = await admin.post(`/admin/accounts/${ids['promoted']}/approval`, {
        decision,
        back: '/admin/accounts?approval=PENDING',
      });
      expect(refused.res.status).to.equal(303);
      expect(refused.res.headers.get('location')).to.equal('/admin/accounts?approval=PENDING');
      expect(flashOf((await admin.get('/admin/accounts')).html)).to.equal(
        '관리자(ADMIN)·최고 관리자(ROOT) 계정과 그 역할은 최고 관리자만 다룰 수 있습니다.',
      );
    }
    expect(await t.db.models.accounts.findOne({ _id: ids['promoted'] }).lean()).to.deep.include({
      role: 'ADMIN',
      approval: 'PENDING',
      approvalDecidedBy: null,
    });
    expect(await t.db.models.accessAudit.countDocuments({ targetId: String(ids['promoted']), action: /^TEACHER_/ })).to.equal(0);
    // The list offers an ADMIN neither a role form nor approval buttons on that row.
    const list = await admin.get('/admin/accounts?q=promoted@');
    expect(list.html).to.include('최고 관리자만 바꿀 수 있음').and.not.include(`action="/admin/accounts/${ids['promoted']}/approval"`);
    expect((await root.get('/admin/accounts?q=promoted@')).html).to.include(`action="/admin/accounts/${ids['promoted']}/approval"`);
  });

  it('the write requires the role the rule was checked against (a promotion between the reading and the write is not undone)', async () => {
    await account('raced', 'USER', { name: '정선생', department: '국어과' });
    const store = new AccountStore(t.db);
    // Read as USER; a ROOT makes it ADMIN before the approval is written.
    await t.db.models.accounts.updateOne({ _id: ids['raced'] }, { $set: { role: 'ADMIN' } });
    expect(
      await store.decideApproval(ids['raced'] ?? 0, 'USER', { approval: 'APPROVED', role: 'TEACHER', by: ids['admin'] ?? 0 }),
    ).to.equal(false);
    expect(await store.updateRole(ids['raced'] ?? 0, 'USER', 'TEACHER')).to.equal(false);
    expect(await store.setDisabled(ids['raced'] ?? 0, { at: new Date(), by: ids['admin'] ?? 0 }, 'USER')).to.equal(false);
    expect(await t.db.models.accounts.findOne({ _id: ids['raced'] }).lean()).to.deep.include({
      role: 'ADMIN',
      approval: 'PENDING',
      disabledAt: null,
    });
    expect(await store.decideApproval(ids['raced'] ?? 0, 'ADMIN', { approval: 'REJECTED', role: 'ADMIN', by: ids['root'] ?? 0 })).to.equal(
      true,
    );
  });

  it('an ADMIN’s account is a ROOT’s to disable, enable, reset or delete; an ADMIN is refused each, and nothing happens', async () => {
    const other = await account('colleague', 'ADMIN');
    const path = `/admin/accounts/${ids['colleague']}`;
    const page = await admin.get(path);
    expect(page.html)
      .to.include('관리자(ADMIN)와 최고 관리자(ROOT) 계정은 최고 관리자만 사용 중지, 비밀번호 재설정, 삭제할 수 있습니다.')
      .and.not.include(`action="${path}/disable"`)
      .and.not.include(`action="${path}/reset"`)
      .and.not.include(`action="${path}/delete"`);
    const mailsBefore = mail.mails.length;
    for (const [action, fields] of [
      ['disable', {}],
      ['reset', {}],
      ['delete', { confirm: 'yes' }],
    ] as const) {
      const refused = await admin.post(`${path}/${action}`, fields);
      expect(refused.res.status, action).to.equal(303);
      expect(refused.res.headers.get('location'), action).to.equal(path);
      expect(flashOf((await admin.get(path)).html), action).to.equal(
        '관리자(ADMIN)·최고 관리자(ROOT) 계정과 그 역할은 최고 관리자만 다룰 수 있습니다.',
      );
    }
    expect(await t.db.models.accounts.findOne({ _id: ids['colleague'] }).lean()).to.deep.include({ role: 'ADMIN', disabledAt: null });
    expect(mail.mails.slice(mailsBefore).filter((m) => m.to.includes(other.email))).to.deep.equal([]);
    expect(await t.db.models.accessAudit.countDocuments({ targetId: String(ids['colleague']) })).to.equal(0);

    // Disabled by a ROOT, it is not an ADMIN's to enable either.
    await root.post(`${path}/disable`, {});
    await admin.post(`${path}/enable`, {});
    expect(flashOf((await admin.get(path)).html)).to.equal(
      '관리자(ADMIN)·최고 관리자(ROOT) 계정과 그 역할은 최고 관리자만 다룰 수 있습니다.',
    );
    expect((await t.db.models.accounts.findOne({ _id: ids['colleague'] }).lean())?.disabledAt).to.be.instanceOf(Date);
    // A ROOT sends the reset (the same rule allows it).
    const sent = await root.post(`${path}/reset`, {});
    expect(sent.res.status).to.equal(303);
    expect(flashOf((await root.get(path)).html)).to.equal('colleague@gsm.hs.kr(으)로 비밀번호 재설정 코드를 보냈습니다.');
    expect((await mail.waitFor(other.email)).subject).to.include('비밀번호 재설정 코드');
  });

  it('keys of every user: search by owner email, extend, revoke', async () => {
    const service = new ApiKeyService(t.db, t.config.policy);
    const owned = await service.issue({ scopes: ['CLUB_READ'], label: 'dev key', ownerAccountId: ids['dev'] ?? 0 });
    const cli = await service.issue({ scopes: ['CLUB_READ'], label: 'operator key', days: 2 });
    const all = await admin.get('/admin/keys');
    expect(all.html)
      .to.include('dev@gsm.hs.kr')
      .and.include('CLI (운영자)')
      .and.include(`${owned.key.slice(0, 8)}…`);
    const found = await admin.get('/admin/keys?q=dev%40gsm');
    expect(found.html).to.include('dev key').and.not.include('operator key');

    await admin.post(`/admin/keys/${cli.summary.id}/renew`, { back: '/admin/keys' });
    const renewed = await service.get(cli.summary.id);
    expect((renewed?.expiresAt.getTime() ?? 0) - Date.now()).to.be.greaterThan(29 * 24 * 3600_000);

    await expectOk(await t.request('/v1/clubs', { headers: { 'X-API-KEY': owned.key } }));
    const revoked = await admin.post(`/admin/keys/${owned.summary.id}/revoke`, { back: '/admin/keys?q=dev%40gsm' });
    expect(revoked.res.headers.get('location')).to.equal('/admin/keys?q=dev%40gsm');
    expect(flashOf((await admin.get('/admin/keys')).html)).to.equal(`${owned.key.slice(0, 8)}… 키를 폐기했습니다.`);
    await expectEnvelope(await t.request('/v1/clubs', { headers: { 'X-API-KEY': owned.key } }), 401, 'UNAUTHORIZED');
    // A "back" address elsewhere is not followed.
    const elsewhere = await admin.post(`/admin/keys/${cli.summary.id}/renew`, { back: 'https://evil.example/' });
    expect(elsewhere.res.headers.get('location')).to.equal('/admin/keys');
  });

  it('passwords are never in the pages', async () => {
    const hash = await hashPassword('whatever it is');
    expect((await admin.get('/admin/accounts')).html)
      .not.to.include('$argon2id$')
      .and.not.include(hash);
  });
});
