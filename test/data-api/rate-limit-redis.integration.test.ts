import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { buildTestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { expectEnvelope } from '../helpers/expect.js';
import { buildStudent, insertSchool, issueKey } from '../helpers/factories.js';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { openRedis } from '../../src/main.js';
import { createLogger } from '../../src/logger.js';
import type { Database } from '../../src/data/database.js';

/** A redis-server of the test's own, so the test can stop it without touching the machine's. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  for (let i = 0; i < 50; i++) {
    const probe = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    const ok = await probe
      .connect()
      .then(() => probe.ping())
      .then(
        () => true,
        () => false,
      );
    probe.disconnect();
    if (ok) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('redis-server did not start');
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

describe('data API: rate limits shared through Redis', function () {
  this.timeout(30000);
  let db: Database & { drop(): Promise<void> };
  let redisProcess: ChildProcess;
  let redisUrl: string;
  const logger = createLogger('silent');

  before(async function () {
    if (spawnSync('sh', ['-c', 'command -v redis-server']).status !== 0) {
      throw new Error('redis-server is not installed: .ci/run and the README require Redis for these tests');
    }
    const port = await freePort();
    redisUrl = `redis://127.0.0.1:${port}`;
    redisProcess = await startRedis(port);
    db = await createTestDatabase('ratelimit');
    await insertSchool(db, { students: [buildStudent({ _id: 1 })] });
  });
  after(async () => {
    await stopProcess(redisProcess);
    await db.drop();
  });

  it('two instances sharing one Redis share one budget', async () => {
    const redisA = openRedis(redisUrl, logger);
    const redisB = openRedis(redisUrl, logger);
    const a = await buildTestApp('rl-a', { db, redis: redisA });
    const b = await buildTestApp('rl-b', { db, redis: redisB });
    try {
      const key = await issueKey(db, { rateLimit: { points: 4, durationSeconds: 60 } });
      const headers = { 'X-API-KEY': key };
      const remaining: (string | null)[] = [];
      for (const app of [a, b, a, b]) {
        const res = await app.request('/v1/students', { headers });
        expect(res.status).to.equal(200);
        remaining.push(res.headers.get('X-RateLimit-Remaining'));
      }
      expect(remaining).to.deep.equal(['3', '2', '1', '0']);
      const refused = await a.request('/v1/students', { headers });
      await expectEnvelope(refused, 429, 'TOO_MANY_REQUESTS', 'Too many requests');
      expect(Number(refused.headers.get('Retry-After'))).to.be.within(1, 60);
      const refusedToo = await b.request('/v1/students', { headers });
      expect(refusedToo.status).to.equal(429);
    } finally {
      await a.close();
      await b.close();
      redisA.disconnect();
      redisB.disconnect();
    }
  });

  it('requests still succeed when Redis is unreachable from the start', async () => {
    const redis = openRedis('redis://127.0.0.1:1', logger);
    const app = await buildTestApp('rl-down', { db, redis });
    try {
      const key = await issueKey(db, { rateLimit: { points: 3, durationSeconds: 60 } });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await app.request('/v1/students', { headers: { 'X-API-KEY': key } })).status);
      // The in-memory insurance limiter still enforces the key's budget on this instance.
      expect(statuses).to.deep.equal([200, 200, 200, 429]);
    } finally {
      await app.close();
      redis.disconnect();
    }
  });

  it('requests still succeed when Redis stops in the middle', async () => {
    const port = await freePort();
    const ownRedis = await startRedis(port);
    const redis = openRedis(`redis://127.0.0.1:${port}`, logger);
    const app = await buildTestApp('rl-stop', { db, redis });
    try {
      const key = await issueKey(db);
      const headers = { 'X-API-KEY': key };
      expect((await app.request('/v1/students', { headers })).status).to.equal(200);
      await stopProcess(ownRedis);
      const during: number[] = [];
      for (let i = 0; i < 5; i++) during.push((await app.request('/v1/students', { headers })).status);
      expect(during).to.deep.equal([200, 200, 200, 200, 200]);
    } finally {
      await app.close();
      redis.disconnect();
      await stopProcess(ownRedis);
    }
  });
});
