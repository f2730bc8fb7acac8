import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { buildTestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { listenEverywhere, outsideAddress, productionSetUp } from '../helpers/production.js';
import { closeServer } from '../../src/app.js';
import { openDatabase } from '../../src/data/database.js';
import { acquireEmbeddedDatabase, freePort } from '../../src/data/platform/embedded/index.js';
import { isLoopback, STRICT_TRANSPORT_SECURITY } from '../../src/http/tls.js';
import type { SurfaceName } from '../../src/surfaces/types.js';

describe('operations: probes, GET /livez and GET /readyz (src/http/probes.ts)', function () {
  this.timeout(60000);
  const production = productionSetUp('probes');

  it('production, plain HTTP from loopback: both probes answer, without a key, no-store, saying nothing about the data', async () => {
    // TRUSTED_PROXIES names another address: loopback alone lets the probes through.
    const t = await buildTestApp('probes', { db: production.db, env: production.env({ TRUSTED_PROXIES: '10.9.9.9' }) });
    try {
      const live = await t.request('/livez');
      expect(await expectOk(live)).to.deep.equal({ process: 'UP' });
      expect(live.headers.get('cache-control')).to.equal('no-store');
      expect(live.headers.get('strict-transport-security')).to.equal(STRICT_TRANSPORT_SECURITY);

      const ready = await t.request('/readyz');
      expect(await expectOk(ready)).to.deep.equal({ database: 'UP' });
      expect(ready.headers.get('cache-control')).to.equal('no-store');

      const head = await t.request('/readyz', { method: 'HEAD' });
      expect([head.status, await head.text(), head.headers.get('cache-control')]).to.deep.equal([200, '', 'no-store']);
      const post = await t.request('/livez', { method: 'POST' });
      await expectEnvelope(post, 405, 'METHOD_NOT_ALLOWED', 'Method not allowed; use GET, HEAD.');
      expect(post.headers.get('allow')).to.equal('GET, HEAD');

      // Exactly these paths: everything else keeps the TLS rule, /v1/health included.
      for (const path of ['/v1/health', '/livez/', '/readyz/x', '/v1/livez', '/.well-known/openid-configuration'])
        await expectEnvelope(await t.request(path), 403, 'FORBIDDEN', 'HTTPS is required');
    } finally {
      await t.close();
    }
  });

  it('every surface answers them, whichever it serves alone', async () => {
    const env = production.env();
    for (const surface of ['data', 'auth', 'userinfo'] as SurfaceName[]) {
      const t = await buildTestApp(`probes_${surface}`, { db: production.db, env, surfaces: [surface] });
      try {
        expect(await expectOk(await t.request('/livez')), surface).to.deep.equal({ process: 'UP' });
        expect(await expectOk(await t.request('/readyz')), surface).to.deep.equal({ database: 'UP' });
      } finally {
        await t.close();
      }
    }
  });

  it('from another address: refused over plain HTTP unless it is a trusted proxy; then the probes only', async function () {
    const address = outsideAddress();
    // A machine with loopback only cannot make a connection from anywhere else.
    if (!address) this.skip();
    const env = production.env();
    for (const trusted of ['', address]) {
      const t = await buildTestApp('probes_remote', { db: production.db, env: { ...env, TRUSTED_PROXIES: trusted } });
      const server = createServer(t.app.callback());
      const port = await listenEverywhere(server);
      try {
        const at = (path: string) => fetch(`http://${address}:${port}${path}`);
        if (trusted) {
          expect(await expectOk(await at('/livez'))).to.deep.equal({ process: 'UP' });
          expect(await expectOk(await at('/readyz'))).to.deep.equal({ database: 'UP' });
        } else {
          await expectEnvelope(await at('/livez'), 403, 'FORBIDDEN', 'HTTPS is required');
          await expectEnvelope(await at('/readyz'), 403, 'FORBIDDEN', 'HTTPS is required');
        }
        await expectEnvelope(await at('/v1/health'), 403, 'FORBIDDEN', 'HTTPS is required');
      } finally {
        await closeServer(server, 100);
        await t.close();
      }
    }
  });

  it('/readyz checks Redis when one is configured: 503 while it is unreachable', async () => {
    const reachable = new Redis('redis://127.0.0.1:6379', { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    const unreachable = new Redis(`redis://127.0.0.1:${await freePort()}`, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: () => 1000,
    });
    unreachable.on('error', () => {});
    await new Promise((done) => reachable.once('ready', done));
    try {
      const up = await buildTestApp('probes_redis_up', { db: production.db, redis: reachable });
      try {
        expect(await expectOk(await up.request('/readyz'))).to.deep.equal({ database: 'UP', redis: 'UP' });
      } finally {
        await up.close();
      }
      const down = await buildTestApp('probes_redis_down', { db: production.db, redis: unreachable });
      try {
        const res = await down.request('/readyz');
        await expectEnvelope(res, 503, 'SERVICE_UNAVAILABLE', /^Not ready: Redis is unreachable\.$/);
        expect([res.headers.get('cache-control'), res.headers.get('retry-after')]).to.deep.equal(['no-store', '5']);
        // The process itself is fine: liveness does not depend on Redis or the database.
        expect(await expectOk(await down.request('/livez'))).to.deep.equal({ process: 'UP' });
      } finally {
        await down.close();
      }
    } finally {
      reachable.disconnect();
      unreachable.disconnect();
    }
  });

  it('/readyz answers 503 while the database is down and 200 once it is back; /livez stays 200', async () => {
    const dataDir = join('.data', `probes-${process.pid}`);
    rmSync(dataDir, { recursive: true, force: true });
    const port = await freePort();
    let embedded = await acquireEmbeddedDatabase({ dataDir, preferredPort: port });
    const own = await openDatabase(embedded.uri, { serverSelectionTimeoutMS: 1000 });
    const t = await buildTestApp('probes_outage', { db: own });
    try {
      expect(await expectOk(await t.request('/readyz'))).to.deep.equal({ database: 'UP' });
      await embedded.stop();
      await expectEnvelope(await t.request('/readyz'), 503, 'SERVICE_UNAVAILABLE', /^Not ready: the database is unreachable\.$/);
      expect(await expectOk(await t.request('/livez'))).to.deep.equal({ process: 'UP' });
      embedded = await acquireEmbeddedDatabase({ dataDir, preferredPort: port });
      let status = 0;
      for (let i = 0; i < 40 && status !== 200; i++) {
        status = (await t.request('/readyz')).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      expect(status).to.equal(200);
    } finally {
      await t.close();
      await own.close();
      await embedded.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('loopback is 127.0.0.0/8 and ::1, also IPv4-mapped; nothing else', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopback(address), address).to.equal(true);
    for (const address of ['10.0.0.1', '::ffff:10.0.0.1', '128.0.0.1', '::', '0.0.0.0', '', 'localhost', '::2'])
      expect(isLoopback(address), address).to.equal(false);
  });
});
