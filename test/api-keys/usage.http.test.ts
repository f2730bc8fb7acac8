import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { buildStudent, insertSchool, TEST_POLICY } from '../helpers/factories.js';
import { todayIn } from '../../src/calendar.js';
import { ApiKeyCommandError, ApiKeyService, MAX_ROTATION_GRACE_SECONDS } from '../../src/data/keys/store.js';
import type { Database } from '../../src/data/database.js';

/**
 * The per-key, per-day usage counters of the developer console (src/http/usage.ts) and the
 * rotation grace period of API keys (src/data/keys/store.ts).
 */
describe('API keys: usage counters and rotation grace', function () {
  this.timeout(60000);
  let db: Database & { drop(): Promise<void> };
  /** Commands the data API sent to the database, by collection. */
  const commands: { name: string; collection: string }[] = [];

  before(async () => {
    db = await createTestDatabase('key_usage', { monitorCommands: true });
    db.client.on('commandStarted', (event) => {
      const collection: unknown = (event.command as Record<string, unknown>)[event.commandName];
      commands.push({ name: event.commandName, collection: typeof collection === 'string' ? collection : '' });
    });
    await insertSchool(db, { students: [buildStudent({ _id: 1, email: 'a@school.test' })] });
  });
  after(() => db?.drop());

  describe('usage counters', () => {
    it('count requests, 4xx and 429 per key and school day in memory; the flush writes them, never a request', async () => {
      const service = new ApiKeyService(db, TEST_POLICY);
      // Three points: the 200, the 400 and the 403 spend one each, the 304 none (it is counted all the same).
      const { key, summary } = await service.issue({ scopes: ['STUDENT_READ'], rateLimit: { points: 3, durationSeconds: 60 } });
      const t = await buildTestApp('key_usage_a', { db });
      try {
        const headers = { 'X-API-KEY': key };
        const first = await t.request('/v1/students', { headers });
        await expectOk(first);
        const etag = first.headers.get('etag') ?? '';
        const written = () =>
          commands.filter((c) => c.collection === 'api_key_usage' || (c.name === 'update' && c.collection === 'api_keys')).length;
        const before = written();
        expect((await t.request('/v1/students', { headers: { ...headers, 'If-None-Match': etag } })).status).to.equal(304);
        await expectEnvelope(await t.request('/v1/students?grade=9', { headers }), 400, 'BAD_REQUEST');
        await expectEnvelope(await t.request('/v1/clubs', { headers }), 403, 'FORBIDDEN');
        await expectEnvelope(await t.request('/v1/students', { headers }), 429, 'TOO_MANY_REQUESTS');
        // Not one of these answers waited for a write of the counters.
        expect(written()).to.equal(before);
        // Unknown keys count for no one.
        await expectEnvelope(
          await t.request('/v1/students', { headers: { 'X-API-KEY': '00000000-0000-4000-8000-000000000000' } }),
          401,
          'UNAUTHORIZED',
        );
      } finally {
        await t.close(); // stopping the data surface flushes what it counted
      }
      const day = todayIn('Asia/Seoul', new Date());
      const usage = await db.models.apiKeyUsage.findOne({ _id: `${summary.id}:${day}` }).lean();
      expect(usage).to.deep.include({ keyId: summary.id, day, requests: 5, clientErrors: 3, throttled: 1 });
      expect(await service.usage(summary.id, day, day)).to.deep.equal([{ day, requests: 5, clientErrors: 3, throttled: 1 }]);
      const stored = await service.get(summary.id);
      expect(stored?.lastUsedAt).to.be.an.instanceOf(Date);
      expect(Date.now() - (stored?.lastUsedAt?.getTime() ?? 0)).to.be.lessThan(30_000);

      // Another process (or a later flush) adds to the same day's document ($inc upserts).
      const other = await buildTestApp('key_usage_b', { db });
      try {
        await expectOk(await other.request('/v1/students', { headers: { 'X-API-KEY': key } }));
        await expectOk(await other.request('/v1/students?size=1', { headers: { 'X-API-KEY': key } }));
      } finally {
        await other.close();
      }
      const after = await db.models.apiKeyUsage.findOne({ _id: `${summary.id}:${day}` }).lean();
      expect(after).to.deep.include({ requests: 7, clientErrors: 3, throttled: 1 });
    });
  });

  describe('rotation grace period', () => {
    let t: TestApp;
    let offsetMs = 0;
    const now = () => new Date(Date.now() + offsetMs);
    before(async () => {
      t = await buildTestApp('key_grace', { db, now });
    });
    after(() => t?.close());
    beforeEach(() => {
      offsetMs = 0;
    });

    it('the old value keeps working until the chosen time, then reads as an unknown key; the new one works throughout', async () => {
      const service = new ApiKeyService(db, TEST_POLICY);
      const old = await service.issue({ scopes: ['STUDENT_READ'], now: now() });
      const rotated = await service.rotate(old.summary.id, now(), { graceSeconds: 3600 });
      expect(rotated.summary.id).to.equal(old.summary.id);
      expect(rotated.summary.prefix).to.equal(rotated.key.slice(0, 8));
      expect(rotated.summary.previous?.prefix).to.equal(old.key.slice(0, 8));
      expect(rotated.summary.previous?.expiresAt.getTime()).to.be.closeTo(now().getTime() + 3600_000, 1000);
      await expectOk(await t.request('/v1/students', { headers: { 'X-API-KEY': old.key } }));
      await expectOk(await t.request('/v1/students', { headers: { 'X-API-KEY': rotated.key } }));
      offsetMs = 3600_000 + 1000;
      const refused = await expectEnvelope(await t.request('/v1/students', { headers: { 'X-API-KEY': old.key } }), 401, 'UNAUTHORIZED');
      expect(refused.message).to.equal('Invalid API key: it is not recognised.');
      await expectOk(await t.request('/v1/students', { headers: { 'X-API-KEY': rotated.key } }));
    });

    it('the grace period is at most 24 hours, never outlives the old expiry, and ends with a revocation or a later rotation', async () => {
      const service = new ApiKeyService(db, TEST_POLICY);
      const key = await service.issue({ scopes: ['STUDENT_READ'], now: now() });
      for (const graceSeconds of [MAX_ROTATION_GRACE_SECONDS + 1, -1, 1.5]) {
        try {
          await service.rotate(key.summary.id, now(), { graceSeconds });
          expect.fail(`grace ${graceSeconds} was accepted`);
        } catch (err) {
          expect(err).to.be.an.instanceOf(ApiKeyCommandError);
          expect((err as Error).message).to.include('24 hours');
        }
      }
      const longest = await service.rotate(key.summary.id, now(), { graceSeconds: MAX_ROTATION_GRACE_SECONDS });
      expect(longest.summary.previous?.expiresAt.getTime()).to.be.closeTo(now().getTime() + 86_400_000, 1000);
      // A second rotation ends the first replaced value at once; the one it replaces gets the grace.
      const again = await service.rotate(key.summary.id, now(), { graceSeconds: 60 });
      await expectEnvelope(await t.request('/v1/students', { headers: { 'X-API-KEY': key.key } }), 401, 'UNAUTHORIZED', 'Invalid API key');
      await expectOk(await t.request('/v1/students', { headers: { 'X-API-KEY': longest.key } }));
      await service.revoke(key.summary.id, now());
      for (const value of [longest.key, again.key])
        await expectEnvelope(await t.request('/v1/students', { headers: { 'X-API-KEY': value } }), 401, 'UNAUTHORIZED', 'Invalid API key');

      // A key about to expire: its old value does not outlive the expiry.
      const expiring = await service.issue({ scopes: ['STUDENT_READ'], days: 1, now: new Date(now().getTime() - 23.5 * 3600_000) });
      const swapped = await service.rotate(expiring.summary.id, now(), { graceSeconds: MAX_ROTATION_GRACE_SECONDS });
      expect(swapped.summary.previous?.expiresAt.getTime()).to.be.closeTo(now().getTime() + 1800_000, 1000);
    });
  });
});
