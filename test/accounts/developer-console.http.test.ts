import { AppService } from '../../src/oauth/apps.js';
import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOAuthError, expectOk } from '../helpers/expect.js';
import { buildStudent, insertSchool } from '../helpers/factories.js';
import { authorize, CookieJar, createAccount, postJson, signInToConsole, type ConsoleSession } from '../helpers/oauth.js';
import { MAX_ACTIVE_KEYS_PER_ACCOUNT } from '../../src/data/keys/store.js';
import { MAX_APPS_PER_ACCOUNT, MAX_REDIRECT_URIS } from '../../src/oauth/apps.js';

/**
 * The developer console over HTTP (the browser test walks the same pages in Chromium): keys, apps
 * and their limits, who may see what, connected apps, my account, and what deleting an account
 * takes with it.
 */

const CALLBACK = 'http://127.0.0.1:9/cb';

/** Every key value, app secret and password of these tests, looked for in the log at the end. */
const secrets = new Set<string>();

/** The value shown once on the page a creation redirected to. */
function shownOnce(html: string): string {
  const value = /<code id="shown-once" class="secret-value">([^<]+)<\/code>/.exec(html)?.[1];
  if (!value) throw new Error('no value shown once on the page');
  secrets.add(value);
  return value;
}

async function follow(session: ConsoleSession, res: Response): Promise<{ res: Response; html: string }> {
  expect(res.status).to.equal(303);
  return session.get(res.headers.get('location') ?? '');
}

