import { expect } from 'chai';
import type { ApiScope } from '../../src/data/__generated__/enums.js';
import type { Database } from '../../src/data/database.js';
import { announce, announcementOf, openAnnouncement } from '../../src/data/events/announcements.js';
import { readChanges } from '../../src/data/events/feed.js';
import { lastSequence, takeSequence, writeEvents, type ChangeEvent } from '../../src/data/events/outbox.js';
import type { Subscriber } from '../../src/data/events/types.js';
import { WebhookStore, WEBHOOK_SECRET_PURPOSE } from '../../src/data/events/webhooks.js';
import { StatusBoard, rolloverHealth } from '../../src/data/operations/status.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { assertLeaseHeld, hasUnsettledBatch, journalBatch, settleSchool, withSchoolLock } from '../../src/data/school/engine.js';
import { applyImport } from '../../src/data/school/import.js';
import { applyRollover } from '../../src/data/school/rollover.js';
import { SchoolState } from '../../src/data/school/state.js';
import { CLI_ACTOR, type BatchRequest } from '../../src/data/school/types.js';
import { SchoolWriter } from '../../src/data/school/writes.js';
import { WebhookDelivery } from '../../src/events/delivery.js';
import { ANNOUNCED_BATCH_RECORDS } from '../../src/limits.js';
import { createLogger } from '../../src/logger.js';
import { CookieSealer } from '../../src/surfaces/web/seal.js';
import { createTestDatabase } from '../helpers/database.js';
import { TEST_POLICY } from '../helpers/factories.js';
import { eventually, TestReceiver } from '../helpers/receiver.js';

/**
 * The school-year signal (src/data/events/announcements.ts; docs/webhooks.md, "Rollovers and
 * mass changes"): a rollover, and any school batch of ANNOUNCED_BATCH_RECORDS records or more, is
 * announced in the feed and to webhooks before it applies (`school.rollover.started`, served while
 * the batch is still being written) and closed after (`school.rollover.completed`, with counts),
 * its record events between them with its batch id; /v1/health and /v1/status say it is under way
 * meanwhile; a batch that does not commit is closed as ROLLED_BACK.
 */

const ALL: Subscriber = { scopes: new Set(['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ', 'NEIS_READ']), operator: true };
const only = (...scopes: ApiScope[]): Subscriber => ({ scopes: new Set(scopes), operator: false });
/** Grade 1 and 2 move up (two of them to new classes), grade 3 graduates. */
const ROLLOVER_FILE = Buffer.from('학번,새 반,새 번호\r\n1101,2,1\r\n1201,1,1\r\n');

async function readAll(db: Database, cursor: string, subscriber: Subscriber = ALL): Promise<ChangeEvent[]> {
  const all: ChangeEvent[] = [];
  for (let after = cursor; ;) {
    const page = await readChanges(db, { after, limit: 1000, subscriber });
    all.push(...page.events);
    if (page.nextCursor === after) return all;
    after = page.nextCursor;
  }
}

