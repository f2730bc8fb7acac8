import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { expect } from 'chai';
import { parse } from 'graphql';
import type { CommandStartedEvent } from 'mongodb';
import { addDays, todayIn } from '../../src/calendar.js';
import type { Database } from '../../src/data/database.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { MAX_COST, measureOperation } from '../../src/graphql/limits.js';
import { loadTypeDefs } from '../../src/graphql/schema.js';
import { ApiKeyAuthenticator } from '../../src/http/api-key.js';
import { UnauthorizedError } from '../../src/errors/index.js';
import { createLogger } from '../../src/logger.js';
import { seedDemoNeis } from '../../src/neis/seed.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { buildClub, buildStudent, insertSchool, issueKey, TEST_POLICY } from '../helpers/factories.js';
import { percentile, runFlood } from '../helpers/flood.js';
import { authorize, createAccount, createClient, CookieJar, pkcePair, postJson, REDIRECT_URI } from '../helpers/oauth.js';

/**
 * Isolation of the data API: the time budget, the bound on database operations per
 * request, the bound on concurrent GraphQL executions, 401s limited per client address, the
 * separate cache of unknown API keys, and a flood of maximum-cost documents that leaves health,
 * userinfo, the login page and the token endpoint answering.
 */

const STUDENT =
  'id name sex email grade classNum number studentNumber major role dormitoryFloor dormitoryRoom majorClub { id name type } autonomousClub { id name type } specialty githubId githubUrl';
const MEAL =
  'mealId schoolCode schoolName officeCode officeName mealDate mealType mealMenu mealAllergyInfo mealCalories originInfo nutritionInfo mealServeCount';

/** Five full pages of students with both clubs and a year of meals: close to MAX_COST, all of it read. */
const HEAVY = `{ ${Array.from({ length: 5 }, (_, i) => `s${i}: students(size: 1000) { totalElements students { ${STUDENT} } }`).join(' ')}
  meals(fromDate: "2026-03-01", toDate: "2027-02-28") { ${MEAL} } }`;

/** The collections of served data. */
const DATA_COLLECTIONS = new Set(['students', 'clubs', 'projects', 'neis_meals', 'neis_schedules', 'neis_timetables', 'neis_state']);

/** A large school: 1000 students in 8 clubs, so that a page of 1000 takes real time anywhere. */
async function insertLargeSchool(db: Database): Promise<void> {
  await insertSchool(db, {
    students: Array.from({ length: 1000 }, (_, i) =>
      buildStudent({ _id: i + 1, email: `s${i + 1}@school.test`, majorClubId: 1 + (i % 4), autonomousClubId: 5 + (i % 4) }),
    ),
    clubs: Array.from({ length: 8 }, (_, i) => buildClub({ _id: i + 1, type: i < 4 ? 'MAJOR_CLUB' : 'AUTONOMOUS_CLUB', leaderId: i + 1 })),
  });
}

function postGraphql(t: TestApp, key: string, query: string): Promise<Response> {
  return t.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-API-KEY': key },
    body: JSON.stringify({ query }),
  });
}

