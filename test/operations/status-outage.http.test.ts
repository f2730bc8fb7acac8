import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, type Database } from '../../src/data/database.js';
import { StatusBoard, type StatusReport } from '../../src/data/operations/status.js';
import { acquireEmbeddedDatabase, freePort, type EmbeddedDatabase } from '../../src/data/platform/embedded/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/receiver.js';

/**
 * The status page and GET /v1/status while the database is killed and comes back: the minute's
 * checks (StatusBoard.record, what `campus serve` runs every minute) show it down at the next
 * minute and up again after, and the minutes observed while it was away are recorded once it is
 * back, so the day's availability counts the outage. The test moves the clock a minute at a time;
 * the database is an embedded one of its own, so stopping it leaves the suite's alone.
 */
describe('operations: the status page and /v1/status show a killed database down within a minute, and recovered after', function () {
  this.timeout(120000);
  const dataDir = join('.data', `status-outage-${process.pid}`);
  let port: number;
  let embedded: EmbeddedDatabase;
  let db: Database;
  let t: TestApp;
  let board: StatusBoard;
  let clock = new Date('2026-12-01T09:00:30+09:00');
  const minuteLater = () => (clock = new Date(clock.getTime() + 60_000));

  const start = () => acquireEmbeddedDatabase({ dataDir, preferredPort: port });
  const report = async (headers: Record<string, string> = {}): Promise<{ res: Response; data: StatusReport }> => {
    const res = await t.request('/v1/status', { headers });
    expect(res.status).to.equal(200);
    return { res, data: ((await res.json()) as { data: StatusReport }).data };
  };
  const stateOf = (data: StatusReport, part: string) => data.parts.find((p) => p.part === part)?.state;
  /** The state words of each part's card on /status, in its order. */
  const pageStates = async (): Promise<Record<string, string>> => {
    const html = await (await t.request('/status?lang=en')).text();
    return Object.fromEntries(
      [...html.matchAll(/<li class="card part" id="part-([a-z-]+)">\s*<h3>[^<]*<span class="state [a-z]+">([^<]+)<\/span>/g)].map((m) => [
        m[1],
        m[2],
      ]),
    );
  };

  before(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    port = await freePort();
    embedded = await start();
    db = await openDatabase(embedded.uri, { serverSelectionTimeoutMS: 1000 });
    await db.ensureIndexes();
    const config = { schoolTimeZone: 'Asia/Seoul', neis: { syncEnabled: false, apiKey: undefined } };
    board = new StatusBoard({ db, config, now: () => clock });
    t = await buildTestApp('status_outage', { db, now: () => clock, status: board });
  });
  after(async () => {
    await t.close();
    await db.close();
    await embedded.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('up, then down at the next minute while the database is away, then up again with the outage in the history', async () => {
    await board.record();
    const up = await report();
    expect(up.data.state).to.equal('UP');
    expect(up.data.parts.map((p) => [p.part, p.state])).to.deep.equal([
      ['data-api', 'UP'],
      ['sign-in', 'UP'],
      ['userinfo', 'UP'],
      ['database', 'UP'],
      ['neis', 'OFF'],
      ['webhooks', 'UP'],
    ]);
    expect(up.data.checkedAt).to.equal('2026-12-01T00:00:30.000Z');
    expect(up.res.headers.get('cache-control')).to.equal('private, no-cache');
    const etag = up.res.headers.get('etag') ?? '';
    expect(etag).to.match(/^"[\w-]{32}-gz"$/); // fetch asks for gzip: the coded form's ETag
    // An unchanged report is a 304 to whoever holds it.
    const held = await t.request('/v1/status', { headers: { 'If-None-Match': etag } });
    expect(held.status).to.equal(304);
    expect(await held.text()).to.equal('');
    expect(await pageStates()).to.deep.equal({
      'data-api': 'Working',
      'sign-in': 'Working',
      userinfo: 'Working',
      database: 'Working',
      neis: 'Off',
      webhooks: 'Working',
    });

    await embedded.stop();
    minuteLater();
    await board.record();
    const down = await report({ 'If-None-Match': etag });
    expect(down.res.headers.get('etag')).to.not.equal(etag);
    expect(down.data.state).to.equal('DOWN');
    expect(down.data.checkedAt).to.equal('2026-12-01T00:01:30.000Z');
    for (const part of ['data-api', 'sign-in', 'userinfo', 'database', 'webhooks']) expect(stateOf(down.data, part), part).to.equal('DOWN');
    expect(down.data.parts.find((p) => p.part === 'database')?.detail['reason']).to.be.oneOf(['UNREACHABLE', 'TIMEOUT']);
    // What was read before the outage is still shown, and says when it was read.
    expect(down.data.historyAsOf).to.equal('2026-12-01T00:00:30.000Z');
    expect(board.unrecorded).to.equal(1);
    const page = await (await t.request('/status?lang=en')).text();
    expect(page).to.include('Some parts are not working');
    expect(page).to.include('The database cannot be reached: the history shown was read at');
    expect(await pageStates()).to.deep.include({ database: 'Down', 'data-api': 'Down' });
    // The Korean page says the same.
    expect(await (await t.request('/status?lang=ko')).text()).to.include('일부가 작동하지 않습니다');

    embedded = await start();
    await eventually(
      () =>
        db.ping().then(
          () => true,
          () => false,
        ),
      20000,
      'the database back',
    );
    minuteLater();
    await board.record();
    expect(board.unrecorded).to.equal(0);
    const again = await report();
    expect(again.data.state).to.equal('UP');
    expect(stateOf(again.data, 'database')).to.equal('UP');
    // Three minutes recorded: up, down (kept while the database was away), up.
    const database = again.data.parts.find((p) => p.part === 'database');
    expect(database?.availability).to.deep.equal({
      days90: 2 / 3,
      days: [{ date: '2026-12-01', availability: 2 / 3, up: 2, degraded: 0, down: 1 }],
    });
    expect(await pageStates()).to.deep.include({ database: 'Working' });
    const shown = await (await t.request('/status?lang=en')).text();
    expect(shown).to.include('66.67% available over the last 90 days');
    expect(shown).to.include('<th scope="row" data-label="Date" >2026-12-01</th>');
  });
});
