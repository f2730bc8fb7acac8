import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Database } from '../../src/data/database.js';
import { readHistory } from '../../src/data/operations/status-history.js';
import { StatusBoard, StatusRecorder, type StatusConfig } from '../../src/data/operations/status.js';
import { createTestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/receiver.js';

/**
 * The status page's memory (src/data/operations/status-history.ts): the checks every process
 * records each minute, in the database, one record per part per minute whichever process writes
 * it first, and a day's availability computed from them; after a week a day keeps its counts
 * only, after 90 days it goes. The clock is the test's: a "minute" is a move of it.
 */
describe('operations: the status history, recorded every minute by every process and kept 90 days', function () {
  this.timeout(120000);
  let db: Database & { drop(): Promise<void> };
  const config: StatusConfig = { schoolTimeZone: 'Asia/Seoul', neis: { syncEnabled: false, apiKey: undefined } };
  let clock = new Date('2026-12-01T10:00:20+09:00');
  const now = () => clock;
  /** The machine's Redis (answers), and one on a port nothing listens on (down). */
  let redis: Redis;
  let deadRedis: Redis;

  before(async () => {
    db = await createTestDatabase('status_history');
    redis = new Redis('redis://127.0.0.1:6379', { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    deadRedis = new Redis('redis://127.0.0.1:9', { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: () => null });
    deadRedis.on('error', () => {});
    await eventually(() => redis.status === 'ready', 5000, 'Redis');
  });
  after(async () => {
    redis.disconnect();
    deadRedis.disconnect();
    await db.drop();
  });

  const at = (iso: string) => (clock = new Date(iso));
  const dayOf = async (date: string) => (await readHistory(db, date)).find((d) => d._id === date);

  it("computes a day's availability from the minutes two processes recorded: the first to record a minute has it", async () => {
    // Process A reaches Redis, process B does not; both record every minute, A first for 15 minutes, then B first for 5.
    const a = new StatusBoard({ db, redis, config, now });
    const b = new StatusBoard({ db, redis: deadRedis, config, now });
    for (let minute = 0; minute < 20; minute++) {
      at(`2026-12-01T10:${String(minute).padStart(2, '0')}:20+09:00`);
      const [first, second] = minute < 15 ? [a, b] : [b, a];
      const checked = await first.record();
      await second.record();
      expect(checked.parts.find((p) => p.part === 'redis')?.state, `minute ${minute}`).to.equal(minute < 15 ? 'UP' : 'DOWN');
    }
    const day = await dayOf('2026-12-01');
    expect(day?.parts['redis']).to.deep.include({ up: 15, degraded: 0, down: 5 });
    expect(day?.parts['redis']?.minutes).to.equal(`${'.'.repeat(600)}${'U'.repeat(15)}${'D'.repeat(5)}`);
    expect(day?.parts['database']).to.deep.include({ up: 20, degraded: 0, down: 0 });
    // The NEIS sync is off here: not recorded at all.
    expect(day?.parts).to.not.have.property('neis');

    const report = await a.report();
    const part = (name: string) => report.parts.find((p) => p.part === name);
    expect(part('redis')?.availability).to.deep.equal({
      days90: 0.75,
      days: [{ date: '2026-12-01', availability: 0.75, up: 15, degraded: 0, down: 5 }],
    });
    expect(part('database')?.availability.days90).to.equal(1);
    expect(part('neis')).to.deep.include({ state: 'OFF', availability: { days90: null, days: [] } });
    expect(report.state).to.equal('UP');
    expect((await b.report()).state).to.equal('DOWN');
  });

  it('keeps a week of minutes, then only the counts of each day; after 90 days the day goes', async () => {
    const board = new StatusBoard({ db, redis, config, now });
    // Six days on, the first day still has its minutes.
    at('2026-12-07T08:00:10+09:00');
    await board.record();
    expect((await dayOf('2026-12-01'))?.parts['redis']?.minutes).to.be.a('string');
    // A week on, its counts are all that is left, and they still say how available it was.
    at('2026-12-08T08:00:10+09:00');
    await board.record();
    expect((await dayOf('2026-12-01'))?.parts['redis']).to.deep.equal({ up: 15, degraded: 0, down: 5 });
    expect((await dayOf('2026-12-07'))?.parts['redis']?.minutes).to.be.a('string');
    const redisPart = (await board.report()).parts.find((p) => p.part === 'redis');
    expect(redisPart?.availability.days.map((d) => [d.date, d.availability])).to.deep.equal([
      ['2026-12-01', 0.75],
      ['2026-12-07', 1],
      ['2026-12-08', 1],
    ]);
    expect(redisPart?.availability.days90).to.equal(17 / 22);
    // 90 days after the first day, it is gone; the report's 90 days start the day after.
    at('2027-03-01T08:00:10+09:00');
    await board.record();
    expect((await readHistory(db, '2026-01-01')).map((d) => d._id)).to.deep.equal(['2026-12-07', '2026-12-08', '2027-03-01']);
    expect((await board.report()).parts.find((p) => p.part === 'redis')?.availability.days.map((d) => d.date)).to.deep.equal([
      '2026-12-07',
      '2026-12-08',
      '2027-03-01',
    ]);
  });

  it("the recorder is `campus serve`'s minute: it records at start and then on its interval, until stopped", async () => {
    at('2027-03-02T12:00:05+09:00');
    const board = new StatusBoard({ db, redis, config, now });
    const recorder = new StatusRecorder(board, 200).start();
    try {
      await eventually(async () => (await dayOf('2027-03-02'))?.parts['database']?.up === 1, 5000, 'the first minute recorded');
      at('2027-03-02T12:01:05+09:00');
      await eventually(async () => (await dayOf('2027-03-02'))?.parts['database']?.up === 2, 5000, 'the next minute recorded');
    } finally {
      await recorder.stop();
    }
    at('2027-03-02T12:02:05+09:00');
    await new Promise((done) => setTimeout(done, 500));
    expect((await dayOf('2027-03-02'))?.parts['database']?.up).to.equal(2);
  });
});
