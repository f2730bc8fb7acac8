import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { runCampus } from '../helpers/cli.js';
import { testDatabaseUri } from '../helpers/database.js';
import { expectEnvelope, expectOAuthError } from '../helpers/expect.js';
import { buildStudent, insertSchool } from '../helpers/factories.js';
import { authorize, createAccount, createClient, postJson, REDIRECT_URI, signInToConsole, type ConsoleSession } from '../helpers/oauth.js';
import { codeOf, TestMailServer } from '../helpers/smtp.js';
import { ApiKeyService } from '../../src/data/keys/store.js';

/**
 * Staff manage accounts in /admin/accounts. A disabled account cannot sign in
 * (the login page says so and whom to ask); its access token stops at userinfo, its refresh token
 * at the token endpoint and its API key at the data API, at once; enabled again, all of them work.
 * Staff send a password-reset code and delete an account (confirmed); `campus accounts
 * disable|enable`; a teacher's sign-up mails the admins and /admin counts it. Every change is in
 * the access log with its actor.
 */
describe('accounts and sign-in: the admin console disables, enables, resets and deletes accounts', function () {
  this.timeout(180000);
  let t: TestApp;
  let mail: TestMailServer;
  let admin: ConsoleSession;
  const ids: Record<string, number> = {};
  const CONTACT = '정보부 김선생님 (it@gsm.hs.kr)';

  async function account(name: string, role: 'USER' | 'ADMIN' | 'ROOT' = 'USER'): Promise<{ email: string; password: string }> {
    const user = { email: `${name}@gsm.hs.kr`, password: `${name} has a long password` };
    ids[name] = await createAccount(t.db, user.email, user.password);
    if (role !== 'USER') await t.db.models.accounts.updateOne({ _id: ids[name] }, { $set: { role } });
    return user;
  }

  function flashOf(html: string): string {
    return /<p class="flash (?:ok|error)" role="(?:status|alert)">([^<]*)<\/p>/.exec(html)?.[1] ?? '';
  }

  async function accessLog(action: string, targetEmail: string) {
    return t.db.models.accessAudit.find({ action, targetLabel: targetEmail }).lean();
  }

  before(async () => {
    mail = await TestMailServer.start();
    t = await buildTestApp('account_disable', { env: { SMTP_URL: mail.url, HELP_CONTACT: CONTACT } });
    await insertSchool(t.db, { students: [buildStudent({ _id: 1, email: 'student@gsm.hs.kr', name: '김학생' })] });
    admin = await signInToConsole(t, await account('admin', 'ADMIN'), '/admin/accounts');
  });
  after(async () => {
    await t?.close();
    await mail?.close();
  });

  it('disabled: no sign-in (the page says why and whom to ask), its token stops at userinfo and its key at the data API at once; enabled: all work again', async () => {
    const student = await account('student');
    const app = await createClient(t.db, { firstParty: true });
    const client = { client_id: app.client.id, client_secret: app.secret ?? '' };
    const granted = await authorize(
      t,
      { client_id: app.client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's' },
      student,
    );
    const tokenRes = await postJson(t, '/v1/oauth/token', {
      grant_type: 'authorization_code',
      code: granted.code,
      redirect_uri: REDIRECT_URI,
      code_verifier: granted.verifier,
      ...client,
    });
    expect(tokenRes.status).to.equal(200);
    const tokens = (await tokenRes.json()) as { access_token: string; refresh_token: string };
    const userinfo = () => t.request('/userinfo', { headers: { Authorization: `Bearer ${tokens.access_token}` } });
    const { key } = await new ApiKeyService(t.db, t.config.policy).issue({ scopes: ['STUDENT_READ'], ownerAccountId: ids['student'] ?? 0 });
    const data = () => t.request('/v1/students', { headers: { 'X-API-KEY': key } });
    expect((await userinfo()).status).to.equal(200);
    expect((await data()).status).to.equal(200);

    const page = await admin.get(`/admin/accounts/${ids['student']}`);
    expect(page.res.status).to.equal(200);
    expect(page.html).to.include('계정: student@gsm.hs.kr').and.include('사용 중지').and.include('비밀번호 재설정 메일 보내기');
    const disabled = await admin.post(`/admin/accounts/${ids['student']}/disable`, {});
    expect(disabled.res.status).to.equal(303);
    expect(disabled.res.headers.get('location')).to.equal(`/admin/accounts/${ids['student']}`);
    // The very next requests: no wait for any cache.
    const refused = await userinfo();
    expect(refused.status).to.equal(401);
    await expectOAuthError(refused, 401, 'invalid_token', 'the account of the access token is disabled');
    await expectEnvelope(
      await data(),
      401,
      'UNAUTHORIZED',
      "Disabled API key: the account that holds it is disabled; ask the school's administrators.",
    );
    await expectOAuthError(
      await postJson(t, '/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...client }),
      400,
      'invalid_grant',
    );
    // The right password of a disabled account: 403, why, and whom to ask; no code for the app.
    const login = await authorize(t, { client_id: app.client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's' }, student, {
      stopOn: 403,
    });
    expect(login.code).to.equal(null);
    expect(login.pages.at(-1)).to.include(`이 계정은 사용이 중지되어 로그인할 수 없습니다. 다시 쓰려면 ${CONTACT}에게 문의하세요.`);
    // A wrong password still reads as any wrong password (nothing told about the account).
    const wrong = await authorize(
      t,
      { client_id: app.client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's' },
      { email: student.email, password: 'not the password at all' },
      { stopOn: 401 },
    );
    expect(wrong.pages.at(-1)).to.include('이메일 또는 비밀번호가 올바르지 않습니다.').and.not.include('사용이 중지');
    const list = await admin.get('/admin/accounts?q=student');
    expect(list.html).to.include(`<a href="/admin/accounts/${ids['student']}">student@gsm.hs.kr</a> <span class="tag">사용 중지</span>`);

    const enabled = await admin.post(`/admin/accounts/${ids['student']}/enable`, {});
    expect(enabled.res.status).to.equal(303);
    expect(flashOf((await admin.get(`/admin/accounts/${ids['student']}`)).html)).to.equal(
      'student@gsm.hs.kr을(를) 다시 사용하게 했습니다.',
    );
    expect((await userinfo()).status).to.equal(200);
    expect((await data()).status).to.equal(200);
    const again = await authorize(t, { client_id: app.client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's' }, student);
    expect(again.code).to.be.a('string');

    const [off] = await accessLog('ACCOUNT_DISABLED', student.email);
    const [on] = await accessLog('ACCOUNT_ENABLED', student.email);
    expect(off).to.deep.include({ actorKind: 'ACCOUNT', actorId: ids['admin'], actorEmail: 'admin@gsm.hs.kr', targetKind: 'ACCOUNT' });
    expect(on).to.deep.include({ actorKind: 'ACCOUNT', actorId: ids['admin'], actorEmail: 'admin@gsm.hs.kr' });
  });

  it('the rules: not one’s own account, and an ADMIN’s only by a ROOT', async () => {
    const own = await admin.get(`/admin/accounts/${ids['admin']}`);
    expect(own.html)
      .to.include('자신의 계정입니다.')
      .and.not.include('action="/admin/accounts/' + String(ids['admin']) + '/disable"');
    const self = await admin.post(`/admin/accounts/${ids['admin']}/disable`, {});
    expect(flashOf((await admin.get(self.res.headers.get('location') ?? '')).html)).to.equal(
      '자신의 계정은 사용 중지하거나 삭제할 수 없습니다.',
    );
    await account('other-admin', 'ADMIN');
    await admin.post(`/admin/accounts/${ids['other-admin']}/disable`, {});
    expect(await t.db.models.accounts.countDocuments({ disabledAt: { $ne: null } })).to.equal(0);
  });

  it('sends a password-reset code the person uses on the reset page; in the access log', async () => {
    const user = await account('forgetful');
    const sent = await admin.post(`/admin/accounts/${ids['forgetful']}/reset`, {});
    expect(sent.res.status).to.equal(303);
    expect(flashOf((await admin.get(`/admin/accounts/${ids['forgetful']}`)).html)).to.equal(
      'forgetful@gsm.hs.kr(으)로 비밀번호 재설정 코드를 보냈습니다.',
    );
    const received = await mail.waitFor(user.email);
    expect(received.subject).to.include('비밀번호 재설정 코드');
    expect(received.text).to.include('학교 관리자가 캠퍼스 데이터 서비스 비밀번호 재설정 코드를 보내 드렸습니다.');
    const code = codeOf(received) ?? '';
    const reset = await t.request('/v1/accounts/password', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: user.email, code, newPassword: 'a brand new passphrase 77' }),
    });
    expect(reset.status, await reset.clone().text()).to.equal(204);
    const [entry] = await accessLog('PASSWORD_RESET_SENT', user.email);
    expect(entry).to.deep.include({ actorKind: 'ACCOUNT', actorId: ids['admin'] });
  });

  it('deletes an account only when confirmed; in the access log', async () => {
    await account('leaving');
    const unconfirmed = await admin.post(`/admin/accounts/${ids['leaving']}/delete`, {});
    expect(unconfirmed.res.status).to.equal(422);
    expect(await t.db.models.accounts.countDocuments({ _id: ids['leaving'] })).to.equal(1);
    const deleted = await admin.post(`/admin/accounts/${ids['leaving']}/delete`, { confirm: 'yes' });
    expect(deleted.res.status).to.equal(303);
    expect(deleted.res.headers.get('location')).to.equal('/admin/accounts');
    expect(await t.db.models.accounts.countDocuments({ _id: ids['leaving'] })).to.equal(0);
    const [entry] = await accessLog('ACCOUNT_DELETED', 'leaving@gsm.hs.kr');
    expect(entry).to.deep.include({ actorKind: 'ACCOUNT', actorId: ids['admin'] });
    expect((await admin.get(`/admin/accounts/${ids['leaving']}`)).res.status).to.equal(404);
  });

  it('`campus accounts disable|enable <email> --json` does the same as the operator (CLI in the access log)', async () => {
    const user = await account('operated');
    const uri = new URL(testDatabaseUri('unused'));
    uri.pathname = `/${t.db.name}`;
    const off = await runCampus({ MONGODB_URI: uri.href }, ['accounts', 'disable', user.email, '--json']);
    expect(off.code, off.stderr).to.equal(0);
    const shown = JSON.parse(off.stdout) as { email: string; disabledAt: string | null; changed: boolean };
    expect(shown).to.deep.include({ email: user.email, changed: true });
    expect(shown.disabledAt).to.be.a('string');
    const login = await authorize(
      t,
      {
        client_id: (await createClient(t.db, { firstParty: true })).client.id,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        state: 's',
      },
      user,
      { stopOn: 403 },
    );
    expect(login.pages.at(-1)).to.include('사용이 중지되어');
    const twice = await runCampus({ MONGODB_URI: uri.href }, ['accounts', 'disable', user.email]);
    expect(twice.stdout).to.equal(`Already disabled: ${ids['operated']} ${user.email} USER DISABLED\n`);
    const on = await runCampus({ MONGODB_URI: uri.href }, ['accounts', 'enable', user.email, '--json']);
    expect(JSON.parse(on.stdout)).to.deep.include({ email: user.email, disabledAt: null, changed: true });
    const unknown = await runCampus({ MONGODB_URI: uri.href }, ['accounts', 'enable', 'nobody@gsm.hs.kr']);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include('No account nobody@gsm.hs.kr.');
    const [entry] = await accessLog('ACCOUNT_DISABLED', user.email);
    expect(entry).to.deep.include({ actorKind: 'CLI', actorId: null });
  });

  it('a teacher’s sign-up mails every administrator, and /admin shows how many wait', async () => {
    const email = 'newteacher@gsm.hs.kr';
    const before = mail.mails.length;
    await postJson(t, '/v1/accounts/email-verifications', { email });
    const code = await mail.nextCode(email, before);
    const signed = await postJson(t, '/v1/accounts', {
      email,
      password: 'a teacher passphrase 2026',
      code,
      teacher: { name: '박선생', department: '과학과' },
    });
    expect(signed.status, await signed.clone().text()).to.equal(201);
    const told = await mail.waitFor('admin@gsm.hs.kr', (m) => m.subject.includes('교사 계정 승인 대기'));
    expect(told.text).to.include(`박선생 (과학과) <${email}>`).and.include('/admin/accounts?approval=PENDING');
    await mail.waitFor('other-admin@gsm.hs.kr', (m) => m.subject.includes('교사 계정 승인 대기'));
    const home = await admin.get('/admin');
    expect(home.html).to.include('<span data-count="teachers-waiting">승인을 기다리는 교사 가입 신청 1건</span>');
  });
});