describe('data API: isolation by the time budget of a data request', () => {
  let db: Database & { drop(): Promise<void> };
  let tight: TestApp;
  let roomy: TestApp;
  let key: string;
  const commands: { at: number; collection: string; maxTimeMS: unknown }[] = [];

  before(async function () {
    this.timeout(60000);
    db = await createTestDatabase('isolation_budget', { monitorCommands: true });
    db.client.on('commandStarted', (e: CommandStartedEvent) => {
      const collection = String(e.command[e.commandName]);
      if (DATA_COLLECTIONS.has(collection)) commands.push({ at: performance.now(), collection, maxTimeMS: e.command['maxTimeMS'] });
    });
    await insertLargeSchool(db);
    tight = await buildTestApp('isolation_tight', { db, surfaces: ['data'], env: { DATA_TIME_BUDGET_MS: '20' } });
    roomy = await buildTestApp('isolation_roomy', { db, surfaces: ['data'] });
    // A year of meals to read from the database: the school is served from memory and can be
    // fast enough to finish within 20 ms, the meals' read cannot.
    await seedDemoNeis(db, tight.config, createLogger('silent'));
    key = await issueKey(db, { rateLimit: { points: 100000, durationSeconds: 60 } });
  });
  after(async () => {
    await tight.close();
    await roomy.close();
    await db.drop();
  });

  const budgetMessage = 'The request did not finish within its time budget of 20 ms and was stopped; ask for less data or retry later.';

  it('GraphQL: 503 envelope with Retry-After at the deadline; its reads ran with maxTimeMS and none started after it', async () => {
    // Within the default budget (5 s) a document is served, its reads bounded by maxTimeMS. The
    // school itself is read once per data version into the read model, outside any request's
    // budget (src/data/school/read-model.ts): those finds carry no maxTimeMS.
    commands.length = 0;
    const served = await postGraphql(
      roomy,
      key,
      '{ students(size: 1000) { totalElements students { id majorClub { id } } } meals(fromDate: "2026-03-01", toDate: "2026-03-31") { mealId } }',
    );
    expect(served.status).to.equal(200);
    await served.arrayBuffer();
    const [school, budgeted] = [
      commands.filter((c) => !c.collection.startsWith('neis_')),
      commands.filter((c) => c.collection.startsWith('neis_')),
    ];
    expect(school.map((c) => c.collection).sort()).to.deep.equal(['clubs', 'projects', 'students']);
    for (const c of school) expect(c.maxTimeMS).to.equal(undefined);
    expect(budgeted.length).to.be.greaterThan(0);
    for (const c of budgeted) expect(c.maxTimeMS).to.be.a('number').within(1, 5000);

    commands.length = 0;
    const started = performance.now();
    const res = await postGraphql(tight, key, HEAVY);
    const answeredAt = performance.now();
    await expectEnvelope(res, 503, 'SERVICE_UNAVAILABLE', budgetMessage);
    expect(res.headers.get('retry-after')).to.equal('1');
    expect(answeredAt - started).to.be.below(1000);
    // Give abandoned work the time to show itself: no read may start after the answer.
    await new Promise((done) => setTimeout(done, 500));
    for (const c of commands) expect(c.maxTimeMS).to.be.a('number').within(1, 20);
    expect(commands.filter((c) => c.at > answeredAt)).to.deep.equal([]);
  });

  it('REST: 503 envelope with Retry-After; health has no budget', async () => {
    // After a change the request waits for the school's load (which outlasts 20 ms) and gives
    // up at its own deadline; the load goes on for the requests that come after it.
    await db.versions.bump('data');
    const res = await tight.request('/v1/students?size=1000', { headers: { 'X-API-KEY': key } });
    await expectEnvelope(res, 503, 'SERVICE_UNAVAILABLE', budgetMessage);
    expect(res.headers.get('retry-after')).to.equal('1');
    expect(res.headers.get('etag')).to.equal(null);
    await expectOk(await tight.request('/v1/health'));
    // The same request within the default budget.
    const data = await expectOk<{ totalElements: number }>(
      await roomy.request('/v1/students?size=1000', { headers: { 'X-API-KEY': key } }),
    );
    expect(data.totalElements).to.equal(1000);
  });
});

