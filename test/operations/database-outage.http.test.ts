import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { buildStudent, insertSchool, issueKey } from '../helpers/factories.js';
import { openDatabase, type Database } from '../../src/data/database.js';
import { acquireEmbeddedDatabase, freePort, type EmbeddedDatabase } from '../../src/data/platform/embedded/index.js';

/**
 * The database stops while the service runs: data endpoints answer 503 with the envelope and
 * /v1/health reports it; when the database returns, they recover without a restart.
 * Uses an embedded database of its own, so stopping it leaves the suite's database alone.
 */
describe('operations: database outage and recovery', function () {
  this.timeout(60000);
  const dataDir = join('.data', `outage-${process.pid}`);
  let port: number;
  let embedded: EmbeddedDatabase;
  let db: Database;
  let t: TestApp;
  let key: string;

  const start = () => acquireEmbeddedDatabase({ dataDir, preferredPort: port });

  before(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    port = await freePort();
    embedded = await start();
    db = await openDatabase(embedded.uri, { serverSelectionTimeoutMS: 1000 });
    await db.ensureIndexes();
    await insertSchool(db, { students: [buildStudent({ _id: 1, name: 'Kim' })] });
    key = await issueKey(db);
    t = await buildTestApp('outage', { db });
  });
  after(async () => {
    await t.close();
    await db.close();
    await embedded.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 while the database is down, then recovers on its own', async () => {
    const headers = { 'X-API-KEY': key };
    await expectOk(await t.request('/v1/students', { headers }));
    await embedded.stop();

    // Cached versions and keys live at most a second; after that every data request needs the database.
    await new Promise((r) => setTimeout(r, 1100));
    const down = await t.request('/v1/students?name=K', { headers });
    await expectEnvelope(down, 503, 'SERVICE_UNAVAILABLE', 'database');
    expect(down.headers.get('Retry-After')).to.equal('5');

    const health = await t.request('/v1/health');
    expect(health.status).to.equal(503);
    const report = (await health.json()) as { status: string; data: { database: { status: string } } };
    expect(report.status).to.equal('SERVICE_UNAVAILABLE');
    expect(report.data.database.status).to.equal('DOWN');

    embedded = await start();
    expect(new URL(embedded.uri).port).to.equal(String(port));
    let recovered = 0;
    for (let i = 0; i < 40 && recovered !== 200; i++) {
      await new Promise((r) => setTimeout(r, 250));
      recovered = (await t.request('/v1/health')).status;
    }
    expect(recovered).to.equal(200);
    const data = await expectOk<{ totalElements: number }>(await t.request('/v1/students?name=K', { headers }));
    expect(data.totalElements).to.equal(1);
  });
});
