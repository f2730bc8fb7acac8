import { expect } from 'chai';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { AccountStore } from '../../src/data/accounts/store.js';
import { CLI_ACTOR } from '../../src/data/accounts/access-log.js';
import type { AccountRole, ApiScope } from '../../src/data/__generated__/enums.js';
import { ApiKeyService } from '../../src/data/keys/store.js';
import { SchoolWriter } from '../../src/data/school/writes.js';
import { CLI_ACTOR as SCHOOL_CLI } from '../../src/data/school/types.js';
import { AccountService } from '../../src/oauth/accounts.js';
import { AppService, AppValidationError } from '../../src/oauth/apps.js';
import { hashPassword } from '../../src/oauth/secrets.js';
import { ENDPOINTS, isPublic } from '../../src/rest/endpoints.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOAuthError, expectOk } from '../helpers/expect.js';
import { buildClub, buildProject, buildStudent, insertSchool, TEST_POLICY } from '../helpers/factories.js';
import { authorize, createClient as createLoginClient, REDIRECT_URI } from '../helpers/oauth.js';

/**
 * Machine tokens (client_credentials; src/oauth/machine-tokens.ts, src/http/bearer.ts): an app's
 * server asks the token endpoint for a one-hour JWT for the data API and reads with it exactly
 * what a key with the same scopes reads (bodies and ETags of every keyed endpoint, the change
 * feed, GraphQL); its scopes follow its owner's key policy at each use; disabling the app,
 * revoking its tokens, a new secret and a disabled owner stop it at once; its budget is its own.
 */

const OWNER = { email: 'machine.owner@school.test', password: 'machine owner passphrase' };
const TEACHER = { email: 'machine.teacher@school.test', password: 'machine teacher passphrase' };
const ALL: ApiScope[] = ['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ', 'NEIS_READ'];

/** A query for each keyed endpoint of the table (its required parameters given). */
const QUERIES: Record<string, string> = { '/v1/neis/timetables': '?grade=1&classNum=1', '/v1/neis/meals': '?date=2026-03-02' };

/** Another instance of the same service: the addresses its tokens name are the first one's. */
function sameAddresses(t: TestApp): Record<string, string> {
  return { AUTH_URL: t.url, USERINFO_URL: t.url, BASE_URL: t.url };
}

interface TokenAnswer {
  access_token: string;
  expires_in: number;
  scope: string;
  token_type: string;
}