describe('data API: isolation by database operations per request and concurrent GraphQL executions', () => {
  let db: Database & { drop(): Promise<void> };
  let key: string;
  const started: string[] = [];

  before(async function () {
    this.timeout(60000);
    db = await createTestDatabase('isolation_ops', { monitorCommands: true });
    db.client.on('commandStarted', (e: CommandStartedEvent) => started.push(`${e.commandName} ${String(e.command[e.commandName])}`));
    await insertLargeSchool(db);
    key = await issueKey(db, { rateLimit: { points: 100000, durationSeconds: 60 } });
  });
  after(() => db.drop());

  /**
   * After a change, sends the heavy document and waits until it holds a GraphQL slot: its first
   * read (the school loading) has reached the database. The heavy answer is still to come.
   */
  async function holdSlot(t: TestApp): Promise<{ heavy: Promise<Response> }> {
    await db.versions.bump('data');
    started.length = 0;
    const heavy = postGraphql(t, key, HEAVY);
    while (!started.includes('find students')) await new Promise((done) => setTimeout(done, 2));
    return { heavy };
  }

  it('a request needing more database operations than allowed is stopped with 400', async () => {
    const t = await buildTestApp('isolation_ops_app', { db, surfaces: ['data'], env: { DATA_MAX_DB_OPERATIONS: '4' } });
    try {
      // The key lookup is one operation; students come from the read model, outside the budget.
      await expectOk(await t.request('/v1/students?studentId=1', { headers: { 'X-API-KEY': key } }));
      // Five meal ranges a year apart are five reads of their own, each after the NEIS state.
      const five = Array.from(
        { length: 5 },
        (_, i) => `m${i}: meals(fromDate: "${2020 + i}-03-02", toDate: "${2020 + i}-03-03") { mealId }`,
      ).join(' ');
      started.length = 0;
      const res = await postGraphql(t, key, `{ ${five} }`);
      await expectEnvelope(
        res,
        400,
        'BAD_REQUEST',
        'The request needed more than 4 database operations, the most one request may make; ask for fewer root fields or shorter date ranges.',
      );
      await new Promise((done) => setTimeout(done, 200));
      expect(started.filter((c) => c.includes(' neis_')).length).to.be.at.most(4);
    } finally {
      await t.close();
    }
  });

  it('GraphQL executions are bounded per process: past the slots and the waiting line, 503 with Retry-After', async () => {
    const t = await buildTestApp('isolation_gate', { db, surfaces: ['data'], env: { GRAPHQL_CONCURRENCY: '1', GRAPHQL_QUEUE: '0' } });
    try {
      const { heavy } = await holdSlot(t);
      const refused = await postGraphql(t, key, '{ viewerScopes }');
      await expectEnvelope(
        refused,
        503,
        'SERVICE_UNAVAILABLE',
        'The GraphQL endpoint is busy (1 running, 0 waiting); retry after 1 second.',
      );
      expect(refused.headers.get('retry-after')).to.equal('1');
      // REST is not behind the GraphQL slots.
      await expectOk(await t.request('/v1/students?studentId=1', { headers: { 'X-API-KEY': key } }));
      expect((await heavy).status).to.equal(200);
      expect((await postGraphql(t, key, '{ viewerScopes }')).status).to.equal(200);
    } finally {
      await t.close();
    }
  });

  it('a document waits in line for a slot while its time budget lasts', async () => {
    const t = await buildTestApp('isolation_line', { db, surfaces: ['data'], env: { GRAPHQL_CONCURRENCY: '1', GRAPHQL_QUEUE: '1' } });
    try {
      const { heavy } = await holdSlot(t);
      const waited = await postGraphql(t, key, '{ viewerScopes }');
      expect(waited.status).to.equal(200);
      expect((await heavy).status).to.equal(200);
    } finally {
      await t.close();
    }
  });
});

