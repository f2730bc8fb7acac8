import { expect } from 'chai';
import type { Database } from '../../src/data/database.js';
import type { ChangeEvent } from '../../src/data/events/outbox.js';
import type { StatusReport } from '../../src/data/operations/status.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { hasUnsettledBatch } from '../../src/data/school/engine.js';
import { applyRollover } from '../../src/data/school/rollover.js';
import { CLI_ACTOR } from '../../src/data/school/types.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { issueKey } from '../helpers/factories.js';
import { eventually } from '../helpers/receiver.js';

/**
 * The school-year signal as apps read it over HTTP while a rollover is being written: GET
 * /v1/changes serves its `school.rollover.started` (even to a query whose answer was cached just
 * before: the feed's answers move with the `feed` version), GET /v1/health and GET /v1/status say a
 * rollover is under way, and the data API goes on serving the school as it was, at once (the
 * announcement does not make the read model wait for the batch).
 */
describe('events and webhooks: the school-year signal over HTTP, while the rollover is being written', function () {
  this.timeout(120000);
  let db: Database & { drop(): Promise<void> };
  let t: TestApp;
  let key: string;
  let clock = new Date('2026-03-02T09:00:00+09:00');

  before(async () => {
    db = await createTestDatabase('rollover_signal_http');
    await seedDemoSchool(db);
    key = await issueKey(db, { scopes: ['STUDENT_READ', 'CLUB_READ'] });
    t = await buildTestApp('rollover_signal_http', { db, now: () => clock });
  });
  after(async () => {
    await t.close();
    await db.drop();
  });

  it('the feed serves the announcement, health and status say it is under way, and the data API answers the school as it was', async () => {
    const get = async <T>(path: string): Promise<{ status: number; data: T; ms: number }> => {
      const started = Date.now();
      const res = await t.request(path, { headers: { 'X-API-KEY': key } });
      return { status: res.status, data: ((await res.json()) as { data: T }).data, ms: Date.now() - started };
    };
    const last = await get<{ events: ChangeEvent[]; nextCursor: string }>('/v1/changes?limit=1000');
    const cursor = last.data.nextCursor;
    // Cached at this data version: nothing after the cursor yet.
    expect((await get<{ events: ChangeEvent[] }>(`/v1/changes?after=${cursor}`)).data.events).to.deep.equal([]);
    const grade1 = (await get<{ totalElements: number }>('/v1/students?grade=1&size=1')).data.totalElements;
    expect((await get<{ status: string }>('/v1/status')).status).to.equal(200);

    process.env['CAMPUS_TEST_PAUSE_AFTER'] = '20';
    let applying: Promise<unknown> | undefined;
    try {
      applying = applyRollover(db, CLI_ACTOR, 'rollover.csv', Buffer.from('학번,새 반,새 번호\r\n1101,2,1\r\n1201,1,1\r\n'), {
        now: clock,
      });
      await eventually(async () => process.listenerCount('SIGUSR2') > 0 && (await hasUnsettledBatch(db)), 20000, 'the writer paused');
      // The process hears of the new feed version within its second.
      const during = await eventually(
        async () => {
          const page = await get<{ events: ChangeEvent[] }>(`/v1/changes?after=${cursor}`);
          return page.data.events.length > 0 && page.data.events;
        },
        5000,
        'the announcement in the feed',
      );
      expect(during.map((e) => e.type)).to.deep.equal(['school.rollover.started']);
      const batchId = during[0]?.batchId;
      // The data API answers at once, from the school as it was.
      const students = await get<{ totalElements: number }>('/v1/students?grade=1&size=1');
      expect(students.status).to.equal(200);
      expect(students.data.totalElements).to.equal(grade1);
      expect(students.ms).to.be.below(2000);
      const health = (await (await t.request('/v1/health')).json()) as { data: { rollover: { underWay: boolean; batchId: string } } };
      expect(health.data.rollover).to.deep.include({ underWay: true, batchId, kind: 'ROLLOVER' });
      // The status report reads it with the rest of what it keeps (again after 10 s of its clock).
      clock = new Date(clock.getTime() + 11_000);
      const status = await get<StatusReport>('/v1/status');
      expect(status.data.rollover.underWay).to.deep.include({ batchId, kind: 'ROLLOVER' });
      expect(await (await t.request('/status?lang=en')).text()).to.include('A school-year rollover is being applied');
    } finally {
      delete process.env['CAMPUS_TEST_PAUSE_AFTER'];
      if (process.listenerCount('SIGUSR2') > 0) process.kill(process.pid, 'SIGUSR2');
      await applying;
    }
    const after = await eventually(
      async () => {
        const page = await get<{ events: ChangeEvent[] }>(`/v1/changes?after=${cursor}&limit=1000`);
        return page.data.events.at(-1)?.type === 'school.rollover.completed' && page.data.events;
      },
      5000,
      'the whole rollover in the feed',
    );
    expect(after[0]?.type).to.equal('school.rollover.started');
    clock = new Date(clock.getTime() + 11_000);
    expect((await get<StatusReport>('/v1/status')).data.rollover.underWay).to.equal(null);
  });
});
