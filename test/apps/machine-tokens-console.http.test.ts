import { expect } from 'chai';
import { AccountStore } from '../../src/data/accounts/store.js';
import type { AccountRole } from '../../src/data/__generated__/enums.js';
import { hashPassword } from '../../src/oauth/secrets.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { buildClub, buildStudent, insertSchool } from '../helpers/factories.js';
import { signInToConsole, type ConsoleSession } from '../helpers/oauth.js';
import { eventually } from '../helpers/receiver.js';

/**
 * Machine tokens in the developer console and the app registry, over HTTP as a browser without
 * JavaScript: the form offers the grant and the data scopes with the key form's policy hints; a
 * scope awaiting approval needs a purpose; the app's page shows where each scope stands, the
 * token request, the requests per day of its tokens (as a key's) and revokes them; /admin/apps
 * approves or refuses what waits.
 */

const STUDENT = { email: 'console.machine@school.test', password: 'console machine passphrase' };
const ADMIN = { email: 'console.admin@school.test', password: 'console admin passphrase!' };

describe('OAuth apps: machine tokens in the developer console and /admin/apps', function () {
  this.timeout(120000);
  let t: TestApp;
  let student: ConsoleSession;
  let admin: ConsoleSession;

  const tokenOf = async (id: string, secret: string) => {
    const res = await t.request('/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: secret }).toString(),
    });
    expect(res.status).to.equal(200);
    return ((await res.json()) as { access_token: string }).access_token;
  };
  const bearer = (path: string, token: string) => t.request(path, { headers: { authorization: `Bearer ${token}` } });

  before(async () => {
    // Counts are written every few seconds (src/http/usage.ts): the page shows them after a flush.
    t = await buildTestApp('machine_tokens_console');
    await insertSchool(t.db, {
      students: [buildStudent({ _id: 1, email: STUDENT.email, majorClubId: 10 })],
      clubs: [buildClub({ _id: 10, name: 'Robotics', type: 'MAJOR_CLUB' })],
    });
    const accounts = new AccountStore(t.db);
    const account = async (user: { email: string; password: string }, role: AccountRole) =>
      accounts.create({ email: user.email, passwordHash: await hashPassword(user.password), role });
    await account(STUDENT, 'USER');
    await account(ADMIN, 'ADMIN');
    student = await signInToConsole(t, STUDENT, '/console/apps');
    admin = await signInToConsole(t, ADMIN, '/admin');
  });
  after(async () => {
    await t?.close();
  });

  it('the form offers the grant and the data scopes with what the role gives; a scope awaiting approval needs a purpose', async () => {
    const { res, html } = await student.get('/console/apps/new');
    expect(res.status).to.equal(200);
    expect(html).to.include('토큰 받는 방법');
    expect(html).to.match(/name="grants"\s+value="authorization_code"\s+checked/);
    expect(html).to.match(/name="grants"\s+value="client_credentials"\s*\/>/);
    expect(html).to.include('머신 토큰의 데이터 권한');
    // The USER row of the key policy: STUDENT_READ awaits approval, the others are given at once.
    expect(html).to.match(/value="STUDENT_READ"[\s\S]*?승인 필요/);
    const fields = { name: 'Roll call', serviceName: '', redirectUris: '', type: 'confidential', grants: 'client_credentials' };
    const noPurpose = await student.post('/console/apps', { ...fields, dataScopes: ['CLUB_READ', 'STUDENT_READ'], dataPurpose: '' });
    expect(noPurpose.res.status).to.equal(422);
    expect(noPurpose.html).to.include('STUDENT_READ 권한은 관리자의 승인이 필요합니다: 데이터를 어디에 쓰는지 적어 주세요.');
    const none = await student.post('/console/apps', { ...fields, dataScopes: [], dataPurpose: '' });
    expect(none.res.status).to.equal(422);
    expect(none.html).to.include('머신 토큰에는 데이터 권한이 하나 이상 있어야 합니다.');
    const publicMachine = await student.post('/console/apps', { ...fields, type: 'public', dataScopes: ['CLUB_READ'], dataPurpose: '' });
    expect(publicMachine.res.status).to.equal(422);
    expect(publicMachine.html).to.include('머신 토큰은 기밀 클라이언트만');
  });

  it('registers a machine app: its page shows each scope, the token request, usage per day; admins approve; revoking stops its tokens', async () => {
    const created = await student.post('/console/apps', {
      name: 'Roll call',
      serviceName: '',
      redirectUris: '',
      type: 'confidential',
      grants: 'client_credentials',
      dataScopes: ['CLUB_READ', 'STUDENT_READ'],
      dataPurpose: 'the roll shows student numbers',
    });
    expect(created.res.status).to.equal(303);
    const location = created.res.headers.get('location') ?? '';
    const id = /^\/console\/apps\/([0-9a-f-]{36})$/.exec(location)?.[1] ?? '';
    const page = await student.get(location);
    const secret = /id="shown-once"[^>]*>([A-Za-z0-9_-]{43})</.exec(page.html)?.[1] ?? '';
    expect(secret, 'the secret, shown once').to.have.length(43);
    expect(page.html).to.include('<h2 id="machine-tokens">머신 토큰</h2>');
    // No one signs in to it: the login scopes the form offers are not the app's, and it is not in testing.
    expect(page.html).to.match(/<span class="tag" data-state="active">사용 중<\/span>/);
    // The first hour: the app-server example started as this app, with its secret (shown once).
    expect(page.html).to.include('예제 앱 서버 실행 (examples/nightly-sync)');
    expect(page.html).to.include(`CLIENT_ID=&#39;${id}&#39; \\\nCLIENT_SECRET=&#39;${secret}&#39; \\\nnpm start`);
    expect(page.html).to.match(/data-scope-state="approved"\s*>CLUB_READ</);
    expect(page.html).to.match(/data-scope-state="pending"\s*>STUDENT_READ · 승인 대기</);
    expect(page.html).to.include(`curl -s ${t.url}/v1/oauth/token -u &#39;${id}:`);

    const token = await tokenOf(id, secret);
    await expectOk(await bearer('/v1/clubs', token));
    await expectOk(await bearer('/v1/clubs', token));
    const pending = await expectEnvelope(await bearer('/v1/students', token), 403, 'FORBIDDEN');
    expect(pending.message).to.include("This app's STUDENT_READ scope awaits an administrator's approval");
    // The requests of its tokens, per day, as a key's (written within a few seconds).
    await eventually(
      async () => (await student.get(`/console/apps/${id}`)).html.includes('요청 3건, 그중 4xx 1건 (429 0건)'),
      15000,
      'the usage',
    );

    // /admin/apps: what waits, and the decision.
    const registry = await admin.get('/admin/apps');
    expect(registry.html).to.include('머신 토큰의 데이터 권한 승인을 기다리는 앱이 1개 있습니다.');
    expect(registry.html).to.include('aria-label="Roll call의 승인 대기 데이터 권한 거절"');
    const approved = await admin.post(`/admin/apps/${id}`, { action: 'approve', back: '/admin/apps' });
    expect(approved.res.status).to.equal(303);
    await expectOk(await bearer('/v1/students', token));
    expect((await admin.get('/admin/apps')).html).to.not.include('승인을 기다리는 앱이');

    const revoked = await student.post(`/console/apps/${id}/tokens/revoke`, {});
    expect(revoked.res.status).to.equal(303);
    expect((await student.get(revoked.res.headers.get('location') ?? '')).html).to.include('머신 토큰을 모두 취소했습니다.');
    await expectEnvelope(await bearer('/v1/clubs', token), 401, 'UNAUTHORIZED', 'Revoked bearer token');
    await expectOk(await bearer('/v1/clubs', await tokenOf(id, secret)));
  });

  it("refusing in /admin/apps keeps the scope refused; another account's app is not found", async () => {
    const created = await student.post('/console/apps', {
      name: 'Refused',
      serviceName: '',
      redirectUris: '',
      type: 'confidential',
      grants: 'client_credentials',
      dataScopes: ['STUDENT_READ'],
      dataPurpose: 'because',
    });
    const id = /([0-9a-f-]{36})$/.exec(created.res.headers.get('location') ?? '')?.[1] ?? '';
    const refused = await admin.post(`/admin/apps/${id}`, { action: 'refuse', back: '/admin/apps' });
    expect(refused.res.status).to.equal(303);
    expect((await admin.get(refused.res.headers.get('location') ?? '')).html).to.include(
      'Refused 앱의 승인 대기 데이터 권한을 거절했습니다',
    );
    expect((await student.get(`/console/apps/${id}`)).html).to.match(/data-scope-state="refused"\s*>STUDENT_READ · 거절됨</);
    // The admin registered nothing: the student's app is no app of theirs.
    expect((await admin.post(`/console/apps/${id}/tokens/revoke`, {})).res.status).to.equal(404);
  });
});