describe('OAuth apps: machine tokens (client_credentials) for the data API', function () {
  this.timeout(120000);
  let t: TestApp;
  let apps: AppService;
  let keys: ApiKeyService;
  let ownerId: number;
  let teacherId: number;

  /** The token endpoint with the app's id and secret as HTTP Basic (RFC 6749 2.3.1). */
  const tokenRequest = (id: string, secret: string, fields: Record<string, string> = {}) =>
    t.request('/v1/oauth/token', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', ...fields }).toString(),
    });
  const token = async (id: string, secret: string, fields: Record<string, string> = {}) => {
    const res = await tokenRequest(id, secret, fields);
    expect(res.status, await res.clone().text()).to.equal(200);
    return ((await res.json()) as TokenAnswer).access_token;
  };
  const bearer = (path: string, accessToken: string, headers: Record<string, string> = {}) =>
    t.request(path, { headers: { authorization: `Bearer ${accessToken}`, ...headers } });
  const keyed = (path: string, key: string, headers: Record<string, string> = {}) =>
    t.request(path, { headers: { 'X-API-KEY': key, ...headers } });
  const machineApp = async (dataScopes: ApiScope[], owner?: number, purpose?: string) => {
    const input = { name: `Nightly sync ${Math.random()}`, redirectUris: [], grants: ['client_credentials' as const], dataScopes };
    const created =
      owner === undefined
        ? await apps.create(input)
        : await apps.createOwned(owner, { ...input, ...(purpose ? { dataPurpose: purpose } : {}) });
    if (!created.secret) throw new Error('no secret');
    return { id: created.client.id, secret: created.secret };
  };

  before(async () => {
    t = await buildTestApp('machine_tokens', { env: { RATE_LIMIT: '1000/60', RATE_LIMIT_ACCOUNT: '100000/60' } });
    await insertSchool(t.db, {
      students: [
        buildStudent({ _id: 1, name: 'Kim One', email: OWNER.email, grade: 1, classNum: 1, number: 1, majorClubId: 10 }),
        buildStudent({ _id: 2, name: 'Lee Two', email: 'two@school.test', grade: 2, classNum: 3, number: 4 }),
      ],
      clubs: [buildClub({ _id: 10, name: 'Robotics', type: 'MAJOR_CLUB', leaderId: 1 })],
      projects: [buildProject({ _id: 1, name: 'Smart Farm', description: 'Garden', clubId: 10, participantIds: [1, 2] })],
    });
    const accounts = new AccountStore(t.db);
    const account = async (user: { email: string; password: string }, role: AccountRole) =>
      (await accounts.create({ email: user.email, passwordHash: await hashPassword(user.password), role }))._id;
    ownerId = await account(OWNER, 'USER');
    teacherId = await account(TEACHER, 'TEACHER');
    apps = new AppService(t.db, { isProduction: false, policy: TEST_POLICY });
    keys = new ApiKeyService(t.db, TEST_POLICY);
    // A change, so that the change feed has events to show.
    await new SchoolWriter(t.db, SCHOOL_CLI).updateStudent(2, { majorClubId: 10 });
  });
  after(async () => {
    await t?.close();
  });

  it('issues a one-hour JWT whose audience is the data API, without a refresh token', async () => {
    const app = await machineApp(['CLUB_READ', 'NEIS_READ']);
    const res = await tokenRequest(app.id, app.secret);
    expect(res.status).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const body = (await res.json()) as TokenAnswer;
    expect(Object.keys(body).sort()).to.deep.equal(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(body).to.include({ expires_in: 3600, scope: 'CLUB_READ NEIS_READ', token_type: 'Bearer' });
    expect(decodeProtectedHeader(body.access_token)).to.include({ typ: 'at+jwt', alg: 'RS256' });
    const claims = decodeJwt(body.access_token);
    expect(claims).to.include({ iss: t.url, aud: `${t.url}/`, sub: app.id, client_id: app.id, scope: 'CLUB_READ NEIS_READ' });
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).to.equal(3600);
    expect(claims['gid']).to.be.a('string');
    // The same with the secret in the body (client_secret_post), a narrower scope and the resource named.
    const narrow = await t.request('/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: app.id,
        client_secret: app.secret,
        scope: 'NEIS_READ',
        resource: t.url,
      }),
    });
    const narrowed = (await narrow.json()) as TokenAnswer;
    expect(narrowed.scope).to.equal('NEIS_READ');
    // The token reads what it was issued for, not all the app may hold.
    await expectOk(await bearer('/v1/neis/meals?date=2026-03-02', narrowed.access_token));
    const outside = await expectEnvelope(await bearer('/v1/clubs', narrowed.access_token), 403, 'FORBIDDEN');
    expect(outside.message).to.equal('This app lacks the CLUB_READ scope that this endpoint requires.');
  });

  it('refuses what the app may not have: another scope, userinfo as the resource, a person-only app, a wrong secret', async () => {
    const app = await machineApp(['CLUB_READ']);
    await expectOAuthError(await tokenRequest(app.id, app.secret, { scope: 'STUDENT_READ' }), 400, 'invalid_scope');
    await expectOAuthError(await tokenRequest(app.id, app.secret, { scope: 'self:read' }), 400, 'invalid_scope');
    await expectOAuthError(await tokenRequest(app.id, app.secret, { resource: `${t.url}/userinfo` }), 400, 'invalid_target');
    await expectOAuthError(await tokenRequest(app.id, 'not-the-secret'), 401, 'invalid_client');
    const person = await createLoginClient(t.db);
    await expectOAuthError(
      await tokenRequest(person.client.id, person.secret ?? ''),
      400,
      'invalid_request',
      'requested grant type is not allowed for this client',
    );
    // A person's code grant cannot name the data API as its resource: its tokens are for userinfo.
    const login = await authorize(
      t,
      { client_id: person.client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's', resource: t.url },
      OWNER,
    );
    expect(login.location.searchParams.get('error')).to.equal('invalid_target');
  });

  it('reads exactly what a key with the same scopes reads: every keyed endpoint, the change feed, GraphQL, 304s', async () => {
    const app = await machineApp(ALL);
    const accessToken = await token(app.id, app.secret);
    const { key } = await keys.issue({ scopes: ALL });
    const keyedPaths = ENDPOINTS.filter((e) => !isPublic(e)).map((e) => `${e.path}${QUERIES[e.path] ?? ''}`);
    expect(keyedPaths).to.include('/v1/changes');
    for (const path of keyedPaths) {
      const byKey = await keyed(path, key);
      const byToken = await bearer(path, accessToken);
      expect(byToken.status, path).to.equal(200);
      expect(byToken.headers.get('etag'), path).to.equal(byKey.headers.get('etag'));
      expect(await byToken.text(), path).to.equal(await byKey.text());
      // The key's ETag answers the token's conditional request (and the other way round).
      const again = await bearer(path, accessToken, { 'if-none-match': byKey.headers.get('etag') ?? '' });
      expect(again.status, path).to.equal(304);
    }
    const feed = await expectOk<{ events: unknown[] }>(await bearer('/v1/changes', accessToken));
    expect(feed.events.length).to.be.greaterThan(0);
    const query = JSON.stringify({
      query: '{ clubs { clubs { id name leader { name } participants { name } } } students { totalElements } }',
    });
    const graphql = (headers: Record<string, string>) =>
      t.request('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: query });
    const byKey = await graphql({ 'X-API-KEY': key });
    const byToken = await graphql({ authorization: `Bearer ${accessToken}` });
    expect(byToken.status).to.equal(200);
    const body = await byToken.text();
    expect(body).to.equal(await byKey.text());
    expect(body).to.include('Robotics');
  });

  it("an account's app follows its owner's key policy: a pending scope is refused with the approval message until approved", async () => {
    // A USER's STUDENT_READ awaits an admin's approval (docs/api-keys.md), for its keys and its apps alike.
    const unexplained = await apps
      .createOwned(ownerId, { name: 'Club roll', redirectUris: [], grants: ['client_credentials'], dataScopes: ['STUDENT_READ'] })
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(unexplained).to.be.instanceOf(AppValidationError).and.have.property('problem', 'purpose');
    const app = await machineApp(['CLUB_READ', 'STUDENT_READ'], ownerId, 'the club roll shows student numbers');
    const accessToken = await token(app.id, app.secret);
    expect(decodeJwt(accessToken)['scope']).to.equal('CLUB_READ STUDENT_READ');
    await expectOk(await bearer('/v1/clubs', accessToken));
    const refused = await expectEnvelope(await bearer('/v1/students', accessToken), 403, 'FORBIDDEN');
    expect(refused.message).to.equal(
      "This app's STUDENT_READ scope awaits an administrator's approval; it works for its other scopes meanwhile.",
    );
    // The key of the same owner asking for the same scopes gets the same refusal, worded for a key.
    const { key } = await keys.request(
      { id: ownerId, role: 'USER', disabled: false, secondFactor: false },
      { scopes: ['CLUB_READ', 'STUDENT_READ'], label: null, purpose: 'roll' },
    );
    const keyRefusal = await expectEnvelope(await keyed('/v1/students', key), 403, 'FORBIDDEN');
    expect(keyRefusal.message).to.equal(refused.message.replace("This app's", "This API key's"));
    // An admin approves the app: the same token reads students at once.
    const decided = await apps.approve(app.id, CLI_ACTOR);
    expect(decided.after.approvedDataScopes).to.deep.equal(['STUDENT_READ']);
    await expectOk(await bearer('/v1/students', accessToken));
  });

  it("lowering the owner's role takes a scope away at once; a disabled owner stops the app's tokens", async () => {
    const app = await machineApp(['STUDENT_READ', 'CLUB_READ'], teacherId);
    const accessToken = await token(app.id, app.secret);
    await expectOk(await bearer('/v1/students', accessToken));
    const store = new AccountStore(t.db);
    expect(await store.updateRole(teacherId, 'TEACHER', 'USER')).to.equal(true);
    const lowered = await expectEnvelope(await bearer('/v1/students', accessToken), 403, 'FORBIDDEN');
    expect(lowered.message).to.include("This app's STUDENT_READ scope awaits an administrator's approval");
    await expectOk(await bearer('/v1/clubs', accessToken));
    await new AccountService(t.db).setDisabled('CLI', teacherId, true);
    const disabled = await bearer('/v1/clubs', accessToken);
    await expectEnvelope(disabled, 401, 'UNAUTHORIZED', 'the account that holds the app is disabled');
    await expectOAuthError(await tokenRequest(app.id, app.secret), 401, 'invalid_client');
    await new AccountService(t.db).setDisabled('CLI', teacherId, false);
    await store.updateRole(teacherId, 'USER', 'TEACHER');
    await expectOk(await bearer('/v1/students', accessToken));
  });

  it('disabling the app stops its tokens at once, and enabling restores them', async () => {
    const app = await machineApp(['CLUB_READ']);
    const accessToken = await token(app.id, app.secret);
    await expectOk(await bearer('/v1/clubs', accessToken));
    await apps.disable(app.id, CLI_ACTOR);
    const res = await bearer('/v1/clubs', accessToken);
    await expectEnvelope(res, 401, 'UNAUTHORIZED', 'the app of this machine token is disabled');
    expect(res.headers.get('www-authenticate')).to.equal(
      `Bearer resource_metadata="${t.url}/.well-known/oauth-protected-resource", error="invalid_token", ` +
        `error_description="Disabled app: the app of this machine token is disabled; ask the school's administrators."`,
    );
    await expectOAuthError(await tokenRequest(app.id, app.secret), 401, 'invalid_client');
    await apps.enable(app.id, CLI_ACTOR);
    await expectOk(await bearer('/v1/clubs', accessToken));
  });

  it('revoking stops every token of the app at once: the command, RFC 7009 at /v1/oauth/revoke, and a new secret', async () => {
    const app = await machineApp(['CLUB_READ']);
    const first = await token(app.id, app.secret);
    const second = await token(app.id, app.secret);
    await apps.revokeMachineTokens(app.id);
    for (const old of [first, second]) await expectEnvelope(await bearer('/v1/clubs', old), 401, 'UNAUTHORIZED', 'Revoked bearer token');
    const fresh = await token(app.id, app.secret);
    await expectOk(await bearer('/v1/clubs', fresh));

    // Introspection says active while the data API takes it; the app's own revocation ends it.
    const form = (path: string, fields: Record<string, string>) =>
      t.request(path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: app.id, client_secret: app.secret, ...fields }).toString(),
      });
    const active = (await (await form('/v1/oauth/introspect', { token: fresh })).json()) as Record<string, unknown>;
    expect(active).to.include({ active: true, client_id: app.id, sub: app.id, scope: 'CLUB_READ', aud: `${t.url}/` });
    // Another app learns nothing, and revokes nothing.
    const other = await machineApp(['CLUB_READ']);
    const foreign = await t.request('/v1/oauth/introspect', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: other.id, client_secret: other.secret, token: fresh }).toString(),
    });
    expect(await foreign.json()).to.deep.equal({ active: false });
    expect((await form('/v1/oauth/revoke', { token: fresh })).status).to.equal(200);
    await expectEnvelope(await bearer('/v1/clubs', fresh), 401, 'UNAUTHORIZED', 'Revoked bearer token');
    expect(await (await form('/v1/oauth/introspect', { token: fresh })).json()).to.deep.equal({ active: false });

    const before = await token(app.id, app.secret);
    const rotated = await apps.rotateSecret(app.id);
    await expectEnvelope(await bearer('/v1/clubs', before), 401, 'UNAUTHORIZED', 'Revoked bearer token');
    const last = await token(app.id, rotated.secret);
    await expectOk(await bearer('/v1/clubs', last));

    // Deleting the app ends its tokens and takes the requests counted for it.
    await t.db.models.apiKeyUsage.create({ _id: `app:${app.id}:2026-03-02`, keyId: `app:${app.id}`, day: '2026-03-02', requests: 7 });
    await apps.delete(app.id);
    await expectEnvelope(await bearer('/v1/clubs', last), 401, 'UNAUTHORIZED', 'Invalid bearer token: its app no longer exists.');
    // (The day written before; today's count of the request above may still be on its way from memory.)
    expect(await t.db.models.apiKeyUsage.countDocuments({ _id: `app:${app.id}:2026-03-02` })).to.equal(0);
  });

  it('spends a budget of its own per app, with the headers of a key, and counts its requests per app', async () => {
    const limited = await buildTestApp('machine_tokens_budget', { db: t.db, env: { ...sameAddresses(t), RATE_LIMIT: '2/60' } });
    try {
      const [a, b] = [await machineApp(['CLUB_READ']), await machineApp(['CLUB_READ'])];
      const get = (accessToken: string) => limited.request('/v1/clubs', { headers: { authorization: `Bearer ${accessToken}` } });
      const tokenA = await token(a.id, a.secret);
      const first = await get(tokenA);
      expect(first.headers.get('ratelimit-policy')).to.equal('"default";q=2;w=60');
      expect(first.headers.get('ratelimit')).to.match(/^"default";r=1;t=\d+$/);
      // A second token of the same app spends the same budget.
      await expectOk(await get(await token(a.id, a.secret)));
      const over = await get(tokenA);
      await expectEnvelope(over, 429, 'TOO_MANY_REQUESTS');
      expect(Number(over.headers.get('retry-after'))).to.be.greaterThan(0);
      // Another app's budget is untouched.
      await expectOk(await get(await token(b.id, b.secret)));
    } finally {
      await limited.close();
    }
    // Closing flushed the counts: three answers of app a (one 429), as a key's are counted.
    const usage = await t.db.models.apiKeyUsage
      .find({ keyId: { $regex: '^app:' } })
      .lean<{ keyId: string; requests: number; throttled: number }[]>();
    expect(usage.map((u) => [u.requests, u.throttled]).sort()).to.deep.equal([
      [1, 0],
      [3, 1],
    ]);
  });

  it('answers 401 with the reason for an expired, malformed or foreign token, and 400 for a key and a token at once', async () => {
    const app = await machineApp(['CLUB_READ']);
    const accessToken = await token(app.id, app.secret);
    const later = await buildTestApp('machine_tokens_later', {
      db: t.db,
      env: sameAddresses(t),
      now: () => new Date(Date.now() + 3601_000),
    });
    try {
      const expired = await later.request('/v1/clubs', { headers: { authorization: `Bearer ${accessToken}` } });
      await expectEnvelope(expired, 401, 'UNAUTHORIZED', /^Expired bearer token: it expired at /);
    } finally {
      await later.close();
    }
    await expectEnvelope(await bearer('/v1/clubs', 'not a token'), 401, 'UNAUTHORIZED', 'Malformed bearer token');
    await expectEnvelope(await bearer('/v1/clubs', `${accessToken.slice(0, -4)}AAAA`), 401, 'UNAUTHORIZED', 'Invalid bearer token');
    // A person's access token is for userinfo, not for the data API.
    const person = await createLoginClient(t.db);
    const login = await authorize(t, { client_id: person.client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's' }, OWNER);
    const code = await t.request('/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'authorization_code',
        code: login.code,
        client_id: person.client.id,
        client_secret: person.secret,
        redirect_uri: REDIRECT_URI,
        code_verifier: login.verifier,
      }),
    });
    const personal = ((await code.json()) as TokenAnswer).access_token;
    await expectEnvelope(await bearer('/v1/clubs', personal), 401, 'UNAUTHORIZED', 'Invalid bearer token');
    // ...and a machine token is not for userinfo.
    expect((await bearer('/userinfo', accessToken)).status).to.equal(401);
    const { key } = await keys.issue({ scopes: ['CLUB_READ'] });
    await expectEnvelope(await bearer('/v1/clubs', accessToken, { 'X-API-KEY': key }), 400, 'BAD_REQUEST', 'not both');
    const missing = await t.request('/v1/clubs');
    await expectEnvelope(missing, 401, 'UNAUTHORIZED', 'Missing API key');
    expect(missing.headers.get('www-authenticate')).to.equal(`Bearer resource_metadata="${t.url}/.well-known/oauth-protected-resource"`);
  });
});
