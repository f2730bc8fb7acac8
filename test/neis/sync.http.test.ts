import { Writable } from 'node:stream';
import { expect } from 'chai';
import type { Database } from '../../src/data/database.js';
import type { SyncReport } from '../../src/data/models/neis-state.model.js';
import { NeisStore } from '../../src/data/neis/store.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { NeisClient, type NeisClientOptions } from '../../src/neis/client.js';
import { startFakeNeis, type FakeNeis } from '../../src/neis/fake-server.js';
import { fakeMealRows, fakeSchool } from '../../src/neis/fake-fixtures.js';
import { NeisSync, type SyncRequest, type SyncResult } from '../../src/neis/sync.js';
import { buildTestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { expectOk } from '../helpers/expect.js';
import { issueKey } from '../helpers/factories.js';

const KEY = 'neis-test-key';
const ANCHOR = '2026-03-16';
const MARCH = { from: '2026-03-02', to: '2026-03-15' };

/** A logger whose lines the test can read. */
function captureLogger(): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger('info', sink), lines: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

function asReport(result: SyncResult): SyncReport {
  if (result.outcome === 'busy') throw new Error('expected the sync to run, it was busy');
  return result;
}

/**
 * The real client and sync over real HTTP against the fake NEIS server, writing to the real
 * database. Backoff delays are zero and timeouts short so failures cost milliseconds.
 */
describe('NEIS: sync against the fake NEIS server', () => {
  let fake: FakeNeis;
  let db: Database & { drop(): Promise<void> };
  let store: NeisStore;
  let log: ReturnType<typeof captureLogger>;

  const makeSync = (client: Partial<NeisClientOptions> = {}, gcGraceMs = 0) =>
    new NeisSync({
      store,
      client: new NeisClient({
        baseUrl: fake.url,
        apiKey: KEY,
        officeCode: 'F10',
        schoolCode: '7380292',
        timeoutMs: 2000,
        backoffMs: () => 0,
        ...client,
      }),
      officeCode: 'F10',
      schoolCode: '7380292',
      logger: log.logger,
      gcGraceMs,
    });
  const run = async (request: Partial<SyncRequest> = {}, client: Partial<NeisClientOptions> = {}) =>
    asReport(await makeSync(client).run({ ...MARCH, trigger: 'cli', ...request }));
  const requestsOf = (service: string) => fake.requests.filter((r) => r.service === service);

  before(async () => {
    fake = await startFakeNeis({ anchor: ANCHOR, apiKey: KEY });
    db = await createTestDatabase('neis-sync');
    store = new NeisStore(db);
  });
  after(async () => {
    await fake.close();
    await db.drop();
  });
  beforeEach(() => {
    fake.reset();
    log = captureLogger();
  });

  it('syncs all three datasets and serves them in order', async () => {
    const report = await run();
    expect(report.outcome).to.equal('ok');
    expect(report.error).to.equal(null);
    // 14 days x 3 meals; 14 days have calendar entries (2026-03-02 has three events).
    expect(report.datasets.meals).to.deep.equal({ outcome: 'ok', rows: 42, skippedRows: 0, error: null });
    const meals = await store.meals(MARCH.from, MARCH.to);
    expect(meals.map((m) => `${m.mealDate}/${m.mealType}`).slice(0, 4)).to.deep.equal([
      '2026-03-02/BREAKFAST',
      '2026-03-02/LUNCH',
      '2026-03-02/DINNER',
      '2026-03-03/BREAKFAST',
    ]);
    const opening = await store.schedules('2026-03-02', '2026-03-02');
    expect(opening.map((s) => s.eventName)).to.deep.equal(['입학식', '시업식', '기숙사 입사']);
    expect(new Set(opening.map((s) => s.scheduleId)).size).to.equal(3);
    const monday = await store.timetables('2026-03-02', '2026-03-02', 1, 1);
    expect(monday.map((t) => t.period)).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
  });

  it('reads several pages until list_total_count rows are read', async () => {
    // Meals with pages of 10: 42 rows are 5 pages.
    const small = await run({ datasets: ['meals'] }, { pageSize: 10 });
    expect(small.datasets.meals?.rows).to.equal(42);
    expect(requestsOf('mealServiceDietInfo').map((r) => [r.params['pIndex'], r.params['pSize']])).to.deep.equal([
      ['1', '10'],
      ['2', '10'],
      ['3', '10'],
      ['4', '10'],
      ['5', '10'],
    ]);
    // Timetables with NEIS's maximum page of 1000: four weeks of 12 classes are 1632 rows, 2 pages.
    fake.reset();
    const full = await run({ datasets: ['timetables'], from: '2026-03-02', to: '2026-03-27' });
    expect(full.datasets.timetables?.rows).to.equal(1632);
    expect(requestsOf('hisTimetable').map((r) => [r.params['pIndex'], r.params['pSize']])).to.deep.equal([
      ['1', '1000'],
      ['2', '1000'],
    ]);
    expect(requestsOf('hisTimetable')[0]?.params).to.include({
      KEY,
      Type: 'json',
      ATPT_OFCDC_SC_CODE: 'F10',
      SD_SCHUL_CODE: '7380292',
      TI_FROM_YMD: '20260302',
      TI_TO_YMD: '20260327',
    });
  });

  it('takes INFO-200 as "no data": the window is served empty, the sync succeeds', async () => {
    fake.script('mealServiceDietInfo', { kind: 'result', code: 'INFO-200' });
    const report = await run({ datasets: ['meals'], from: '2026-05-04', to: '2026-05-08' });
    expect(report.outcome).to.equal('ok');
    expect(report.datasets.meals?.rows).to.equal(0);
    expect(await store.meals('2026-05-04', '2026-05-08')).to.deep.equal([]);
    expect(requestsOf('mealServiceDietInfo')).to.have.length(1);
  });

  it('does not retry a bad key (ERROR-290): that dataset fails, its old data stays, the others update', async () => {
    const datasets = ['meals', 'schedules'] as const;
    await run({ datasets });
    const before = await store.meals(MARCH.from, MARCH.to);
    fake.reset();
    fake.script('mealServiceDietInfo', { kind: 'result', code: 'ERROR-290' });
    const report = await run({ datasets });
    expect(report.outcome).to.equal('partial');
    expect(report.datasets.meals).to.deep.equal({
      outcome: 'failed',
      rows: 0,
      skippedRows: 0,
      error:
        'NEIS mealServiceDietInfo answered ERROR-290: 인증키가 유효하지 않습니다. 인증키가 없는 경우, 홈페이지에서 인증키를 신청하십시오.',
    });
    expect(report.datasets.schedules?.outcome).to.equal('ok');
    expect(requestsOf('mealServiceDietInfo')).to.have.length(1);
    expect(await store.meals(MARCH.from, MARCH.to)).to.deep.equal(before);
    expect((await store.state())?.lastSync?.outcome).to.equal('partial');
  });

  it('retries transient failures (ERROR-500, HTTP 503) with backoff and then succeeds', async () => {
    fake.script('mealServiceDietInfo', { kind: 'result', code: 'ERROR-500' }, { kind: 'http', status: 503 });
    const delays: number[] = [];
    const report = await run({ datasets: ['meals'] }, { backoffMs: (attempt) => (delays.push(attempt), 0) });
    expect(report.outcome).to.equal('ok');
    expect(requestsOf('mealServiceDietInfo')).to.have.length(3);
    expect(delays).to.deep.equal([1, 2]);
  });

  it('gives up after the retries on a persistent ERROR-600, keeping the old data', async () => {
    await run({ datasets: ['meals'] });
    const before = await store.meals(MARCH.from, MARCH.to);
    fake.reset();
    fake.setDefault('mealServiceDietInfo', { kind: 'result', code: 'ERROR-600' });
    const report = await run({ datasets: ['meals'] }, { retries: 2 });
    expect(report.outcome).to.equal('failed');
    expect(report.error).to.match(/^meals: NEIS mealServiceDietInfo answered ERROR-600/);
    expect(requestsOf('mealServiceDietInfo')).to.have.length(3);
    expect(await store.meals(MARCH.from, MARCH.to)).to.deep.equal(before);
  });

  it('times out a silent NEIS, keeps the old data and reports the failure', async () => {
    await run({ datasets: ['schedules'] });
    const before = await store.schedules(MARCH.from, MARCH.to);
    fake.reset();
    fake.setDefault('SchoolSchedule', { kind: 'delay', ms: 3000 });
    const started = Date.now();
    const report = await run({ datasets: ['schedules'] }, { timeoutMs: 150, retries: 1 });
    expect(Date.now() - started).to.be.below(2000);
    expect(report.outcome).to.equal('failed');
    expect(report.datasets.schedules?.error).to.equal('NEIS SchoolSchedule did not answer within 150 ms');
    expect(requestsOf('SchoolSchedule')).to.have.length(2);
    expect(await store.schedules(MARCH.from, MARCH.to)).to.deep.equal(before);
    const state = await store.state();
    expect(state?.lastSync).to.include({ outcome: 'failed', error: 'schedules: NEIS SchoolSchedule did not answer within 150 ms' });
  });

  it('refuses a malformed body without retrying, keeping the old data', async () => {
    await run({ datasets: ['meals'] });
    const before = await store.meals(MARCH.from, MARCH.to);
    fake.reset();
    fake.script('mealServiceDietInfo', { kind: 'malformed' });
    const report = await run({ datasets: ['meals'] });
    expect(report.outcome).to.equal('failed');
    expect(report.datasets.meals?.error).to.equal('NEIS mealServiceDietInfo sent a malformed answer: the body is not JSON');
    expect(requestsOf('mealServiceDietInfo')).to.have.length(1);
    expect(await store.meals(MARCH.from, MARCH.to)).to.deep.equal(before);
    expect((await store.state())?.lastSync).to.include({
      outcome: 'failed',
      error: 'meals: NEIS mealServiceDietInfo sent a malformed answer: the body is not JSON',
    });
  });

  it('skips a row with an unknown meal code with a warning, never the whole sync', async () => {
    const school = fakeSchool('F10', '7380292');
    const rows = fakeMealRows(school, '2026-03-03', ANCHOR);
    fake.script('mealServiceDietInfo', { kind: 'rows', rows: [...rows, { ...rows[1], MMEAL_SC_CODE: '9', MMEAL_SC_NM: '간식' }] });
    const report = await run({ datasets: ['meals'], from: '2026-03-03', to: '2026-03-03' });
    expect(report.outcome).to.equal('ok');
    expect(report.datasets.meals).to.include({ rows: 3, skippedRows: 1 });
    expect((await store.meals('2026-03-03', '2026-03-03')).map((m) => m.mealType)).to.deep.equal(['BREAKFAST', 'LUNCH', 'DINNER']);
    const warning = log.lines().find((l) => l['msg'] === 'NEIS row skipped');
    expect(warning?.['warning']).to.equal("skipped meal of 2026-03-03 with an unknown MMEAL_SC_CODE '9' (간식)");
  });

  it('runs one sync at a time: of two concurrent syncs only one runs', async () => {
    const [a, b] = await Promise.all([makeSync().run({ ...MARCH, trigger: 'cli' }), makeSync().run({ ...MARCH, trigger: 'daily' })]);
    const outcomes = [a.outcome, b.outcome].sort();
    expect(outcomes).to.deep.equal(['busy', 'ok']);
    // Only the winner spoke to NEIS: one request per service for this window.
    expect(fake.requests.map((r) => r.service).sort()).to.deep.equal(['SchoolSchedule', 'hisTimetable', 'mealServiceDietInfo']);
    const busy = a.outcome === 'busy' ? a : b;
    expect(busy).to.have.property('owner').that.is.a('string');
    // The lease is free again afterwards.
    expect((await makeSync().run({ ...MARCH, trigger: 'cli', datasets: ['meals'] })).outcome).to.equal('ok');
  });

  it('replaces a window atomically: readers see all old rows or all new ones, never none or a mix', async () => {
    const window = { from: '2026-03-02', to: '2026-03-06', trigger: 'cli' as const, datasets: ['timetables' as const] };
    await run(window);
    const expected = await store.timetables(window.from, window.to, 2, 3);
    expect(expected).to.have.length(34);
    let syncing = true;
    const counts: number[] = [];
    const reader = (async () => {
      while (syncing) counts.push((await store.timetables(window.from, window.to, 2, 3)).length);
    })();
    // The default grace period: replaced rows stay for readers that chose them a moment ago.
    asReport(await makeSync({}, 120_000).run(window));
    syncing = false;
    await reader;
    // (test/neis/store.integration.test.ts checks the same step by step.)
    expect(counts.length).to.be.greaterThan(0);
    expect([...new Set(counts)]).to.deep.equal([34]);
    const after = await store.timetables(window.from, window.to, 2, 3);
    expect(after.map((t) => t.timetableId)).to.deep.equal(expected.map((t) => t.timetableId));
    expect(after[0]?.generation).to.not.equal(expected[0]?.generation);
    // Once the grace period is over (0 here), the next sync deletes what was replaced.
    await run(window);
    expect(await db.models.timetables.countDocuments({ timetableDate: { $gte: window.from, $lte: window.to } })).to.equal(408);
  });
});

describe('NEIS: sync in the app, start-up sync and /v1/health', () => {
  let fake: FakeNeis;
  before(async () => {
    // A short span keeps the academic-year sync small: NEIS has data only around the anchor.
    fake = await startFakeNeis({ anchor: ANCHOR, apiKey: KEY, spanDays: 10 });
  });
  after(() => fake.close());

  it('syncs the academic year at start-up when no data is stored, then shows it in /v1/health', async () => {
    const now = new Date('2026-03-16T03:00:00Z'); // 12:00 in Seoul
    const t = await buildTestApp('neis-startup', {
      now: () => now,
      env: { NEIS_SYNC_ENABLED: 'true', NEIS_BASE_URL: fake.url, NEIS_API_KEY: KEY },
    });
    try {
      type Neis = {
        lastSync: { outcome: string; trigger: string; window: unknown; time: string } | null;
        scheduler: { nextRunAt?: string | null };
      };
      let neis: Neis | undefined;
      // The sync records lastSync before the scheduler picks its next run (src/neis/scheduler.ts
      // `startup`): wait for both.
      const settled = (n: Neis | undefined) => Boolean(n?.lastSync && n.scheduler.nextRunAt);
      for (let i = 0; i < 100 && !settled(neis); i++) {
        const health = await expectOk<{ neis: Neis }>(await t.request('/v1/health'));
        neis = health.neis;
        if (!settled(neis)) await new Promise((r) => setTimeout(r, 50));
      }
      expect(neis?.lastSync).to.deep.include({ outcome: 'ok', trigger: 'startup', window: { from: '2026-03-01', to: '2027-02-28' } });
      expect(neis?.scheduler).to.deep.equal({ enabled: true, nextRunAt: '2026-03-16T17:00:00.000Z', nextTrigger: 'daily' });
      expect(fake.requests.find((r) => r.service === 'mealServiceDietInfo')?.params).to.include({
        MLSV_FROM_YMD: '20260301',
        MLSV_TO_YMD: '20270228',
      });
      const key = await issueKey(t.db, { scopes: ['NEIS_READ'], now });
      const meals = await expectOk<{ mealDate: string }[]>(await t.request('/v1/neis/meals', { headers: { 'X-API-KEY': key } }));
      expect(meals.map((m) => m.mealDate)).to.deep.equal([ANCHOR, ANCHOR, ANCHOR]);
    } finally {
      await t.close();
    }
  });

  it('skips the start-up sync when the data is fresh, then syncs daily at NEIS_SYNC_TIME in NEIS_SYNC_TIMEZONE', async () => {
    const db = await createTestDatabase('neis-daily');
    // A clock running from 01:59:57 in Seoul: the daily 02:00 run is due in 3 s, time enough for
    // the fresh sync and the app's start on a loaded machine (CI runs the suite on 2 cores).
    const offset = new Date('2026-03-15T16:59:57.000Z').getTime() - Date.now();
    const now = () => new Date(Date.now() + offset);
    try {
      const fresh = await new NeisSync({
        store: new NeisStore(db),
        client: new NeisClient({ baseUrl: fake.url, apiKey: KEY, officeCode: 'F10', schoolCode: '7380292', timeoutMs: 2000 }),
        officeCode: 'F10',
        schoolCode: '7380292',
        logger: createLogger('silent'),
        now,
      }).run({ from: '2026-03-01', to: '2027-02-28', trigger: 'cli', datasets: ['meals', 'schedules'] });
      expect(fresh.outcome).to.equal('ok');
      fake.reset();
      const t = await buildTestApp('neis-daily', {
        db,
        now,
        env: {
          NEIS_SYNC_ENABLED: 'true',
          NEIS_BASE_URL: fake.url,
          NEIS_API_KEY: KEY,
          NEIS_SYNC_TIME: '02:00',
          NEIS_SYNC_TIMEZONE: 'Asia/Seoul',
        },
      });
      try {
        // (A cast, not an annotation: TypeScript would narrow an annotated `null` to never in the loop.)
        let lastSync = null as { trigger: string; outcome: string } | null;
        let scheduler = null as { nextRunAt?: string } | null;
        // The sync records lastSync before the scheduler picks its next run (src/neis/scheduler.ts
        // `fire`): wait for both, or a health read in between sees the run that just happened.
        const firstRun = '2026-03-15T17:00:00.000Z';
        for (let i = 0; i < 200 && (lastSync?.trigger !== 'daily' || scheduler?.nextRunAt === firstRun); i++) {
          await new Promise((r) => setTimeout(r, 50));
          ({ lastSync, scheduler } = (
            await expectOk<{ neis: { lastSync: typeof lastSync; scheduler: typeof scheduler } }>(await t.request('/v1/health'))
          ).neis);
        }
        expect(lastSync).to.deep.include({ trigger: 'daily', outcome: 'ok' });
        expect(t.logs.some((l) => l['msg'] === 'NEIS data is fresh; no start-up sync')).to.equal(true);
        // The next run is tomorrow at 02:00 in Seoul.
        expect(scheduler).to.deep.equal({ enabled: true, nextRunAt: '2026-03-16T17:00:00.000Z', nextTrigger: 'daily' });
        expect(fake.requests.find((r) => r.service === 'hisTimetable')?.params).to.include({
          TI_FROM_YMD: '20260301',
          TI_TO_YMD: '20270228',
        });
      } finally {
        await t.close();
      }
    } finally {
      await db.drop();
    }
  });

  it('reports a failed sync in /v1/health while still serving the last good data', async () => {
    const db = await createTestDatabase('neis-health');
    try {
      const sync = (timeoutMs: number) =>
        new NeisSync({
          store: new NeisStore(db),
          client: new NeisClient({ baseUrl: fake.url, apiKey: KEY, officeCode: 'F10', schoolCode: '7380292', timeoutMs, retries: 0 }),
          officeCode: 'F10',
          schoolCode: '7380292',
          logger: createLogger('silent'),
        });
      await sync(2000).run({ from: ANCHOR, to: ANCHOR, trigger: 'cli' });
      fake.setDefault('mealServiceDietInfo', { kind: 'delay', ms: 2000 });
      await sync(100).run({ from: ANCHOR, to: ANCHOR, trigger: 'daily', datasets: ['meals'] });
      fake.setDefault('mealServiceDietInfo', undefined);

      const now = new Date('2026-03-16T03:00:00Z');
      const t = await buildTestApp('neis-health', { db, now: () => now });
      try {
        const health = await expectOk<{ neis: Record<string, unknown> }>(await t.request('/v1/health'));
        expect(health.neis['lastSync']).to.deep.include({
          outcome: 'failed',
          error: 'meals: NEIS mealServiceDietInfo did not answer within 100 ms',
          trigger: 'daily',
        });
        expect(health.neis['lastSuccessAt']).to.be.a('string');
        expect(health.neis['scheduler']).to.deep.equal({ enabled: false });
        const key = await issueKey(db, { scopes: ['NEIS_READ'], now });
        const meals = await expectOk<unknown[]>(await t.request(`/v1/neis/meals?date=${ANCHOR}`, { headers: { 'X-API-KEY': key } }));
        expect(meals).to.have.length(3);
      } finally {
        await t.close();
      }
    } finally {
      await db.drop();
    }
  });
});