/** A GET from a chosen local address (the data API tells clients apart by address). */
function getFrom(
  url: string,
  localAddress: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', localAddress, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('data API: isolation of failed authentications per client address', () => {
  let t: TestApp;
  let key: string;

  before(async () => {
    t = await buildTestApp('isolation_401', { surfaces: ['data'], env: { API_KEY_FAILURE_LIMIT: '3/60' } });
    await insertSchool(t.db, { students: [buildStudent({ _id: 1 })] });
    key = await issueKey(t.db);
  });
  after(() => t.close());

  it('after 3 failures from one address its failing requests are answered 429; a valid key from it is still served', async () => {
    const url = `${t.url}/v1/students`;
    const here = (headers: Record<string, string>) => getFrom(url, '127.0.0.1', headers);
    const elsewhere = (headers: Record<string, string>) => getFrom(url, '127.0.0.2', headers);

    expect((await here({ 'X-API-KEY': key })).status).to.equal(200);
    for (const headers of [{}, { 'X-API-KEY': 'not-a-uuid' }, { 'X-API-KEY': randomUUID() }] as Record<string, string>[]) {
      expect((await here(headers)).status).to.equal(401);
    }
    for (const headers of [{ 'X-API-KEY': randomUUID() }, {}] as Record<string, string>[]) {
      const refused = await here(headers);
      expect(refused.status).to.equal(429);
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).to.be.within(1, 60);
      expect(JSON.parse(refused.body)).to.deep.equal({
        status: 'TOO_MANY_REQUESTS',
        code: 429,
        message: `Too many failed authentications from this address (3 per 60 s); retry after ${retryAfter} seconds.`,
        data: null,
      });
    }
    // Failures are limited, successes are not: the valid key from the same address is served.
    expect((await here({ 'X-API-KEY': key })).status).to.equal(200);
    // Another address: its valid key works, and its own failures are its own.
    expect((await elsewhere({ 'X-API-KEY': key })).status).to.equal(200);
    expect((await elsewhere({ 'X-API-KEY': randomUUID() })).status).to.equal(401);
    expect((await elsewhere({ 'X-API-KEY': key })).status).to.equal(200);
    // GraphQL shares the rule; health needs no key and is never refused.
    const graphql = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-KEY': key },
      body: '{"query":"{ viewerScopes }"}',
    });
    expect(graphql.status).to.equal(200);
    const badGraphql = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-KEY': randomUUID() },
      body: '{"query":"{ viewerScopes }"}',
    });
    await expectEnvelope(badGraphql, 429, 'TOO_MANY_REQUESTS', 'Too many failed authentications from this address');
    await expectOk(await t.request('/v1/health'));
  });

  it('a valid key keeps working after 100 bad keys from its address (expired and unknown alike)', async () => {
    const url = `${t.url}/v1/students`;
    const from = (headers: Record<string, string>) => getFrom(url, '127.0.0.3', headers);
    const expired = await issueKey(t.db, { days: 1, now: new Date(Date.now() - 2 * 24 * 60 * 60 * 1000) });
    const statuses = new Set<number>();
    for (let i = 0; i < 100; i++) statuses.add((await from({ 'X-API-KEY': i % 2 ? expired : randomUUID() })).status);
    expect([...statuses].sort()).to.deep.equal([401, 429]);
    expect((await from({ 'X-API-KEY': key })).status).to.equal(200);
    expect((await from({ 'X-API-KEY': expired })).status).to.equal(429);
    expect((await from({ 'X-API-KEY': key })).status).to.equal(200);
  });
});

describe('data API: isolation of unknown API keys, cached apart from known ones', () => {
  let db: Database & { drop(): Promise<void> };
  const lookups: string[] = [];

  before(async () => {
    db = await createTestDatabase('isolation_keys', { monitorCommands: true });
    db.client.on('commandStarted', (e: CommandStartedEvent) => {
      if (String(e.command[e.commandName]) === 'api_keys') lookups.push(e.commandName);
    });
  });
  after(() => db.drop());

  it('10,001 random keys do not push a valid key out of the cache', async function () {
    this.timeout(120000);
    const valid = await issueKey(db);
    const keys = new ApiKeyAuthenticator(db, TEST_POLICY);
    // A promise either way: the authenticator answers a remembered key at once, others later.
    const authenticator = { authenticate: async (key: string) => keys.authenticate(key) };
    await authenticator.authenticate(valid);
    const unknown = Array.from({ length: 10001 }, () => randomUUID());
    // The first is remembered first, so it is the one the bounded cache lets go.
    await authenticator.authenticate(unknown[0] ?? '').catch(() => {});
    for (let i = 1; i < unknown.length; i += 50) {
      await Promise.all(
        unknown.slice(i, i + 50).map((k) =>
          authenticator.authenticate(k).then(
            () => expect.fail('an unknown key was accepted'),
            (err: unknown) => expect(err).to.be.instanceOf(UnauthorizedError),
          ),
        ),
      );
    }
    lookups.length = 0;
    await authenticator.authenticate(valid);
    expect(lookups, 'the valid key was looked up again').to.deep.equal([]);
    // The unknown ones have a cache of their own, bounded: the newest are remembered, the oldest not.
    await authenticator.authenticate(unknown[10000] ?? '').catch(() => {});
    expect(lookups).to.deep.equal([]);
    await authenticator.authenticate(unknown[0] ?? '').catch(() => {});
    expect(lookups).to.deep.equal(['find']);
  });
});