describe('events and webhooks: the school-year signal, a rollover or mass change announced before it applies and closed after', function () {
  this.timeout(180000);
  let db: Database & { drop(): Promise<void> };
  const now = new Date('2026-03-02T09:00:00+09:00');

  beforeEach(async () => {
    db = await createTestDatabase('rollover_signal');
    await seedDemoSchool(db);
  });
  afterEach(async () => {
    await db.drop();
  });

  it("brackets the rollover's record events, each with its batch id, between started and completed (with the batch's counts)", async () => {
    const before = String(await lastSequence(db));
    const result = await applyRollover(db, CLI_ACTOR, 'rollover.csv', ROLLOVER_FILE, { now });
    expect(result.issues).to.deep.equal([]);
    const events = await readAll(db, before);
    const started = events[0];
    const batchId = started?.batchId ?? '';
    expect(batchId).to.match(/^[0-9a-f-]{36}$/);
    expect(started?.type).to.equal('school.rollover.started');
    expect(events.map((e) => e.batchId)).to.deep.equal(events.map(() => batchId));
    expect(events.map((e) => e.type).slice(-2)).to.deep.equal(['batch.completed', 'school.rollover.completed']);
    expect(events.filter((e) => e.type === 'student.updated').length).to.be.greaterThan(100);
    // The counts of the records the batch writes (every one updated: moved up, or graduated), announced before and confirmed after.
    const batch = await db.models.auditBatches.findById(batchId).lean<{ records: number; action: string }>();
    const records = batch?.records ?? -1;
    const counts = { created: 0, updated: records, deleted: 0 };
    expect(started?.data).to.deep.equal({ kind: 'ROLLOVER', records, counts });
    expect(events.at(-1)?.data).to.deep.equal({ kind: 'ROLLOVER', outcome: 'APPLIED', records, counts });
    // Each record written has its event between the two (and the clubs whose members' summaries changed have theirs).
    expect(events.length - 3).to.be.at.least(records);
    expect(events.at(-1)).to.deep.include({ actor: { kind: 'CLI', accountId: null }, time: now.toISOString() });
    // Closed: nothing is under way any more.
    expect(await openAnnouncement(db)).to.equal(null);
    expect(await rolloverHealth(db)).to.deep.equal({ rollover: { underWay: false } });

    // Every school scope hears of it, counts and all; NEIS_READ alone does not.
    const clubs = await readAll(db, before, only('CLUB_READ'));
    expect(clubs[0]).to.deep.include({ type: 'school.rollover.started', data: started?.data });
    expect(clubs.at(-1)).to.deep.include({ type: 'school.rollover.completed', data: events.at(-1)?.data });
    expect(clubs.some((e) => e.type === 'student.updated')).to.equal(false);
    expect((await readAll(db, before, only('NEIS_READ'))).map((e) => e.type)).to.deep.equal([]);
  });

  it('announces a large import as well (kind IMPORT), and not a change of fewer records', async () => {
    let before = String(await lastSequence(db));
    await new SchoolWriter(db, CLI_ACTOR, { timeZone: 'Asia/Seoul', now: () => now }).updateStudent(1, { name: '이름바꿈' });
    // A student renamed: their record, and the club and project summaries that show the name.
    expect((await readAll(db, before)).map((e) => e.type)).to.deep.equal(['student.updated', 'club.updated', 'project.updated']);

    // Grade 3's students in one file, each with a new dormitory room: one record each.
    const state = await SchoolState.load(db);
    const rows = [...state.all('STUDENT')].filter((s) => s.grade === 3).slice(0, ANNOUNCED_BATCH_RECORDS);
    expect(rows).to.have.length(ANNOUNCED_BATCH_RECORDS);
    const csv = ['ID,호실', ...rows.map((s, i) => `${s._id},${301 + (i % 20)}호`)].join('\r\n');
    before = String(await lastSequence(db));
    const imported = await applyImport(db, CLI_ACTOR, 'STUDENT', 'rooms.csv', Buffer.from(csv), {
      timeZone: 'Asia/Seoul',
      now,
      removeMissing: false,
    });
    expect(imported.issues).to.deep.equal([]);
    const events = await readAll(db, before);
    expect(events[0]).to.deep.include({ type: 'school.rollover.started', batchId: imported.batchId });
    expect(events[0]?.data).to.deep.include({ kind: 'IMPORT', records: ANNOUNCED_BATCH_RECORDS });
    expect(events.at(-1)).to.deep.include({ type: 'school.rollover.completed', batchId: imported.batchId });
  });

  it('while the rollover is being written: the feed and a webhook have its started event and none of its record events; health and status say it is under way', async () => {
    const store = new WebhookStore(
      db,
      new CookieSealer(['a test cookie key that is long enough to use'], WEBHOOK_SECRET_PURPOSE),
      TEST_POLICY,
    );
    const receiver = await new TestReceiver().open();
    await store.create({ ownerAccountId: null, url: receiver.url, eventTypes: ['school.*'] });
    const delivery = new WebhookDelivery({
      db,
      store,
      policy: { production: false, allowPrivate: true },
      retryScheduleMs: [100],
      logger: createLogger('silent'),
      sendMail: async () => {},
      consoleUrl: 'http://127.0.0.1/console/webhooks',
    });
    delivery.start();
    const before = String(await lastSequence(db));
    // The writer stops after 20 records written, until it gets SIGUSR2 (src/data/school/engine.ts, testPausePoint).
    process.env['CAMPUS_TEST_PAUSE_AFTER'] = '20';
    let applying: Promise<unknown> | undefined;
    try {
      applying = applyRollover(db, CLI_ACTOR, 'rollover.csv', ROLLOVER_FILE, { now });
      await eventually(async () => process.listenerCount('SIGUSR2') > 0 && (await hasUnsettledBatch(db)), 20000, 'the writer paused');

      const during = await readChanges(db, { after: before, limit: 1000, subscriber: ALL });
      expect(during.events.map((e) => e.type)).to.deep.equal(['school.rollover.started']);
      const batchId = during.events[0]?.batchId;
      expect(during.nextCursor).to.equal(during.events[0]?.id);
      const records = (during.events[0]?.data as { records: number }).records;
      expect(records).to.be.greaterThan(200);
      const underWay = { batchId, kind: 'ROLLOVER', records, since: now.toISOString() };
      expect(await rolloverHealth(db)).to.deep.equal({ rollover: { underWay: true, ...underWay } });
      const board = new StatusBoard({
        db,
        config: { schoolTimeZone: 'Asia/Seoul', neis: { syncEnabled: false, apiKey: undefined } },
        now: () => now,
      });
      expect((await board.report()).rollover.underWay).to.deep.equal(underWay);
      // The webhook is told before the rollover applies.
      const told = await eventually(async () => receiver.received.length > 0 && receiver.received, 10000, 'the started event delivered');
      expect(told.map((r) => (JSON.parse(r.body) as ChangeEvent).type)).to.deep.equal(['school.rollover.started']);
      expect(await hasUnsettledBatch(db)).to.equal(true);
    } finally {
      delete process.env['CAMPUS_TEST_PAUSE_AFTER'];
      if (process.listenerCount('SIGUSR2') > 0) process.kill(process.pid, 'SIGUSR2');
      await applying;
    }
    const after = await readAll(db, before);
    expect(after[0]?.type).to.equal('school.rollover.started');
    expect(after.at(-1)?.type).to.equal('school.rollover.completed');
    const delivered = await eventually(
      async () => receiver.received.length === 2 && receiver.received,
      10000,
      'the completed event delivered',
    );
    expect(delivered.map((r) => (JSON.parse(r.body) as ChangeEvent).type)).to.deep.equal([
      'school.rollover.started',
      'school.rollover.completed',
    ]);
    expect(await rolloverHealth(db)).to.deep.equal({ rollover: { underWay: false } });
    await delivery.stop();
    await receiver.close();
  });

  it("the feed stops before a batch a living writer is still writing, at once: what committed before it is served, the batch's own events are not", async () => {
    const before = String(await lastSequence(db));
    await new SchoolWriter(db, CLI_ACTOR, { timeZone: 'Asia/Seoul', now: () => now }).updateStudent(1, { name: '먼저' });
    const committed = (await readAll(db, before)).map((e) => e.id);
    expect(committed.length).to.be.greaterThan(0);
    const student = (await SchoolState.load(db)).get('STUDENT', 2);
    if (!student) throw new Error('no student 2');
    let release = () => {};
    const held = new Promise<void>((done) => (release = done));
    let written = () => {};
    const ready = new Promise<void>((done) => (written = done));
    // A writer that has written its events and not yet settled its batch, and is alive (it holds the lease).
    const writing = withSchoolLock(db, async (lease) => {
      const first = await takeSequence(db, 1);
      const request: BatchRequest = {
        actor: CLI_ACTOR,
        action: 'UPDATE',
        summary: 'still writing',
        changes: [{ entity: 'STUDENT', id: 2, before: student, after: { ...student, name: '쓰는중' } }],
      };
      const batchId = await journalBatch(db, request, now, { eventFirst: first, eventLast: first, lease });
      await writeEvents(db, [{ type: 'student.updated', at: now, actorKind: 'CLI', actorId: null, batchId, data: '{}' }], first);
      written();
      await held;
    });
    try {
      await ready;
      const started = Date.now();
      const page = await readChanges(db, { after: before, limit: 1000, subscriber: ALL });
      expect(Date.now() - started, 'answered without waiting for the writer').to.be.below(3000);
      expect(page.events.map((e) => e.id)).to.deep.equal(committed);
      expect(page.nextCursor).to.equal(committed.at(-1));
    } finally {
      release();
      await writing;
    }
    // Its writer gone without settling it, the next read rolls it back: its event was never served.
    await settleSchool(db);
    expect((await readAll(db, before)).map((e) => e.id)).to.deep.equal(committed);
  });

  it('closes an announcement whose batch did not commit as ROLLED_BACK: its writer died while writing, or before it journaled', async () => {
    const state = await SchoolState.load(db);
    const moved = [...state.all('STUDENT')].filter((s) => s.grade === 1).slice(0, ANNOUNCED_BATCH_RECORDS);
    const request: BatchRequest = {
      actor: CLI_ACTOR,
      action: 'ROLLOVER',
      summary: 'rollover by a writer that dies',
      changes: moved.map((s) => ({ entity: 'STUDENT' as const, id: s._id, before: s, after: { ...s, grade: 2 } })),
    };
    const counts = { created: 0, updated: ANNOUNCED_BATCH_RECORDS, deleted: 0 };

    // A writer announces, journals, and dies (its lease let go) before it writes its events or settles.
    let before = String(await lastSequence(db));
    await withSchoolLock(db, async (lease) => {
      const announcement = announcementOf(request, 'b-died-writing', now);
      if (!announcement) throw new Error('a rollover is always announced');
      await announce(db, announcement, () => assertLeaseHeld(lease));
      await journalBatch(db, request, now, { batchId: 'b-died-writing', lease });
    });
    expect(await rolloverHealth(db)).to.deep.equal({
      rollover: { underWay: true, batchId: 'b-died-writing', kind: 'ROLLOVER', records: ANNOUNCED_BATCH_RECORDS, since: now.toISOString() },
    });
    expect(await settleSchool(db)).to.deep.equal(['b-died-writing']);
    let events = await readAll(db, before);
    expect(events.map((e) => [e.type, e.batchId])).to.deep.equal([
      ['school.rollover.started', 'b-died-writing'],
      ['school.rollover.completed', 'b-died-writing'],
    ]);
    expect(events[0]?.data).to.deep.equal({ kind: 'ROLLOVER', records: ANNOUNCED_BATCH_RECORDS, counts });
    expect(events[1]?.data).to.deep.equal({
      kind: 'ROLLOVER',
      outcome: 'ROLLED_BACK',
      records: 0,
      counts: { created: 0, updated: 0, deleted: 0 },
    });
    expect(await openAnnouncement(db)).to.equal(null);

    // One that dies between its announcement and its journal is closed by the next writer's recovery.
    before = String(await lastSequence(db));
    await withSchoolLock(db, async (lease) => {
      const announcement = announcementOf(request, 'b-died-announcing', now);
      if (!announcement) throw new Error('a rollover is always announced');
      await announce(db, announcement, () => assertLeaseHeld(lease));
    });
    expect((await rolloverHealth(db))['rollover']).to.deep.include({ underWay: true });
    await new SchoolWriter(db, CLI_ACTOR, { timeZone: 'Asia/Seoul', now: () => now }).updateStudent(1, { name: '다음사람' });
    events = await readAll(db, before);
    expect(events.map((e) => [e.type, e.batchId === 'b-died-announcing'])).to.deep.equal([
      ['school.rollover.started', true],
      ['school.rollover.completed', true],
      ['student.updated', false],
      ['club.updated', false],
      ['project.updated', false],
    ]);
    expect(events[1]?.data).to.deep.include({ outcome: 'ROLLED_BACK' });
    expect(await rolloverHealth(db)).to.deep.equal({ rollover: { underWay: false } });
  });
});
