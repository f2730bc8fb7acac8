import { expect } from 'chai';
import { AccountStore } from '../../src/data/accounts/store.js';
import { AppService } from '../../src/oauth/apps.js';
import { hashPassword } from '../../src/oauth/secrets.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectOAuthError } from '../helpers/expect.js';
import { buildStudent, insertSchool } from '../helpers/factories.js';
import { authorize, CookieJar, createClient, postJson, signInToConsole, type ConsoleSession } from '../helpers/oauth.js';

/**
 * The app registry: /admin/apps lists every app with owner, type, scopes, redirects,
 * consent count and state; a developer-console app asking for student data is in testing (only its
 * owner signs in) until approved; a disabled app's tokens stop at once; names may not copy the
 * school's own apps'; each change is in the access log.
 */

const OWNER = { email: 'maker@school.test', password: 'app registry maker' };
const OTHER = { email: 'classmate@school.test', password: 'app registry other' };
const ADMIN = { email: 'admin@school.test', password: 'app registry admin' };
const CALLBACK = 'http://127.0.0.1:9/cb';

async function accountWith(t: TestApp, user: { email: string; password: string }, role: 'USER' | 'ADMIN'): Promise<void> {
  await new AccountStore(t.db).create({ email: user.email, passwordHash: await hashPassword(user.password), role });
}

async function follow(session: ConsoleSession, res: Response): Promise<string> {
  return (await session.get(res.headers.get('location') ?? '')).html;
}