describe('data API: isolation from a flood of maximum-cost documents', () => {
  const USER = { email: 'flood@school.test', password: 'flood password 1' };
  let db: Database & { drop(): Promise<void> };
  let t: TestApp;
  let key: string;
  const reads: string[] = [];
  let client: { id: string; secret: string };
  let accessToken: string;
  let refreshToken: string;

  before(async function () {
    this.timeout(120000);
    db = await createTestDatabase('isolation_flood', { monitorCommands: true });
    db.client.on('commandStarted', (e: CommandStartedEvent) => reads.push(`${e.commandName} ${String(e.command[e.commandName])}`));
    t = await buildTestApp('isolation_flood', { db, env: { LOG_LEVEL: 'warn' } });
    await seedDemoSchool(t.db);
    await seedDemoNeis(t.db, t.config, createLogger('silent'));
    // The account is a student's, so userinfo reads the student record too.
    await t.db.models.students.updateOne({ _id: 1 }, { email: USER.email });
    await createAccount(t.db, USER.email, USER.password);
    const created = await createClient(t.db, { firstParty: true });
    client = { id: created.client.id, secret: created.secret ?? '' };
    const { code, verifier } = await authorize(
      t,
      { client_id: client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'f' },
      USER,
    );
    const tokens = await postJson(t, '/v1/oauth/token', {
      grant_type: 'authorization_code',
      code,
      client_id: client.id,
      client_secret: client.secret,
      redirect_uri: REDIRECT_URI,
      ...(verifier ? { code_verifier: verifier } : {}),
    });
    expect(tokens.status, await tokens.clone().text()).to.equal(200);
    ({ access_token: accessToken, refresh_token: refreshToken } = (await tokens.json()) as { access_token: string; refresh_token: string });
    key = await issueKey(t.db, { rateLimit: { points: 1_000_000, durationSeconds: 60 } });
  });
  after(async () => {
    await t.close();
    await db.drop();
  });

  it('date-range fields of one request share one read per kind, however many classes and ranges they ask', async () => {
    const classes = Array.from(
      { length: 12 },
      (_, i) => `t${i}: timetables(grade: ${1 + Math.floor(i / 4)}, classNum: ${1 + (i % 4)}) { timetableId }`,
    );
    const today = todayIn(t.config.schoolTimeZone, new Date());
    const meals = [
      'm0: meals { mealId }',
      `m1: meals(fromDate: "${addDays(today, -150)}", toDate: "${addDays(today, -1)}") { mealId }`,
      `m2: meals(fromDate: "${addDays(today, 1)}", toDate: "${addDays(today, 150)}") { mealId }`,
    ];
    reads.length = 0;
    const res = await postGraphql(t, key, `{ ${[...classes, ...meals].join(' ')} }`);
    const body = (await res.json()) as { data: Record<string, { timetableId?: string }[]>; errors?: unknown };
    expect(body.errors).to.equal(undefined);
    // Each alias still gets exactly its own rows (the demo's today is a day of its window).
    expect(body.data['t5']?.every((row) => row.timetableId?.endsWith('_2_2_' + row.timetableId.split('_').pop()))).to.equal(true);
    const neis = reads.filter((r) => r.startsWith('find neis_'));
    expect(neis.filter((r) => r === 'find neis_timetables')).to.have.length(1);
    expect(neis.filter((r) => r === 'find neis_meals')).to.have.length(1);
    expect(neis.filter((r) => r === 'find neis_state')).to.have.length(2);
  });

  it('the flood document is accepted and near the cost limit', async () => {
    const schema = makeExecutableSchema({ typeDefs: loadTypeDefs() });
    const document = parse(HEAVY);
    const operation = document.definitions[0];
    if (operation?.kind !== 'OperationDefinition') throw new Error('no operation');
    const { cost } = measureOperation({ schema, document, operation, variables: {}, today: '2026-03-02' });
    expect(cost).to.be.within(MAX_COST * 0.95, MAX_COST);
    const res = await postGraphql(t, key, HEAVY);
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { data: { s0: { totalElements: number } }; errors?: unknown };
    expect(body.errors).to.equal(undefined);
    expect(body.data.s0.totalElements).to.be.greaterThan(200);
  });

  it('for 10 s at 16 connections: health and userinfo keep p99 under a second (not queued behind the flood), login and token answer, only the time budget fails', async function () {
    this.timeout(60000);
    const flood = runFlood({
      url: `${t.url}/graphql`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-KEY': key },
      body: JSON.stringify({ query: HEAVY }),
      connections: 16,
      durationMs: 10_000,
      maxRequests: 2000,
    });
    const timed = async (path: string, init: RequestInit = {}) => {
      const started = performance.now();
      const res = await t.request(path, init);
      await res.arrayBuffer();
      return { status: res.status, ms: performance.now() - started };
    };
    const health: number[] = [];
    const userinfo: number[] = [];
    const others: { what: string; status: number }[] = [];
    // Let the flood start, then probe for 9 s while it runs.
    await new Promise((done) => setTimeout(done, 500));
    const stopAt = performance.now() + 9000;
    let round = 0;
    while (performance.now() < stopAt) {
      const [h, u] = await Promise.all([timed('/v1/health'), timed('/userinfo', { headers: { Authorization: `Bearer ${accessToken}` } })]);
      expect([h.status, u.status]).to.deep.equal([200, 200]);
      health.push(h.ms);
      userinfo.push(u.ms);
      round += 1;
      if (round % 20 === 5) others.push({ what: 'login page', status: await loginPageStatus(t, client.id) });
      if (round % 20 === 15) {
        const refreshed = await postJson(t, '/v1/oauth/token', {
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: client.id,
          client_secret: client.secret,
        });
        const body = (await refreshed.json()) as { access_token?: string; refresh_token?: string };
        accessToken = body.access_token ?? accessToken;
        refreshToken = body.refresh_token ?? refreshToken;
        others.push({ what: 'token endpoint', status: refreshed.status });
      }
      await new Promise((done) => setTimeout(done, 25));
    }
    const summary = await flood;
    const report = JSON.stringify({ health: percentile(health, 99), userinfo: percentile(userinfo, 99), samples: health.length, summary });
    expect(health.length, report).to.be.greaterThan(50);
    // Isolation, not speed: an answer queued behind the flood would wait seconds (its requests run
    // up to the 5 s budget). How fast they stay is measured by `npm run bench -- flood`
    // (docs/benchmarks.md); on a busy machine the p99 here was 400-640 ms, on a quiet one under 200.
    expect(percentile(health, 99), report).to.be.below(1000);
    expect(percentile(userinfo, 99), report).to.be.below(1000);
    expect(others.map((o) => o.what)).to.include.members(['login page', 'token endpoint']);
    expect(
      others.every((o) => o.status === 200),
      JSON.stringify(others),
    ).to.equal(true);
    // The flood: bounded, served, and failing only by the time budget (503 envelope, Retry-After).
    expect(summary.failedToConnect, report).to.equal(0);
    expect(summary.sent).to.be.at.most(2000);
    const served = summary.outcomes.filter((o) => o.status === 200).reduce((n, o) => n + o.count, 0);
    expect(served, report).to.be.greaterThan(0);
    for (const outcome of summary.outcomes.filter((o) => o.status !== 200)) {
      expect(outcome, report).to.deep.include({
        status: 503,
        envelopeStatus: 'SERVICE_UNAVAILABLE',
        message: 'The request did not finish within its time budget of 5000 ms and was stopped; ask for less data or retry later.',
        retryAfter: '5',
      });
    }
  });
});

/** Starts an authorization like a browser and answers with the status of the login page. */
async function loginPageStatus(t: TestApp, clientId: string): Promise<number> {
  const jar = new CookieJar();
  const { challenge } = pkcePair();
  const params = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    state: 'p',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const start = await t.request(`/v1/oauth/authorize?${params}`, { redirect: 'manual' });
  jar.store(start);
  await start.arrayBuffer();
  if (start.status !== 303) return start.status;
  const page = await fetch(new URL(start.headers.get('location') ?? '', t.url), { headers: { cookie: jar.header() } });
  const html = await page.text();
  return page.status === 200 && html.includes('name="password"') ? 200 : page.status;
}
