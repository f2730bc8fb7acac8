import { request as httpRequest } from 'node:http';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ApiKeyService } from '../../src/data/keys/store.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { buildClub, buildProject, buildStudent, insertSchool, issueKey } from '../helpers/factories.js';

/**
 * API keys (401/403), rate limits (headers, 429), conditional requests (ETag, 304) and the
 * 404/405 envelopes of the data API, over HTTP against a real database.
 */

const DAY_MS = 24 * 60 * 60 * 1000;
const ENDPOINTS = [
  { path: '/v1/students', scope: 'STUDENT_READ' },
  { path: '/v1/clubs', scope: 'CLUB_READ' },
  { path: '/v1/projects', scope: 'PROJECT_READ' },
] as const;

/** A GET with exact header names on the wire (fetch would lower-case them). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    for (const [name, value] of Object.entries(headers)) req.setHeader(name, value);
    req.on('error', reject);
    req.end();
  });
}

function expectNoRateLimitHeaders(res: Response): void {
  for (const name of ['ratelimit-policy', 'ratelimit', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'etag']) {
    expect(res.headers.get(name), name).to.equal(null);
  }
}

describe('data API: API keys, rate limits, conditional requests', () => {
  let t: TestApp;
  let key: string;
  const get = (path: string, headers: Record<string, string> = {}) => t.request(path, { headers: { 'X-API-KEY': key, ...headers } });

  before(async () => {
    t = await buildTestApp('auth_limits', { surfaces: ['data'] });
    await insertSchool(t.db, {
      students: [buildStudent({ _id: 1, name: 'Kim', majorClubId: 1 }), buildStudent({ _id: 2, name: 'Lee' })],
      clubs: [buildClub({ _id: 1, name: 'Robotics', leaderId: 1 })],
      projects: [buildProject({ _id: 1, name: 'Farm', clubId: 1, participantIds: [1] })],
    });
    key = await issueKey(t.db, { rateLimit: { points: 100000, durationSeconds: 60 } });
  });
  after(() => t.close());

  describe('401: the key is missing, malformed, unknown, revoked or expired', () => {
    for (const { path } of ENDPOINTS) {
      it(`${path} without X-API-KEY -> 401 "Missing API key"`, async () => {
        const res = await t.request(path);
        await expectEnvelope(res, 401, 'UNAUTHORIZED', /^Missing API key: send it in the X-API-KEY header\.$/);
        expectNoRateLimitHeaders(res);
      });
    }

    it('an empty header, or the key sent as a bearer token, is a missing key', async () => {
      await expectEnvelope(await t.request('/v1/students', { headers: { 'X-API-KEY': '' } }), 401, 'UNAUTHORIZED', /^Missing API key/);
      await expectEnvelope(
        await t.request('/v1/students', { headers: { Authorization: `Bearer ${key}` } }),
        401,
        'UNAUTHORIZED',
        /^Missing API key/,
      );
    });

    for (const malformed of [
      'abc',
      '12345678-1234-1234-1234-12345678901',
      `${randomUUID()}x`,
      randomUUID().replaceAll('-', ''),
      `{${randomUUID()}}`,
    ]) {
      it(`a value that is not a UUID ('${malformed}') -> 401 "Malformed API key"`, async () => {
        const res = await t.request('/v1/students', { headers: { 'X-API-KEY': malformed } });
        await expectEnvelope(res, 401, 'UNAUTHORIZED', /^Malformed API key: X-API-KEY must be a UUID\.$/);
        expectNoRateLimitHeaders(res);
      });
    }

    it('an unknown key and a revoked key read the same', async () => {
      const unknown = await expectEnvelope(
        await t.request('/v1/students', { headers: { 'X-API-KEY': randomUUID() } }),
        401,
        'UNAUTHORIZED',
      );
      expect(unknown.message).to.equal('Invalid API key: it is not recognised.');

      const service = new ApiKeyService(t.db, t.config.policy);
      const issued = await service.issue({ scopes: ['STUDENT_READ'] });
      await expectOk(await t.request('/v1/students', { headers: { 'X-API-KEY': issued.key } }));
      await service.revoke(issued.summary.id);
      const res = await t.request('/v1/students', { headers: { 'X-API-KEY': issued.key } });
      const revoked = await expectEnvelope(res, 401, 'UNAUTHORIZED');
      expect(revoked).to.deep.equal(unknown);
      expectNoRateLimitHeaders(res);
    });

    it('a rotated key stops working; its replacement works with the same scopes', async () => {
      const service = new ApiKeyService(t.db, t.config.policy);
      const old = await service.issue({ scopes: ['CLUB_READ'] });
      const rotated = await service.rotate(old.summary.id);
      await expectEnvelope(await t.request('/v1/clubs', { headers: { 'X-API-KEY': old.key } }), 401, 'UNAUTHORIZED', 'Invalid API key');
      await expectOk(await t.request('/v1/clubs', { headers: { 'X-API-KEY': rotated.key } }));
      await expectEnvelope(await t.request('/v1/students', { headers: { 'X-API-KEY': rotated.key } }), 403, 'FORBIDDEN', 'STUDENT_READ');
    });

    it('a key issued 31 days ago (30-day validity) -> 401 "Expired API key" naming when', async () => {
      const issuedAt = new Date(Date.now() - 31 * DAY_MS);
      const expired = await issueKey(t.db, { now: issuedAt });
      const res = await t.request('/v1/students', { headers: { 'X-API-KEY': expired } });
      const body = await expectEnvelope(res, 401, 'UNAUTHORIZED');
      expect(body.message).to.equal(
        `Expired API key: it expired at ${new Date(issuedAt.getTime() + 30 * DAY_MS).toISOString()}; ask for it to be renewed.`,
      );
      expectNoRateLimitHeaders(res);
    });

    it('expiry is exact to the millisecond on the app clock, and renewal extends the same key', async () => {
      let now = new Date('2026-03-01T00:00:00.000Z');
      const clocked = await buildTestApp('auth_clock', { db: t.db, surfaces: ['data'], now: () => now });
      try {
        const service = new ApiKeyService(t.db, t.config.policy);
        const issued = await service.issue({ scopes: ['STUDENT_READ'], now });
        const call = () => clocked.request('/v1/students', { headers: { 'X-API-KEY': issued.key } });
        now = new Date(Date.parse('2026-03-31T00:00:00.000Z') - 1);
        await expectOk(await call());
        now = new Date('2026-03-31T00:00:00.000Z');
        await expectEnvelope(await call(), 401, 'UNAUTHORIZED', 'Expired API key: it expired at 2026-03-31T00:00:00.000Z');
        await service.renew(issued.summary.id, 30, now);
        await expectOk(await call());
        now = new Date('2026-04-30T00:00:00.000Z');
        await expectEnvelope(await call(), 401, 'UNAUTHORIZED', 'Expired API key: it expired at 2026-04-30T00:00:00.000Z');
      } finally {
        await clocked.close();
      }
    });

    it('authentication comes before parameter checks', async () => {
      await expectEnvelope(await t.request('/v1/students?grade=9'), 401, 'UNAUTHORIZED');
      await expectEnvelope(await t.request('/v1/clubs?size=0', { headers: { 'X-API-KEY': 'nope' } }), 401, 'UNAUTHORIZED');
    });
  });

  describe('header name and key value', () => {
    for (const name of ['X-API-KEY', 'X-API-Key', 'x-api-key', 'X-Api-Key']) {
      it(`the header is accepted as ${name}`, async () => {
        const res = await rawGet(`${t.url}/v1/students`, { [name]: key });
        expect(res.status).to.equal(200);
        expect((JSON.parse(res.body) as { data: { totalElements: number } }).data.totalElements).to.equal(2);
      });
    }
    it('the key itself is accepted in upper case', async () => {
      await expectOk(await t.request('/v1/students', { headers: { 'X-API-KEY': key.toUpperCase() } }));
    });
  });

  describe('403: a valid key without the endpoint scope', () => {
    for (const { path, scope } of ENDPOINTS) {
      it(`${path} needs ${scope}; the message names it`, async () => {
        const others = ENDPOINTS.filter((e) => e.scope !== scope).map((e) => e.scope);
        const limited = await issueKey(t.db, { scopes: [...others, 'NEIS_READ'] });
        const res = await t.request(`${path}?size=0`, { headers: { 'X-API-KEY': limited } });
        const body = await expectEnvelope(res, 403, 'FORBIDDEN');
        expect(body.message).to.equal(`This API key lacks the ${scope} scope that this endpoint requires.`);
        // An authenticated answer: it carries the rate-limit headers, and no ETag.
        expect(res.headers.get('ratelimit-policy')).to.equal('"default";q=100;w=60');
        expect(res.headers.get('etag')).to.equal(null);
        // The same key reaches the endpoints its scopes name.
        for (const other of ENDPOINTS.filter((e) => e.scope !== scope)) {
          await expectOk(await t.request(other.path, { headers: { 'X-API-KEY': limited } }));
        }
      });
    }
  });

  describe('rate limits', () => {
    it('every authenticated answer carries the policy of the default limit (100 per 60 s)', async () => {
      const fresh = await issueKey(t.db);
      const res = await t.request('/v1/clubs', { headers: { 'X-API-KEY': fresh } });
      await expectOk(res);
      expect(res.headers.get('ratelimit-policy')).to.equal('"default";q=100;w=60');
      expect(res.headers.get('ratelimit')).to.match(/^"default";r=99;t=(59|60)$/);
      expect(res.headers.get('x-ratelimit-limit')).to.equal('100');
      expect(res.headers.get('x-ratelimit-remaining')).to.equal('99');
    });

    it('a key with its own limit: counts down, then 429 with Retry-After and the envelope', async () => {
      const small = await issueKey(t.db, { scopes: ['STUDENT_READ'], rateLimit: { points: 3, durationSeconds: 60 } });
      const call = (path = '/v1/students') => t.request(path, { headers: { 'X-API-KEY': small } });
      for (const remaining of [2, 1, 0]) {
        // A 400 and a 403 spend the budget too: each one is a request.
        const res = await call(remaining === 1 ? '/v1/students?grade=0' : remaining === 0 ? '/v1/clubs' : '/v1/students');
        expect(res.status).to.equal(remaining === 2 ? 200 : remaining === 1 ? 400 : 403);
        expect(res.headers.get('ratelimit-policy')).to.equal('"default";q=3;w=60');
        expect(res.headers.get('ratelimit')).to.match(new RegExp(`^"default";r=${remaining};t=(59|60)$`));
        expect(res.headers.get('x-ratelimit-limit')).to.equal('3');
        expect(res.headers.get('x-ratelimit-remaining')).to.equal(String(remaining));
        await res.body?.cancel();
      }
      const res = await call();
      const body = await expectEnvelope(res, 429, 'TOO_MANY_REQUESTS');
      const retryAfter = res.headers.get('retry-after') ?? '';
      expect(retryAfter).to.match(/^\d+$/);
      expect(Number(retryAfter)).to.be.within(1, 60);
      expect(body.message).to.equal(`Too many requests; retry after ${retryAfter} seconds.`);
      expect(res.headers.get('ratelimit-policy')).to.equal('"default";q=3;w=60');
      expect(res.headers.get('ratelimit')).to.match(/^"default";r=0;t=\d+$/);
      expect(res.headers.get('x-ratelimit-limit')).to.equal('3');
      expect(res.headers.get('x-ratelimit-remaining')).to.equal('0');
      expect(res.headers.get('etag')).to.equal(null);
      // Still refused on every endpoint, before scope or parameter checks.
      await expectEnvelope(await call('/v1/projects?size=0'), 429, 'TOO_MANY_REQUESTS');
      // Another key's budget is its own.
      await expectOk(await t.request('/v1/students', { headers: { 'X-API-KEY': key } }));
    });

    it('Retry-After is at least 1 and the budget comes back after the window', async () => {
      const tiny = await issueKey(t.db, { scopes: ['STUDENT_READ'], rateLimit: { points: 1, durationSeconds: 1 } });
      const call = () => t.request('/v1/students', { headers: { 'X-API-KEY': tiny } });
      const first = await call();
      await expectOk(first);
      expect(first.headers.get('ratelimit')).to.match(/^"default";r=0;t=1$/);
      const refused = await call();
      await expectEnvelope(refused, 429, 'TOO_MANY_REQUESTS');
      expect(refused.headers.get('retry-after')).to.equal('1');
      await new Promise((done) => setTimeout(done, 1100));
      await expectOk(await call());
    });

    it('the default limit is configurable (RATE_LIMIT)', async () => {
      const configured = await buildTestApp('auth_ratelimit_env', { db: t.db, surfaces: ['data'], env: { RATE_LIMIT: '2/30' } });
      try {
        const own = await issueKey(t.db, { scopes: ['PROJECT_READ'] });
        const call = () => configured.request('/v1/projects', { headers: { 'X-API-KEY': own } });
        const first = await call();
        await expectOk(first);
        expect(first.headers.get('ratelimit-policy')).to.equal('"default";q=2;w=30');
        expect(first.headers.get('x-ratelimit-remaining')).to.equal('1');
        await expectOk(await call());
        const refused = await call();
        await expectEnvelope(refused, 429, 'TOO_MANY_REQUESTS');
        expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 30);
      } finally {
        await configured.close();
      }
    });
  });

  describe('conditional requests', () => {
    for (const { path } of ENDPOINTS) {
      it(`${path}: strong ETag, Cache-Control, and 304 for exact / weak / * / list If-None-Match`, async () => {
        const first = await get(path);
        const text = await first.text();
        expect(first.status).to.equal(200);
        const etag = first.headers.get('etag') ?? '';
        expect(etag).to.match(/^"[!#-~]+"$/); // strong: no W/ prefix, quoted
        expect(first.headers.get('cache-control')).to.equal('private, no-cache');

        const again = await get(path);
        expect(again.headers.get('etag')).to.equal(etag);
        expect(await again.text()).to.equal(text);

        for (const inm of [etag, `W/${etag}`, '*', `"nope", ${etag}`, `"a","b",W/${etag}`, ` ${etag} `]) {
          const res = await get(path, { 'If-None-Match': inm });
          expect(res.status, `If-None-Match: ${inm}`).to.equal(304);
          expect(await res.text()).to.equal('');
          expect(res.headers.get('etag')).to.equal(etag);
          expect(res.headers.get('cache-control')).to.equal('private, no-cache');
          // Answered before the rate limit, which it does not spend (the next test).
          expect(res.headers.get('ratelimit-policy')).to.equal(null);
        }
        for (const inm of ['"nope"', etag.slice(1, -1), `W/"x", "y"`, `${etag.slice(0, -2)}"`]) {
          const res = await get(path, { 'If-None-Match': inm });
          expect(res.status, `If-None-Match: ${inm}`).to.equal(200);
          expect(res.headers.get('etag')).to.equal(etag);
          expect(await res.text()).to.equal(text);
        }
      });
    }

    it('a conditional request answered 304 spends nothing of the budget, however often it comes', async () => {
      const small = await issueKey(t.db, { scopes: ['CLUB_READ'], rateLimit: { points: 3, durationSeconds: 60 } });
      const call = (headers: Record<string, string> = {}) => t.request('/v1/clubs', { headers: { 'X-API-KEY': small, ...headers } });
      const first = await call();
      await expectOk(first);
      expect(first.headers.get('x-ratelimit-remaining')).to.equal('2');
      const etag = first.headers.get('etag') ?? '';
      for (let i = 0; i < 10; i++) {
        const res = await call({ 'If-None-Match': etag });
        expect(res.status).to.equal(304);
        expect(res.headers.get('x-ratelimit-remaining')).to.equal(null);
      }
      // The data version moves without changing this answer: the 304 is computed anew, after the
      // rate limit, and the point it took is given back.
      await t.db.versions.bump('data');
      const recomputed = await call({ 'If-None-Match': etag });
      expect(recomputed.status).to.equal(304);
      expect(recomputed.headers.get('etag')).to.equal(etag);
      expect(recomputed.headers.get('x-ratelimit-remaining')).to.equal('2');
      const next = await call();
      await expectOk(next);
      expect(next.headers.get('x-ratelimit-remaining')).to.equal('1');
      // A key without the scope gets its 403 the usual way, spending a point, If-None-Match or not.
      const forbidden = await t.request('/v1/students', { headers: { 'X-API-KEY': small, 'If-None-Match': '*' } });
      await expectEnvelope(forbidden, 403, 'FORBIDDEN');
      expect(forbidden.headers.get('x-ratelimit-remaining')).to.equal('0');
    });

    it('a warm conditional request answered 304 reads nothing from the database', async () => {
      const key = await issueKey(t.db, { scopes: ['CLUB_READ'] });
      const call = (headers: Record<string, string> = {}) => t.request('/v1/clubs', { headers: { 'X-API-KEY': key, ...headers } });
      const first = await call();
      await expectOk(first);
      const etag = first.headers.get('etag') ?? '';
      expect((await call({ 'If-None-Match': etag })).status).to.equal(304);
      // Reads only: the usage counts are written in the background every few seconds.
      const reads: string[] = [];
      const stop = t.db.telemetry.onOperation((sample) => {
        if (/^(find|findOne|countDocuments|aggregate|distinct)$/.test(sample.operation))
          reads.push(`${sample.collection}.${sample.operation}`);
      });
      try {
        for (let i = 0; i < 20; i++) expect((await call({ 'If-None-Match': etag })).status).to.equal(304);
      } finally {
        stop();
      }
      expect(reads).to.deep.equal([]);
    });

    it('different answers have different ETags; an ETag of another query does not match', async () => {
      const all = await get('/v1/students');
      const one = await get('/v1/students?size=1');
      const etagAll = all.headers.get('etag') ?? '';
      const etagOne = one.headers.get('etag') ?? '';
      expect(etagAll).to.not.equal(etagOne);
      expect((await get('/v1/students?size=1', { 'If-None-Match': etagAll })).status).to.equal(200);
      expect((await get('/v1/clubs', { 'If-None-Match': etagAll })).status).to.equal(200);
      // A query that yields the same bytes (an unknown parameter, a different key) has the same ETag.
      const other = await issueKey(t.db, { scopes: ['STUDENT_READ'] });
      const same = await t.request('/v1/students?unknown=1', { headers: { 'X-API-KEY': other } });
      expect(same.headers.get('etag')).to.equal(etagAll);
      const revalidated = await t.request('/v1/students', { headers: { 'X-API-KEY': other, 'If-None-Match': etagAll } });
      expect(revalidated.status).to.equal(304);
    });

    it('a change to the data the answer shows changes the ETag at once; other changes do not', async () => {
      const before = await get('/v1/students');
      const etag = before.headers.get('etag') ?? '';
      const beforeClubs = (await get('/v1/clubs')).headers.get('etag') ?? '';

      await insertSchool(t.db, { students: [buildStudent({ _id: 3, name: 'Park' })] });
      const after = await get('/v1/students', { 'If-None-Match': etag });
      expect(after.status).to.equal(200);
      const newEtag = after.headers.get('etag') ?? '';
      expect(newEtag).to.not.equal(etag);
      expect(((await after.json()) as { data: { totalElements: number } }).data.totalElements).to.equal(3);
      expect((await get('/v1/students', { 'If-None-Match': newEtag })).status).to.equal(304);
      // Student 3 is in no club: the clubs answer has the same bytes, so the same ETag.
      const clubs = await get('/v1/clubs', { 'If-None-Match': beforeClubs });
      expect(clubs.status).to.equal(304);

      // A change seen only through a nested record (a student's name in a club) changes it too.
      await t.db.models.students.updateOne({ _id: 1 }, { name: 'Kim Renamed' });
      await t.db.versions.bump('data');
      const renamed = await get('/v1/clubs', { 'If-None-Match': beforeClubs });
      expect(renamed.status).to.equal(200);
      expect(renamed.headers.get('etag')).to.not.equal(beforeClubs);
      expect(JSON.stringify(await renamed.json())).to.include('Kim Renamed');
    });

    it('an error answer has no ETag and If-None-Match does not turn it into a 304', async () => {
      const res = await get('/v1/students?grade=0', { 'If-None-Match': '*' });
      await expectEnvelope(res, 400, 'BAD_REQUEST', "'grade'");
      expect(res.headers.get('etag')).to.equal(null);
      const unauthorized = await t.request('/v1/students', { headers: { 'If-None-Match': '*' } });
      await expectEnvelope(unauthorized, 401, 'UNAUTHORIZED');
    });
  });

  describe('404, 405 and health', () => {
    it('an unknown path -> 404 envelope', async () => {
      for (const path of ['/v1/nothing', '/v1/students/1', '/v2/students', '/students']) {
        await expectEnvelope(await get(path), 404, 'NOT_FOUND', /^No such endpoint\.$/);
      }
    });

    it('another method on a data endpoint -> 405 envelope with Allow', async () => {
      for (const { path } of ENDPOINTS) {
        for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
          const res = await t.request(path, { method, headers: { 'X-API-KEY': key } });
          await expectEnvelope(res, 405, 'METHOD_NOT_ALLOWED', /^Method not allowed; use HEAD, GET\.$/);
          expect(res.headers.get('allow'), `${method} ${path}`).to.equal('HEAD, GET');
        }
      }
      const graphql = await t.request('/graphql', { method: 'PUT', headers: { 'X-API-KEY': key } });
      await expectEnvelope(graphql, 405, 'METHOD_NOT_ALLOWED');
      expect(graphql.headers.get('allow')).to.equal('HEAD, GET, POST');
      const options = await t.request('/v1/students', { method: 'OPTIONS' });
      expect(options.status).to.equal(204);
      expect(options.headers.get('allow')).to.equal('HEAD, GET');
    });

    it('GET /v1/health needs no key', async () => {
      const data = await expectOk<{ database: { status: string } }>(await t.request('/v1/health'));
      expect(data.database.status).to.equal('UP');
    });
  });
});