describe('OAuth apps: the app registry (testing, approval, disabling, reserved names)', () => {
  let t: TestApp;
  let owner: ConsoleSession;
  let admin: ConsoleSession;
  let appId = '';
  let secret = '';

  before(async () => {
    t = await buildTestApp('app_registry');
    await insertSchool(t.db, { students: [buildStudent({ _id: 1, email: OWNER.email }), buildStudent({ _id: 2, email: OTHER.email })] });
    await accountWith(t, OWNER, 'USER');
    await accountWith(t, OTHER, 'USER');
    await accountWith(t, ADMIN, 'ADMIN');
    owner = await signInToConsole(t, OWNER);
    admin = await signInToConsole(t, ADMIN, '/admin');
    // One of the school's own apps (registered by an operator).
    await createClient(t.db, { name: '동아리 출석부', redirectUris: [CALLBACK] });
  });
  after(() => t.close());

  const params = (scope = 'self:read') => ({ client_id: appId, redirect_uri: CALLBACK, response_type: 'code', state: 's', scope });

  async function tokens(result: { code: string | null; verifier: string | undefined }) {
    const res = await postJson(t, '/v1/oauth/token', {
      grant_type: 'authorization_code',
      code: result.code,
      client_id: appId,
      client_secret: secret,
      redirect_uri: CALLBACK,
      code_verifier: result.verifier,
    });
    expect(res.status).to.equal(200);
    return (await res.json()) as { access_token: string; refresh_token: string };
  }

  it('names may not copy the school’s own apps’, not even with invisible or bidirectional characters', async () => {
    for (const name of ['동아리 출석부', '동아리\u200b 출석부', '\u202e동아리 출석부', '동아리  출석부\u2066']) {
      const res = await owner.post('/console/apps', { name, redirectUris: CALLBACK, type: 'confidential', scopes: ['self:read'] });
      expect(res.res.status, JSON.stringify(name)).to.equal(422);
      expect(res.html).to.include('학교가 운영하는 앱의 이름입니다. 다른 이름을 쓰세요.');
    }
    const service = await owner.post('/console/apps', {
      name: 'Attendance',
      serviceName: '동아리\u200d출석부'.replace('\u200d', ' '),
      redirectUris: CALLBACK,
      type: 'confidential',
      scopes: ['self:read'],
    });
    expect(service.res.status).to.equal(422);
  });

  it('an app asking for student data is in testing: it refuses another account and admits its owner', async () => {
    const created = await owner.post('/console/apps', {
      name: 'Club attendance (student)',
      serviceName: '우리 반 출석',
      redirectUris: CALLBACK,
      type: 'confidential',
      scopes: ['self:read', 'club:read'],
    });
    const page = await follow(owner, created.res);
    appId = /<code id="client-id">([^<]+)<\/code>/.exec(page)?.[1] ?? '';
    secret = /id="shown-once"[^>]*>([^<]+)</.exec(page)?.[1] ?? '';
    expect(page).to.include('data-state="testing"');

    const refused = await authorize(t, params('self:read club:read'), OTHER, { stopOn: 403 });
    expect(refused.code).to.equal(null);
    expect(refused.pages.at(-1))
      .to.include('학교의 승인을 기다리는 앱')
      .and.include('우리 반 출석 앱은 아직 학교의 승인을 받지 않았습니다.');
    expect(await new AppService(t.db, { isProduction: false }).grantingAccounts(appId)).to.equal(0);

    const admitted = await authorize(t, params('self:read club:read'), OWNER);
    expect(admitted.pages.find((p) => p.includes('name="decision"')))
      .to.include('시험 중인 앱입니다.')
      .and.include(`만든 사람: ${OWNER.email}`);
    const info = await t.request('/userinfo', { headers: { authorization: `Bearer ${(await tokens(admitted)).access_token}` } });
    expect(Object.keys((await info.json()) as object)).to.deep.equal([
      'sub',
      'id',
      'email',
      'role',
      'isStudent',
      'student',
      'teacher',
      'clubs',
    ]);
  });

  it('/admin/apps lists it with owner, type, scopes, redirects, consent count and state; once approved, everyone may sign in', async () => {
    const list = await admin.get('/admin/apps');
    expect(list.res.status).to.equal(200);
    expect(list.html)
      .to.include('승인을 기다리는 시험 중인 앱이 1개 있습니다.')
      .and.include(OWNER.email)
      .and.include('학교 (운영자 등록)')
      .and.include('<code>club:read</code>')
      .and.include(CALLBACK)
      .and.include('data-state="testing"');
    expect((await admin.get('/admin/apps?state=testing')).html)
      .to.include('우리 반 출석')
      .and.not.include('>동아리 출석부<');

    const approved = await admin.post(`/admin/apps/${appId}`, { action: 'approve', back: '/admin/apps' });
    expect(await follow(admin, approved.res)).to.include('우리 반 출석 앱을 승인했습니다 (사용 중).');
    const other = await authorize(t, params('self:read club:read'), OTHER);
    expect(other.code).to.be.a('string');
    await tokens(other);
    expect((await admin.get('/admin/apps?q=maker')).html).to.include('data-granted="2"');
  });

  it('a disabled app stops at once: authorize is an error page, the token endpoint refuses it, its tokens stop at userinfo; enabling restores them', async () => {
    const signedIn = await authorize(t, params(), OWNER);
    const issued = await tokens(signedIn);
    const bearer = { authorization: `Bearer ${issued.access_token}` };
    expect((await t.request('/userinfo', { headers: bearer })).status).to.equal(200);

    const disabled = await admin.post(`/admin/apps/${appId}`, { action: 'disable', back: '/admin/apps' });
    expect(await follow(admin, disabled.res)).to.include('우리 반 출석 앱의 사용을 중지했습니다 (사용 중지).');
    await expectOAuthError(
      await t.request('/userinfo', { headers: bearer }),
      401,
      'invalid_token',
      'the app of the access token is disabled',
    );
    await expectOAuthError(
      await postJson(t, '/v1/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: issued.refresh_token,
        client_id: appId,
        client_secret: secret,
      }),
      401,
      'invalid_client',
    );
    const authorizePage = await t.request(
      `/v1/oauth/authorize?${new URLSearchParams({ ...params(), code_challenge: 'a'.repeat(43), code_challenge_method: 'S256' })}`,
    );
    expect(authorizePage.status).to.equal(400);
    expect(await authorizePage.text()).to.include('invalid_client');

    const enabled = await admin.post(`/admin/apps/${appId}`, { action: 'enable', back: '/admin/apps' });
    expect(await follow(admin, enabled.res)).to.include('우리 반 출석 앱을 다시 사용하게 했습니다 (사용 중).');
    expect((await t.request('/userinfo', { headers: bearer })).status).to.equal(200);
  });

  it('each change is in the access log, and the consoles’ own sign-in cannot be disabled', async () => {
    const log = await t.db.models.accessAudit.find({ targetKind: 'APP' }).sort({ at: 1 }).lean();
    expect(log.map((e) => [e.action, e.actorEmail, e.targetId])).to.deep.equal([
      ['APP_APPROVED', ADMIN.email, appId],
      ['APP_DISABLED', ADMIN.email, appId],
      ['APP_ENABLED', ADMIN.email, appId],
    ]);
    const refused = await admin.post('/admin/apps/campus-web', { action: 'disable', back: '/admin/apps' });
    expect(await follow(admin, refused.res)).to.include('그 앱이 없습니다.');
    expect((await admin.get('/admin/apps')).html).to.include('콘솔 로그인 (바꿀 수 없음)');
  });

  it('only ADMIN and ROOT open it', async () => {
    expect((await owner.get('/admin/apps')).res.status).to.equal(403);
  });

  /** Registers an app of the owner asking for `scopes` and has the admin approve it; its id. */
  async function approvedApp(name: string, scopes: string[]): Promise<string> {
    const created = await owner.post('/console/apps', { name, redirectUris: CALLBACK, type: 'confidential', scopes });
    const id = /<code id="client-id">([^<]+)<\/code>/.exec(await follow(owner, created.res))?.[1] ?? '';
    await admin.post(`/admin/apps/${id}`, { action: 'approve', back: '/admin/apps' });
    expect((await owner.get(`/console/apps/${id}`)).html).to.include('data-state="active"');
    return id;
  }

  /** Follows our own redirects from `url` with the jar, as a browser would; the last answer. */
  async function browse(url: string, jar: CookieJar): Promise<{ status: number; location: URL | null }> {
    let next = url;
    for (let hop = 0; hop < 8; hop++) {
      const res = await fetch(next, { headers: { cookie: jar.header() }, redirect: 'manual' });
      jar.store(res);
      await res.arrayBuffer();
      const location = res.headers.get('location');
      if (!location) return { status: res.status, location: null };
      const target = new URL(location, next);
      if (target.origin !== t.url) return { status: res.status, location: target };
      next = target.href;
    }
    throw new Error('too many redirects');
  }

  it('a testing app admits only its owner at every authorization: neither single sign-on nor a consent given while it was active lets another in', async () => {
    const id = await approvedApp('Reading log', ['self:read']);
    const request = { client_id: id, redirect_uri: CALLBACK, response_type: 'code', state: 's', scope: 'self:read' };
    const jar = new CookieJar();
    const consented = await authorize(t, request, OTHER, { jar });
    expect(consented.code).to.be.a('string');
    // Single sign-on with the grant: straight back to the app, no page.
    const silent = await authorize(t, request, OTHER, { jar });
    expect(silent.code).to.be.a('string');
    expect(silent.pages).to.deep.equal([]);

    // The owner widens its scopes: back in testing.
    await owner.post(`/console/apps/${id}`, {
      name: 'Reading log',
      serviceName: '',
      redirectUris: CALLBACK,
      scopes: ['self:read', 'club:read'],
    });
    expect((await owner.get(`/console/apps/${id}`)).html).to.include('data-state="testing"');
    const refused = await authorize(t, request, OTHER, { jar, stopOn: 403 });
    expect(refused.code).to.equal(null);
    expect(refused.statuses).to.deep.equal([303, 403]);
    expect(refused.pages).to.have.length(1);
    expect(refused.pages[0]).to.include('학교의 승인을 기다리는 앱').and.include('Reading log 앱은 아직 학교의 승인을 받지 않았습니다.');
    // Asked not to show a page (prompt=none), the app hears access_denied, and gets no code.
    const none = await authorize(t, { ...request, prompt: 'none' }, OTHER, { jar });
    expect(none.location.origin + none.location.pathname).to.equal(CALLBACK);
    expect(none.location.searchParams.get('error')).to.equal('access_denied');
    expect(none.code).to.equal(null);
    // Its owner still signs in.
    const own = await authorize(t, { ...request, scope: 'self:read club:read' }, OWNER);
    expect(own.code).to.be.a('string');

    // Approved again meanwhile, the same sign-in goes on from the page it stopped at.
    await admin.post(`/admin/apps/${id}`, { action: 'approve', back: '/admin/apps' });
    const resumed = await browse(refused.location.href, jar);
    expect(resumed.status).to.equal(303);
    expect(resumed.location?.searchParams.get('code')).to.be.a('string');

    // Back in testing between the consent page and its answer: the answer is refused too.
    const asked = await authorize(t, { ...request, scope: 'self:read club:read' }, OTHER, { jar, stopOn: 200 });
    expect(asked.pages.at(-1)).to.include('name="decision"');
    await owner.post(`/console/apps/${id}`, {
      name: 'Reading log',
      serviceName: '',
      redirectUris: `${CALLBACK}\nhttps://reading.example/cb`,
      scopes: ['self:read', 'club:read'],
    });
    const html = asked.pages.at(-1) ?? '';
    const answer = await fetch(new URL(/<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '', t.url), {
      method: 'POST',
      headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded', origin: t.url },
      body: new URLSearchParams({ csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '', decision: 'allow' }).toString(),
      redirect: 'manual',
    });
    expect(answer.status).to.equal(403);
    expect(await answer.text()).to.include('Reading log 앱은 아직 학교의 승인을 받지 않았습니다.');
  });

  it('a new redirect address sends an approved app back to review: in testing, said in the console, listed in /admin/apps', async () => {
    const id = await approvedApp('Homework board', ['self:read']);
    const path = `/console/apps/${id}`;
    const form = { name: 'Homework board', serviceName: '', redirectUris: CALLBACK, scopes: ['self:read'] };
    // A new name or service name keeps the approval.
    const renamed = await owner.post(path, { ...form, name: 'Homework board 2', serviceName: '숙제 게시판' });
    expect(await follow(owner, renamed.res))
      .to.include('설정을 저장했습니다.')
      .and.include('data-state="active"');

    const moved = await owner.post(path, { ...form, name: 'Homework board 2', redirectUris: `${CALLBACK}\nhttps://elsewhere.example/cb` });
    expect(moved.res.status).to.equal(303);
    expect(await follow(owner, moved.res))
      .to.include(
        '설정을 저장했습니다. 새 리디렉션 주소나 승인이 필요한 권한이 생겨 앱이 다시 시험 중입니다: 학교가 다시 승인할 때까지 만든 사람만 로그인할 수 있습니다.',
      )
      .and.include('data-state="testing"');
    expect(await t.db.models.oauthClients.findOne({ _id: id }).lean()).to.deep.include({ approvedAt: null, approvedBy: null });
    expect((await admin.get('/admin/apps?state=testing')).html)
      .to.include('Homework board 2')
      .and.include('https://elsewhere.example/cb');
    const refused = await authorize(t, { client_id: id, redirect_uri: CALLBACK, response_type: 'code', state: 's' }, OTHER, {
      stopOn: 403,
    });
    expect(refused.code).to.equal(null);

    // Approved with the new address, dropping one keeps the approval.
    await admin.post(`/admin/apps/${id}`, { action: 'approve', back: '/admin/apps' });
    const narrowed = await owner.post(path, { ...form, name: 'Homework board 2' });
    expect(await follow(owner, narrowed.res))
      .to.include('설정을 저장했습니다.')
      .and.include('data-state="active"');
  });
});
