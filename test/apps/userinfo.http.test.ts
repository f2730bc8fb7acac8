import { expect } from 'chai';
import { exportJWK, generateKeyPair, SignJWT, decodeJwt } from 'jose';
import { openDatabase, type Database } from '../../src/data/database.js';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { AccountService } from '../../src/oauth/accounts.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUri } from '../helpers/database.js';
import { expectOk } from '../helpers/expect.js';
import { buildClub, buildStudent, insertSchool, issueKey } from '../helpers/factories.js';
import { authorize, createAccount, createClient, postJson, REDIRECT_URI } from '../helpers/oauth.js';

/** GET/POST /userinfo: the answer, every refusal, expiry, revocation, and its own base address. */

const USER = { email: 'lee@school.test', password: 'userinfo password' };
const STAFF = { email: 'teacher@school.test', password: 'not a student pw' };

interface Tokens {
  access_token: string;
  refresh_token: string;
}

describe('OAuth apps: the userinfo server', () => {
  let t: TestApp;
  let offsetMs = 0;
  let client: { id: string; secret: string };

  before(async () => {
    t = await buildTestApp('oauth_userinfo', { now: () => new Date(Date.now() + offsetMs) });
    await insertSchool(t.db, {
      students: [
        buildStudent({ _id: 21, email: USER.email, name: '이서연', majorClubId: 3, dormitoryFloor: 5, dormitoryRoom: 512, sex: 'WOMAN' }),
      ],
      clubs: [buildClub({ _id: 3, name: 'Byte Forge', type: 'MAJOR_CLUB' })],
    });
    await createAccount(t.db, USER.email, USER.password);
    await createAccount(t.db, STAFF.email, STAFF.password);
    const c = await createClient(t.db, { firstParty: true });
    client = { id: c.client.id, secret: c.secret ?? '' };
  });
  after(() => t.close());
  beforeEach(() => {
    offsetMs = 0;
  });

  async function login(user = USER, scope = 'self:read'): Promise<Tokens> {
    const { code, verifier } = await authorize(
      t,
      { client_id: client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'u', scope },
      user,
    );
    const res = await postJson(t, '/v1/oauth/token', {
      grant_type: 'authorization_code',
      code,
      client_id: client.id,
      client_secret: client.secret,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    });
    expect(res.status, await res.clone().text()).to.equal(200);
    return (await res.json()) as Tokens;
  }

  function userinfo(token: string | undefined, init: RequestInit = {}, app: TestApp = t): Promise<Response> {
    return app.request('/userinfo', { ...init, headers: { ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }) } });
  }

  async function expectInvalidToken(res: Response, description: string): Promise<void> {
    expect(res.status).to.equal(401);
    // The last parameter names where userinfo's tokens come from (RFC 9728).
    expect(res.headers.get('www-authenticate')).to.match(
      /^Bearer realm="[^"]+", error="invalid_token", error_description="[^"]+", resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource\/userinfo"$/,
    );
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).to.equal('invalid_token');
    expect(body.error_description).to.include(description);
  }

  it('answers the account and its student record as the data API shows it (GET and POST)', async () => {
    const { access_token } = await login();
    for (const method of ['GET', 'POST']) {
      const res = await userinfo(access_token, { method });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
      expect(res.headers.get('cache-control')).to.equal('no-store');
      const body = (await res.json()) as Record<string, unknown>;
      // self:read as before, with `teacher` (null but for a teacher) since teachers have a role of their own.
      expect(Object.keys(body)).to.deep.equal(['sub', 'id', 'email', 'role', 'isStudent', 'student', 'teacher']);
      expect(body['teacher']).to.equal(null);
      expect(body).to.include({ sub: decodeJwt(access_token).sub, email: USER.email, role: 'USER', isStudent: true });
      expect(body['id']).to.equal(Number(body['sub']));
      expect(body['student']).to.deep.equal({
        id: 21,
        name: '이서연',
        sex: 'WOMAN',
        email: USER.email,
        grade: 1,
        classNum: 1,
        number: 1,
        studentNumber: 1101,
        major: 'SW_DEVELOPMENT',
        role: 'GENERAL_STUDENT',
        dormitoryFloor: 5,
        dormitoryRoom: 512,
        majorClub: { id: 3, name: 'Byte Forge', type: 'MAJOR_CLUB' },
        autonomousClub: null,
        specialty: null,
        githubId: null,
        githubUrl: null,
      });
    }
  });

  it('its student record is byte for byte the record GET /v1/students answers (same fields, same order)', async () => {
    const { access_token } = await login();
    const body = (await (await userinfo(access_token)).json()) as { student: unknown };
    const key = await issueKey(t.db, { scopes: ['STUDENT_READ'] });
    const page = await expectOk<{ students: unknown[] }>(await t.request('/v1/students?studentId=21', { headers: { 'X-API-KEY': key } }));
    expect(JSON.stringify(body.student)).to.equal(JSON.stringify(page.students[0]));
  });

  it('an account without a student record: isStudent false, student null', async () => {
    const { access_token } = await login(STAFF);
    const body = (await (await userinfo(access_token)).json()) as Record<string, unknown>;
    expect(body).to.include({ email: STAFF.email, isStudent: false, student: null });
  });

  it('a missing, malformed or foreign token is 401 with WWW-Authenticate', async () => {
    await expectInvalidToken(await userinfo(undefined), 'missing bearer access token');
    await expectInvalidToken(await t.request('/userinfo', { headers: { Authorization: 'Basic abc' } }), 'missing bearer access token');
    await expectInvalidToken(await userinfo('not-a-jwt'), 'invalid');
    // Signed by someone else's key with our issuer and audience.
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const foreign = await new SignJWT({ scope: 'self:read', client_id: client.id, gid: 'x' })
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: (await exportJWK(publicKey)).kid ?? 'k' })
      .setIssuer(t.url)
      .setAudience(`${t.url}/userinfo`)
      .setSubject('1')
      .setJti('j')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
    await expectInvalidToken(await userinfo(foreign), 'invalid');
  });

  it('expired access token at userinfo: 401 with WWW-Authenticate (injected clock)', async () => {
    const { access_token } = await login();
    offsetMs = 3590 * 1000;
    expect((await userinfo(access_token)).status).to.equal(200);
    offsetMs = 3601 * 1000;
    await expectInvalidToken(await userinfo(access_token), 'expired');
  });

  it('a token with no data scope (openid only) at userinfo: 403 insufficient_scope', async () => {
    const { access_token } = await login(USER, 'openid');
    expect(decodeJwt(access_token).scope).to.equal(undefined);
    const res = await userinfo(access_token);
    expect(res.status).to.equal(403);
    expect(res.headers.get('www-authenticate')).to.equal(
      `Bearer realm="${t.url}", error="insufficient_scope", scope="account:read student:read club:read project:read self:read profile email"`,
    );
    expect(await res.json()).to.deep.equal({
      error: 'insufficient_scope',
      error_description:
        'the access token has none of the scopes account:read, student:read, club:read, project:read, self:read, profile, email',
    });
  });

  it('revocation takes effect at userinfo: revoking the refresh token ends the access token at once', async () => {
    const tokens = await login();
    expect((await userinfo(tokens.access_token)).status).to.equal(200);
    const res = await postJson(t, '/v1/oauth/revoke', {
      token: tokens.refresh_token,
      token_type_hint: 'refresh_token',
      client_id: client.id,
      client_secret: client.secret,
    });
    expect(res.status).to.equal(200);
    await expectInvalidToken(await userinfo(tokens.access_token), 'revoked');
  });

  it('revocation takes effect at userinfo: revoking the JWT access token itself ends its grant', async () => {
    const tokens = await login();
    const res = await postJson(t, '/v1/oauth/revoke', { token: tokens.access_token, client_id: client.id, client_secret: client.secret });
    expect(res.status).to.equal(200);
    await expectInvalidToken(await userinfo(tokens.access_token), 'revoked');
    const again = await postJson(t, '/v1/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: client.id,
      client_secret: client.secret,
    });
    expect(again.status).to.equal(400);
  });

  it('deleting the account ends its tokens', async () => {
    const other = { email: 'leaver@school.test', password: 'leaving soon pw' };
    await createAccount(t.db, other.email, other.password);
    const tokens = await login(other);
    expect((await userinfo(tokens.access_token)).status).to.equal(200);
    await new AccountService(t.db).delete(other.email);
    await expectInvalidToken(await userinfo(tokens.access_token), 'revoked');
  });

  it('what userinfo remembers follows every change at once: a new role, a changed student, a deleted account', async () => {
    const other = { email: 'mover@school.test', password: 'moving along pw' };
    await createAccount(t.db, other.email, other.password);
    const { access_token } = await login(other);
    const shown = async () => {
      const res = await userinfo(access_token);
      expect(res.status).to.equal(200);
      return (await res.json()) as Record<string, unknown>;
    };
    expect(await shown()).to.include({ role: 'USER', isStudent: false });
    // Each call below would be answered from memory if nothing had moved the versions.
    await new AccountService(t.db).ensure({ ...other, role: 'ADMIN' });
    expect(await shown()).to.include({ role: 'ADMIN', isStudent: false });
    await insertSchool(t.db, { students: [buildStudent({ _id: 77, email: other.email, name: '김이동' })] });
    expect(((await shown())['student'] as { name: string }).name).to.equal('김이동');
    await new AccountService(t.db).delete(other.email);
    await expectInvalidToken(await userinfo(access_token), 'revoked');
  });

  it('allows cross-origin calls (bearer only, no cookies) and refuses other methods', async () => {
    const preflight = await t.request('/userinfo', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers.get('access-control-allow-origin')).to.equal('*');
    expect(preflight.headers.get('access-control-allow-headers')).to.equal('Authorization');
    const put = await t.request('/userinfo', { method: 'PUT' });
    expect(put.status).to.equal(405);
    expect(put.headers.get('allow')).to.equal('GET, POST');
  });
});

