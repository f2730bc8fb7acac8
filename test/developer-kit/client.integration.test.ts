import { expect } from 'chai';
import { DEMO_API_KEY, demoAccountEmail } from '../../src/data/school/demo.js';
import { DEMO_OAUTH } from '../../src/oauth/seed.js';
import { ENDPOINTS } from '../../src/rest/endpoints.js';
import {
  createClient,
  createLoginUrl,
  createLogoutUrl,
  exchangeCode,
  refresh,
  retryAfterSeconds,
  revoke,
  userinfo,
  type CampusClient,
} from '../../clients/typescript/src/index.js';
import type { TestApp } from '../helpers/app.js';
import { authorize } from '../helpers/oauth.js';
import { serveDemo, type ServedDemo } from '../helpers/serve.js';

/**
 * The TypeScript client (clients/typescript) against a real `campus serve` on the demo school:
 * every data endpoint through its typed calls, 304 through If-None-Match, 400/401 envelopes,
 * the wait on a 429's Retry-After, and the OAuth helpers through a real login.
 */
describe('developer kit: clients/typescript against campus serve', function () {
  this.timeout(120000);
  let served: ServedDemo;
  let campus: CampusClient;

  before(async () => {
    served = await serveDemo('client');
    campus = createClient({ baseUrl: served.url, apiKey: DEMO_API_KEY });
  });
  after(async () => {
    await served?.stop();
  });

  it('calls every data endpoint of the table with typed parameters and gets the envelope', async () => {
    const called = new Set<string>();
    const students = await campus.GET('/v1/students', { params: { query: { grade: 1, size: 5, sortBy: 'NAME' } } });
    called.add('/v1/students');
    expect(students.response.status).to.equal(200);
    expect(students.data?.status).to.equal('OK');
    expect(students.data?.data.students).to.have.length(5);
    expect(students.data?.data.students.every((s) => s.grade === 1)).to.equal(true);

    const clubs = await campus.GET('/v1/clubs', { params: { query: { size: 2 } } });
    called.add('/v1/clubs');
    expect(clubs.data?.data.clubs).to.have.length(2);
    const projects = await campus.GET('/v1/projects', { params: { query: { size: 2 } } });
    called.add('/v1/projects');
    expect(projects.data?.data.projects).to.have.length(2);
    const meals = await campus.GET('/v1/neis/meals');
    called.add('/v1/neis/meals');
    expect(meals.data?.code).to.equal(200);
    expect(meals.data?.data.length).to.be.greaterThan(0);
    const schedules = await campus.GET('/v1/neis/schedules', { params: { query: {} } });
    called.add('/v1/neis/schedules');
    expect(schedules.data?.status).to.equal('OK');
    const timetables = await campus.GET('/v1/neis/timetables', { params: { query: { grade: 1, classNum: 1 } } });
    called.add('/v1/neis/timetables');
    expect(timetables.data?.status).to.equal('OK');
    // The public project list, typed like the others (the key is sent and not needed).
    const open = await campus.GET('/v1/public/projects', { params: { query: { size: 2 } } });
    called.add('/v1/public/projects');
    expect(open.data?.data.projects).to.have.length(2);
    expect(Object.keys(open.data?.data.projects[0] ?? {})).to.deep.equal([
      'id',
      'name',
      'description',
      'clubName',
      'startYear',
      'endYear',
      'status',
      'participantCount',
    ]);
    const one = await campus.GET('/v1/public/projects/{id}', { params: { path: { id: 1 } } });
    called.add('/v1/public/projects/{id}');
    expect(one.data?.data?.id).to.equal(1);
    // The change feed: typed cursor and limit; the demo school has no change yet.
    const changes = await campus.GET('/v1/changes', { params: { query: { after: '0', limit: 10 } } });
    called.add('/v1/changes');
    expect(changes.data?.data).to.deep.equal({ events: [], nextCursor: '0' });
    expect([...called].sort()).to.deep.equal(ENDPOINTS.map((e) => e.path).sort());

    const health = await campus.GET('/v1/health');
    expect(health.response.status).to.equal(200);
  });

  it('passes If-None-Match through headers: a 304 has no data and no error', async () => {
    const first = await campus.GET('/v1/neis/meals');
    const etag = first.response.headers.get('ETag');
    expect(etag).to.be.a('string');
    const again = await campus.GET('/v1/neis/meals', { headers: { 'If-None-Match': etag ?? '' } });
    expect(again.response.status).to.equal(304);
    expect(again.data).to.equal(undefined);
    expect(again.error).to.equal('');
    // The typed header parameter of the document does the same.
    const typed = await campus.GET('/v1/neis/meals', { params: { header: { 'If-None-Match': etag ?? '' } } });
    expect(typed.response.status).to.equal(304);
  });

  it('hands back the error envelopes: 400 naming the parameter, 401 for an unknown key', async () => {
    const bad = await campus.GET('/v1/students', { params: { query: { grade: 9 } } });
    expect(bad.response.status).to.equal(400);
    expect(bad.data).to.equal(undefined);
    expect(bad.error).to.deep.include({ status: 'BAD_REQUEST', code: 400 });
    expect(bad.error?.message).to.include('grade');

    const stranger = createClient({ baseUrl: served.url, apiKey: '00000000-0000-4000-8000-000000000000' });
    const refused = await stranger.GET('/v1/clubs');
    expect(refused.response.status).to.equal(401);
    expect(refused.error).to.deep.include({ status: 'UNAUTHORIZED', code: 401 });
    expect(() => createClient({ baseUrl: served.url, apiKey: '' })).to.throw(TypeError, 'apiKey is empty');
  });

  it('without an API key calls the public endpoints; the others answer 401', async () => {
    const visitor = createClient({ baseUrl: served.url });
    const projects = await visitor.GET('/v1/public/projects');
    expect(projects.response.status).to.equal(200);
    expect(projects.data?.code).to.equal(200);
    const refused = await visitor.GET('/v1/clubs');
    expect(refused.response.status).to.equal(401);
    expect(refused.error).to.deep.include({ status: 'UNAUTHORIZED', code: 401 });
  });

  it("waits out a 429's Retry-After and asks again; hands the 429 back when the wait is too long or retry is off", async () => {
    const issue = async (limit: string) =>
      (JSON.parse(await served.campus(['keys', 'issue', '--scopes', 'CLUB_READ', '--rate-limit', limit, '--json'])) as { key: string }).key;
    const clubs = (client: CampusClient) => client.GET('/v1/clubs', { params: { query: { size: 1 } } });

    // A one-minute window, which no loaded machine outlasts between these calls.
    const slow = await issue('1/60');
    const noRetry = createClient({ baseUrl: served.url, apiKey: slow, retry: false });
    expect((await clubs(noRetry)).response.status).to.equal(200);
    const limited = await clubs(noRetry);
    expect(limited.response.status).to.equal(429);
    expect(limited.error).to.deep.include({ status: 'TOO_MANY_REQUESTS', code: 429 });
    expect(Number(limited.response.headers.get('Retry-After'))).to.be.within(1, 60);
    // A wait longer than the client allows is not waited for: the 429 comes back at once.
    const started = Date.now();
    const impatient = createClient({ baseUrl: served.url, apiKey: slow, retry: { attempts: 3, maxWaitSeconds: 5 } });
    expect((await clubs(impatient)).response.status).to.equal(429);
    expect(Date.now() - started).to.be.below(5000);

    // A three-second window: the client waits its Retry-After and asks again. Should the window
    // roll over between spending the point and the client's request (a very slow machine), the
    // client's first answer is a 200 and proves nothing: try again, at most three times.
    for (let round = 0; ; round++) {
      const quick = await issue('1/3');
      const statuses: number[] = [];
      const recording: typeof fetch = async (input, init) => {
        const res = await fetch(input, init);
        statuses.push(res.status);
        return res;
      };
      const patient = createClient({ baseUrl: served.url, apiKey: quick, retry: { attempts: 3, maxWaitSeconds: 5 }, fetch: recording });
      expect((await clubs(createClient({ baseUrl: served.url, apiKey: quick, retry: false }))).response.status).to.equal(200);
      const began = Date.now();
      const waited = await clubs(patient);
      expect(waited.response.status).to.equal(200);
      expect(waited.data?.data.clubs).to.have.length(1);
      if (statuses[0] === 200 && round < 2) continue;
      expect(statuses).to.deep.equal([429, 200]);
      expect(Date.now() - began).to.be.at.least(900);
      break;
    }

    expect(retryAfterSeconds('3')).to.equal(3);
    expect(retryAfterSeconds(new Date(Date.UTC(2026, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2026, 0, 1))).to.equal(10);
    expect(retryAfterSeconds('soon')).to.equal(undefined);
    expect(retryAfterSeconds(null)).to.equal(undefined);
  });

  it('OAuth helpers: login URL with PKCE and state, code exchange, userinfo, refresh, revoke, logout URL', async () => {
    const app = { issuer: served.url, clientId: DEMO_OAUTH.clientId, clientSecret: DEMO_OAUTH.clientSecret };
    const login = await createLoginUrl({ ...app, redirectUri: DEMO_OAUTH.redirectUri, scope: 'openid self:read' });
    const url = new URL(login.url);
    expect(`${url.origin}${url.pathname}`).to.equal(`${served.url}/v1/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).to.deep.include({
      client_id: DEMO_OAUTH.clientId,
      redirect_uri: DEMO_OAUTH.redirectUri,
      response_type: 'code',
      scope: 'openid self:read',
      code_challenge_method: 'S256',
      state: login.state,
    });
    expect(login.codeVerifier).to.match(/^[\w-]{43}$/);
    expect(login.state).to.have.length.greaterThan(20);

    // The browser's part: our login and consent pages, up to the redirect back to the app.
    const user = { email: demoAccountEmail(), password: DEMO_OAUTH.password };
    const back = await authorize({ url: served.url } as TestApp, Object.fromEntries(url.searchParams), user);
    expect(back.code).to.be.a('string');

    // A callback with another state is refused before the code is spent.
    let refused: unknown;
    await exchangeCode({ ...app, callbackUrl: back.location, state: 'another', codeVerifier: login.codeVerifier }).catch((err: unknown) => {
      refused = err;
    });
    // openid-client's error says why in its cause.
    expect(String((refused as { cause?: unknown }).cause)).to.equal(
      'OperationProcessingError: unexpected "state" response parameter value',
    );

    const tokens = await exchangeCode({ ...app, callbackUrl: back.location, state: login.state, codeVerifier: login.codeVerifier });
    expect(tokens.token_type.toLowerCase()).to.equal('bearer');
    expect(tokens.expires_in).to.equal(3600);
    expect(tokens.refresh_token).to.be.a('string');
    const claims = tokens.claims();
    expect(claims?.sub).to.equal('1');

    // Naming the login's scopes makes the fields they release required in the type (generated from the login-scope table).
    const me = await userinfo<'openid' | 'self:read'>({ ...app, accessToken: tokens.access_token, expectedSubject: claims?.sub ?? '' });
    expect(me).to.deep.include({ sub: '1', email: demoAccountEmail(), isStudent: true, teacher: null });
    const student: { name: string; studentNumber: number | null } | null = me.student;
    expect(student?.name).to.equal('홍건우');
    expect(Object.keys(me)).to.deep.equal(['sub', 'id', 'email', 'role', 'isStudent', 'student', 'teacher']);

    const renewed = await refresh({ ...app, refreshToken: tokens.refresh_token ?? '' });
    expect(renewed.refresh_token).to.be.a('string').and.not.equal(tokens.refresh_token);
    expect((await userinfo({ ...app, accessToken: renewed.access_token })).email).to.equal(demoAccountEmail());

    await revoke({ ...app, token: renewed.refresh_token ?? '' });
    let afterRevoke: unknown;
    await userinfo({ ...app, accessToken: renewed.access_token }).catch((err: unknown) => {
      afterRevoke = err;
    });
    expect(afterRevoke).to.be.instanceOf(Error);
    const status = await fetch(`${served.url}/userinfo`, { headers: { authorization: `Bearer ${renewed.access_token}` } });
    expect(status.status).to.equal(401);

    const logout = new URL(await createLogoutUrl({ ...app, state: 'bye', idTokenHint: tokens.id_token ?? '' }));
    expect(`${logout.origin}${logout.pathname}`).to.equal(`${served.url}/v1/oauth/logout`);
    expect(logout.searchParams.get('client_id')).to.equal(DEMO_OAUTH.clientId);
    expect(logout.searchParams.get('state')).to.equal('bye');
  });
});