describe('accounts and sign-in: the developer console (/console) over HTTP', function () {
  this.timeout(120000);
  let t: TestApp;
  const alice = { email: 'alice@school.test', password: 'alice keeps a garden' };
  const bob = { email: 'bob@school.test', password: 'bob rides a bicycle' };
  let a: ConsoleSession;
  let b: ConsoleSession;

  before(async () => {
    t = await buildTestApp('developer_console');
    await insertSchool(t.db, { students: [buildStudent({ _id: 3, email: bob.email, name: '박지호' })] });
    await createAccount(t.db, alice.email, alice.password);
    await createAccount(t.db, bob.email, bob.password);
    a = await signInToConsole(t, alice);
    b = await signInToConsole(t, bob);
    for (const password of [alice.password, bob.password, 'not it at all', 'a new and long one', 'letmein123', 'not the password'])
      secrets.add(password);
  });
  after(() => t?.close());

  describe('API keys', () => {
    it('create with scopes and a label: the value is shown once, works at once, and is listed by prefix', async () => {
      // Both granted at once to a USER (scopes by role; STUDENT_READ waits: test/api-keys/policy.http.test.ts).
      const created = await a.post('/console/keys', { label: '급식 앱', scopes: ['CLUB_READ', 'NEIS_READ'] });
      const page = await follow(a, created.res);
      expect(page.res.status).to.equal(200);
      const key = shownOnce(page.html);
      expect(key).to.match(/^[0-9a-f-]{36}$/);
      expect(page.html).to.include('data-copy="shown-once"');
      // Shown once: the next visit does not show it.
      expect((await a.get(created.res.headers.get('location') ?? '')).html).not.to.include(key);
      await expectOk(await t.request('/v1/clubs', { headers: { 'X-API-KEY': key } }));
      const list = await a.get('/console/keys');
      expect(list.html)
        .to.include(`${key.slice(0, 8)}…`)
        .and.match(/data-scope-state="approved"\s*>CLUB_READ</)
        .and.match(/data-scope-state="approved"\s*>NEIS_READ</)
        .and.include('급식 앱');
      expect(list.html).not.to.include(key);
    });

    it('a key needs a scope: the form comes back (422) with the error at its field and in the summary', async () => {
      const res = await a.post('/console/keys', { label: 'no scopes' });
      expect(res.res.status).to.equal(422);
      expect(res.html).to.include('role="alert"').and.include('권한을 하나 이상 고르세요.');
      expect(res.html).to.match(/<fieldset aria-describedby="f-scopes-error">/);
    });

    it('rotate with a grace period (the old value keeps working), then revoke', async () => {
      const created = await a.post('/console/keys', { label: 'rotate me', scopes: ['CLUB_READ'] });
      const location = created.res.headers.get('location') ?? '';
      const old = shownOnce((await follow(a, created.res)).html);
      const rotated = await a.post(`${location}/rotate`, { graceHours: '2' });
      const page = await follow(a, rotated.res);
      const fresh = shownOnce(page.html);
      expect(page.html).to.include(`${old.slice(0, 8)}…`);
      await expectOk(await t.request('/v1/clubs', { headers: { 'X-API-KEY': old } }));
      await expectOk(await t.request('/v1/clubs', { headers: { 'X-API-KEY': fresh } }));
      const tooLong = await a.post(`${location}/rotate`, { graceHours: '25' });
      expect(tooLong.res.status).to.equal(422);
      expect(tooLong.html).to.include('유예 시간은 0부터 24까지');
      await follow(a, (await a.post(`${location}/revoke`, {})).res);
      for (const value of [old, fresh])
        await expectEnvelope(await t.request('/v1/clubs', { headers: { 'X-API-KEY': value } }), 401, 'UNAUTHORIZED');
    });

    it('another account’s key is not there (404), to see or to change', async () => {
      const created = await a.post('/console/keys', { label: 'private', scopes: ['CLUB_READ'] });
      const location = created.res.headers.get('location') ?? '';
      expect((await b.get(location)).res.status).to.equal(404);
      expect((await b.post(`${location}/revoke`, {})).res.status).to.equal(404);
      expect((await a.get(location)).res.status).to.equal(200);
    });

    it(`at most ${MAX_ACTIVE_KEYS_PER_ACCOUNT} active keys per account`, async () => {
      const carol = { email: 'carol@school.test', password: 'carol collects stamps' };
      await createAccount(t.db, carol.email, carol.password);
      secrets.add(carol.password);
      const c = await signInToConsole(t, carol);
      const csrf = await c.csrf();
      for (let i = 0; i < MAX_ACTIVE_KEYS_PER_ACCOUNT; i++)
        expect((await c.post('/console/keys', { label: `k${i}`, scopes: ['CLUB_READ'] }, csrf)).res.status).to.equal(303);
      const refused = await c.post('/console/keys', { label: 'one too many', scopes: ['CLUB_READ'] }, csrf);
      expect(refused.res.status).to.equal(422);
      expect(refused.html).to.include(`활성 키는 ${MAX_ACTIVE_KEYS_PER_ACCOUNT}개까지입니다`);
    });

    it('a form without the session’s CSRF token is refused (403)', async () => {
      expect((await a.post('/console/keys', { label: 'forged', scopes: ['CLUB_READ'] }, 'not-the-token')).res.status).to.equal(403);
    });
  });

  describe('OAuth apps and connected apps', () => {
    let appId = '';
    let secret = '';

    it('register an app: the secret is shown once; its service name is on the login page', async () => {
      const created = await a.post('/console/apps', {
        name: 'Club attendance',
        serviceName: 'GSM 동아리 출석부',
        redirectUris: `${CALLBACK}\nhttps://club.example/cb`,
        type: 'confidential',
        scopes: ['self:read', 'openid'],
      });
      const page = await follow(a, created.res);
      secret = shownOnce(page.html);
      appId = /<code id="client-id">([^<]+)<\/code>/.exec(page.html)?.[1] ?? '';
      expect(appId).to.match(/^[0-9a-f-]{36}$/);
      const jar = new CookieJar();
      const start = await t.request(
        `/v1/oauth/authorize?client_id=${appId}&redirect_uri=${encodeURIComponent(CALLBACK)}&response_type=code&state=s&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`,
        { redirect: 'manual' },
      );
      jar.store(start);
      const login = await t.request(start.headers.get('location') ?? '', { headers: { cookie: jar.header() } });
      const html = await login.text();
      expect(html).to.include('GSM 동아리 출석부에 계속하려면 학교 계정으로 로그인하세요.').and.include('앱: Club attendance');
      expect(html).to.include('href="/account/signup?').and.include('href="/account/password-reset?');
    });

    it('another account grants it; it is listed under that account’s connected apps; disconnecting stops userinfo and refresh at once', async () => {
      // It asks for self:read: in testing until the school approves it (the app registry: test/apps/registry.http.test.ts).
      await new AppService(t.db, { isProduction: false }).approve(appId, { kind: 'CLI' });
      const result = await authorize(t, { client_id: appId, redirect_uri: CALLBACK, response_type: 'code', state: 's' }, bob);
      const tokens = (await (
        await postJson(t, '/v1/oauth/token', {
          grant_type: 'authorization_code',
          code: result.code,
          client_id: appId,
          client_secret: secret,
          redirect_uri: CALLBACK,
          code_verifier: result.verifier,
        })
      ).json()) as { access_token: string; refresh_token: string };
      expect((await t.request('/userinfo', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).to.equal(200);
      expect((await a.get(`/console/apps/${appId}`)).html).to.match(/허용한 계정 수<\/dt>\s*<dd>1<\/dd>/);

      const connected = await b.get('/console/connected');
      expect(connected.html).to.include('GSM 동아리 출석부').and.include('Club attendance').and.include('내 학생 정보 읽기');
      expect(connected.html).not.to.include('campus-web');
      const revoked = await b.post(`/console/connected/${appId}/revoke`, {});
      expect((await follow(b, revoked.res)).html).to.include('GSM 동아리 출석부 앱의 연결을 끊었습니다.');
      const userinfo = await t.request('/userinfo', { headers: { authorization: `Bearer ${tokens.access_token}` } });
      await expectOAuthError(userinfo, 401, 'invalid_token', 'revoked');
      await expectOAuthError(
        await postJson(t, '/v1/oauth/token', {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: appId,
          client_secret: secret,
        }),
        400,
        'invalid_grant',
      );
      expect((await a.get(`/console/apps/${appId}`)).html).to.match(/허용한 계정 수<\/dt>\s*<dd>0<\/dd>/);
    });

    it('edit, rotate the secret (the old one stops), and the owner alone sees the app', async () => {
      const edited = await a.post(`/console/apps/${appId}`, {
        name: 'Club attendance 2',
        serviceName: '',
        redirectUris: CALLBACK,
        scopes: ['self:read'],
      });
      expect((await follow(a, edited.res)).html).to.include('설정을 저장했습니다.');
      const rotated = await a.post(`/console/apps/${appId}/secret`, {});
      const fresh = shownOnce((await follow(a, rotated.res)).html);
      expect(fresh).not.to.equal(secret);
      const oldSecret = await postJson(t, '/v1/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: 'x',
        client_id: appId,
        client_secret: secret,
      });
      await expectOAuthError(oldSecret, 401, 'invalid_client');
      expect((await b.get(`/console/apps/${appId}`)).res.status).to.equal(404);
      expect((await b.post(`/console/apps/${appId}/delete`, { confirm: 'yes' })).res.status).to.equal(404);
    });

    it(`redirect addresses: at most ${MAX_REDIRECT_URIS}, absolute http(s), no fragment; the error is at the field`, async () => {
      const many = Array.from({ length: MAX_REDIRECT_URIS + 1 }, (_, i) => `https://club.example/cb${i}`).join('\n');
      const tooMany = await a.post('/console/apps', { name: 'Many', redirectUris: many, type: 'public', scopes: ['self:read'] });
      expect(tooMany.res.status).to.equal(422);
      expect(tooMany.html).to.include(`리디렉션 주소는 ${MAX_REDIRECT_URIS}개까지입니다.`).and.include('id="f-redirectUris-error"');
      const fragment = await a.post('/console/apps', {
        name: 'Frag',
        redirectUris: 'https://club.example/cb#x',
        type: 'public',
        scopes: ['self:read'],
      });
      expect(fragment.res.status).to.equal(422);
      expect(fragment.html).to.include('https://club.example/cb#x: # 뒷부분(fragment)이 있으면 안 됩니다.');
      const exactly = Array.from({ length: MAX_REDIRECT_URIS }, (_, i) => `https://club.example/ok${i}`).join('\n');
      expect(
        (await a.post('/console/apps', { name: 'Ten', redirectUris: exactly, type: 'public', scopes: ['self:read'] })).res.status,
      ).to.equal(303);
    });

    it(`at most ${MAX_APPS_PER_ACCOUNT} apps per account`, async () => {
      const dan = { email: 'dan@school.test', password: 'dan plays the cello' };
      await createAccount(t.db, dan.email, dan.password);
      secrets.add(dan.password);
      const d = await signInToConsole(t, dan);
      const csrf = await d.csrf();
      for (let i = 0; i < MAX_APPS_PER_ACCOUNT; i++) {
        const res = await d.post(
          '/console/apps',
          { name: `App ${i}`, redirectUris: CALLBACK, type: 'public', scopes: ['self:read'] },
          csrf,
        );
        expect(res.res.status).to.equal(303);
      }
      const refused = await d.post(
        '/console/apps',
        { name: 'Eleventh', redirectUris: CALLBACK, type: 'public', scopes: ['self:read'] },
        csrf,
      );
      expect(refused.res.status).to.equal(422);
      expect(refused.html).to.include(`앱은 ${MAX_APPS_PER_ACCOUNT}개까지 등록할 수 있습니다.`);
      expect(
        await t.db.models.oauthClients.countDocuments({
          ownerAccountId: (await t.db.models.accounts.findOne({ email: dan.email }).lean())?._id,
        }),
      ).to.equal(MAX_APPS_PER_ACCOUNT);
    });
  });

  describe('my account', () => {
    it('change the password: the current one is checked, the rules apply, other sign-ins end and this one stays', async () => {
      const erin = { email: 'erin@school.test', password: 'erin reads at night' };
      await createAccount(t.db, erin.email, erin.password);
      secrets.add(erin.password);
      const here = await signInToConsole(t, erin);
      const elsewhere = await signInToConsole(t, erin);
      const wrong = await here.post('/console/account/password', { currentPassword: 'not it at all', password: 'a new and long one' });
      expect(wrong.res.status).to.equal(422);
      expect(wrong.html).to.include('현재 비밀번호가 올바르지 않습니다.');
      const weak = await here.post('/console/account/password', { currentPassword: erin.password, password: 'letmein123' });
      expect(weak.res.status).to.equal(422);
      expect(weak.html).to.include('너무 흔한 비밀번호입니다');
      const changed = await here.post('/console/account/password', { currentPassword: erin.password, password: 'a new and long one' });
      expect((await follow(here, changed.res)).html).to.include('비밀번호를 바꿨습니다.');
      expect((await here.get('/console')).res.status).to.equal(200);
      expect((await elsewhere.get('/console')).res.status).to.equal(303);
    });

    it('sign out everywhere ends every sign-in, this one too', async () => {
      const fay = { email: 'fay@school.test', password: 'fay bakes bread' };
      await createAccount(t.db, fay.email, fay.password);
      secrets.add(fay.password);
      const one = await signInToConsole(t, fay);
      const two = await signInToConsole(t, fay);
      const res = await one.post('/console/account/sign-out-everywhere', {});
      expect(res.res.status).to.equal(303);
      expect(res.res.headers.get('location')).to.equal('/web/signed-out');
      expect((await one.get('/console')).res.status).to.equal(303);
      expect((await two.get('/console')).res.status).to.equal(303);
      const accountId = String((await t.db.models.accounts.findOne({ email: fay.email }).lean())?._id);
      expect(await t.db.models.oauthRecords.countDocuments({ accountId, kind: { $in: ['Session', 'Grant'] } })).to.equal(0);
    });

    it('deleting the account (password asked again) takes its keys, its apps (with their grants) and its grants with it', async () => {
      const gus = { email: 'gus@school.test', password: 'gus builds robots' };
      const gusId = await createAccount(t.db, gus.email, gus.password);
      secrets.add(gus.password);
      const g = await signInToConsole(t, gus);
      const key = shownOnce((await follow(g, (await g.post('/console/keys', { label: 'k', scopes: ['CLUB_READ'] })).res)).html);
      await expectOk(await t.request('/v1/clubs', { headers: { 'X-API-KEY': key } }));
      const app = await follow(
        g,
        // account:read alone needs no approval: anyone may sign in to it at once.
        (await g.post('/console/apps', { name: 'Gus app', redirectUris: CALLBACK, type: 'public', scopes: ['account:read'] })).res,
      );
      const gusApp = /<code id="client-id">([^<]+)<\/code>/.exec(app.html)?.[1] ?? '';
      // Bob gives Gus's app a grant.
      const granted = await authorize(
        t,
        { client_id: gusApp, redirect_uri: CALLBACK, response_type: 'code', state: 's', scope: 'account:read' },
        bob,
      );
      expect(granted.code).to.be.a('string');
      await t.app.close(); // flush usage counters so that the key has usage to delete
      expect(await t.db.models.apiKeyUsage.countDocuments({})).to.be.greaterThan(0);

      const noConfirm = await g.post('/console/account/delete', { deletePassword: gus.password });
      expect(noConfirm.res.status).to.equal(422);
      expect(noConfirm.html).to.include('삭제하려면 확인란을 선택하세요.');
      const wrong = await g.post('/console/account/delete', { deletePassword: 'not the password', confirm: 'yes' });
      expect(wrong.res.status).to.equal(422);
      expect(await t.db.models.accounts.countDocuments({ _id: gusId })).to.equal(1);

      const deleted = await g.post('/console/account/delete', { deletePassword: gus.password, confirm: 'yes' });
      expect(deleted.res.status).to.equal(303);
      expect(deleted.res.headers.get('location')).to.equal('/account/deleted');
      expect((await t.request('/account/deleted')).status).to.equal(200);
      expect(await t.db.models.accounts.countDocuments({ _id: gusId })).to.equal(0);
      expect(await t.db.models.apiKeys.countDocuments({ ownerAccountId: gusId })).to.equal(0);
      expect(await t.db.models.oauthClients.countDocuments({ ownerAccountId: gusId })).to.equal(0);
      expect(await t.db.models.oauthRecords.countDocuments({ clientId: gusApp })).to.equal(0);
      expect(await t.db.models.oauthRecords.countDocuments({ accountId: String(gusId) })).to.equal(0);
      await expectEnvelope(await t.request('/v1/clubs', { headers: { 'X-API-KEY': key } }), 401, 'UNAUTHORIZED');
      expect((await g.get('/console')).res.status).to.equal(303);
    });
  });

  describe('the log (after every test above)', () => {
    it('no key value, app secret or password appears in any log line', () => {
      expect(secrets.size).to.be.greaterThan(15);
      const log = t.logText();
      expect(log).to.include('"event":"console.key_created"');
      for (const secret of secrets) expect(log.includes(secret), `a secret (${secret.slice(0, 4)}…) is in the log`).to.equal(false);
    });
  });
});