describe('OAuth apps: the surfaces at their own base addresses (campus serve --only)', () => {
  let db: Database;
  let auth: TestApp;
  let info: TestApp;
  let data: TestApp;

  before(async () => {
    db = await openDatabase(testDatabaseUri('oauth_split'));
    await db.ensureIndexes();
    const [authPort, infoPort, dataPort] = [await freePort(), await freePort(), await freePort()];
    const env = {
      AUTH_URL: `http://127.0.0.1:${authPort}`,
      USERINFO_URL: `http://127.0.0.1:${infoPort}`,
      BASE_URL: `http://127.0.0.1:${dataPort}`,
    };
    auth = await buildTestApp('split_auth', { db, env, surfaces: ['auth'], port: authPort });
    info = await buildTestApp('split_userinfo', { db, env, surfaces: ['userinfo'], port: infoPort });
    data = await buildTestApp('split_data', { db, env, surfaces: ['data'], port: dataPort });
  });
  after(async () => {
    await auth.close();
    await info.close();
    await data.close();
    await db.connection.dropDatabase();
    await db.close();
  });

  it('a token from the authorization server works at the separately served userinfo server', async () => {
    await insertSchool(db, { students: [buildStudent({ _id: 5, email: USER.email })] });
    await createAccount(db, USER.email, USER.password);
    const { client, secret } = await createClient(db, { firstParty: true });

    const discovery = (await (await auth.request('/.well-known/openid-configuration')).json()) as Record<string, string>;
    expect(discovery['issuer']).to.equal(auth.url);
    expect(discovery['userinfo_endpoint']).to.equal(`${info.url}/userinfo`);

    const { code, verifier } = await authorize(
      auth,
      { client_id: client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'x' },
      USER,
    );
    const res = await postJson(auth, '/v1/oauth/token', {
      grant_type: 'authorization_code',
      code,
      client_id: client.id,
      client_secret: secret,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    });
    const tokens = (await res.json()) as Tokens;
    expect(decodeJwt(tokens.access_token).aud).to.equal(`${info.url}/userinfo`);

    const answer = await info.request('/userinfo', { headers: { Authorization: `Bearer ${tokens.access_token}` } });
    expect(answer.status).to.equal(200);
    expect(await answer.json()).to.include({ email: USER.email, isStudent: true });
  });

  it('each process serves only its own surface', async () => {
    expect((await info.request('/.well-known/openid-configuration')).status).to.equal(404);
    expect((await info.request('/v1/health')).status).to.equal(404);
    expect((await auth.request('/userinfo')).status).to.equal(404);
    expect((await auth.request('/v1/health')).status).to.equal(404);
    expect((await data.request('/userinfo')).status).to.equal(404);
    expect((await data.request('/v1/oauth/jwks')).status).to.equal(404);
    expect((await data.request('/v1/health')).status).to.equal(200);
  });
});
