import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { ApiScope } from '../../src/data/__generated__/enums.js';
import type { Database } from '../../src/data/database.js';
import type { Subscriber } from '../../src/data/events/types.js';
import { undoBatch } from '../../src/data/school/audit.js';
import { journalBatch, settleSchool } from '../../src/data/school/engine.js';
import { events, lastSequence, pruneEvents, takeSequence, writeEvents, type ChangeEvent } from '../../src/data/events/outbox.js';
import { CursorExpiredError, readChanges } from '../../src/data/events/feed.js';
import { applyImport } from '../../src/data/school/import.js';
import { applyRollover } from '../../src/data/school/rollover.js';
import { normalizeStudent } from '../../src/data/school/state.js';
import { CLI_ACTOR, type Actor } from '../../src/data/school/types.js';
import { SchoolWriter, type WriteOutcome } from '../../src/data/school/writes.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { BadRequestError } from '../../src/errors/index.js';
import { createTestDatabase } from '../helpers/database.js';
import { NeisStore } from '../../src/data/neis/store.js';
import { createLogger } from '../../src/logger.js';
import { NeisClient } from '../../src/neis/client.js';
import { startFakeNeis } from '../../src/neis/fake-server.js';
import { NeisSync } from '../../src/neis/sync.js';
import { buildStudent, STUDENT_RECORD_FIELDS } from '../helpers/factories.js';

/**
 * The change feed's outbox (src/data/events/outbox.ts): every write path of school data
 * emits its events in the same batch as the change, numbered in commit order; a batch that does
 * not commit leaves none; the feed resumes exactly from any cursor, filters by scope, and answers
 * 410 for a cursor older than its retention.
 */

/** An operator's key with every school scope: it sees every school event whole, with its actor's account. */
const ALL: Subscriber = { scopes: new Set(['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ']), operator: true };
/** An operator's key with these scopes alone. */
const only = (...scopes: ApiScope[]): Subscriber => ({ scopes: new Set(scopes), operator: true });
const ADMIN: Actor = { kind: 'ACCOUNT', accountId: 7, email: 'admin@gsm.hs.kr' };

/** Every event after `cursor`, read in pages of `limit`. */
async function readAll(db: Database, cursor: string, limit = 1000, subscriber: Subscriber = ALL): Promise<ChangeEvent[]> {
  const all: ChangeEvent[] = [];
  for (let after = cursor; ;) {
    const page = await readChanges(db, { after, limit, subscriber });
    all.push(...page.events);
    if (page.nextCursor === after) return all;
    after = page.nextCursor;
  }
}

/** The source files under src/ whose text matches `pattern` (relative paths). */
function sourcesMatching(pattern: RegExp, dir = 'src'): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourcesMatching(pattern, path);
    return entry.name.endsWith('.ts') && pattern.test(readFileSync(path, 'utf8')) ? [path] : [];
  });
}

describe('events and webhooks: change events of school records (the outbox of the one write path)', function () {
  this.timeout(180000);
  let db: Database & { drop(): Promise<void> };
  const now = new Date('2026-03-02T09:00:00+09:00');
  const clock = { timeZone: 'Asia/Seoul', now: () => now };

  beforeEach(async () => {
    db = await createTestDatabase('school_events');
    await seedDemoSchool(db);
  });
  afterEach(async () => {
    await db.drop();
  });

  /** Runs `write`, returns the events it emitted (all scopes). */
  const emitted = async (write: () => Promise<unknown>): Promise<ChangeEvent[]> => {
    const before = String(await lastSequence(db));
    await write();
    return readAll(db, before);
  };

  /**
   * One case per public method of SchoolWriter (the console forms and the GraphQL mutations call
   * them) with the event type it must emit. A method added to SchoolWriter without a case here
   * fails the first test.
   */
  const WRITER_CASES: Record<string, { type: string; run: (w: SchoolWriter) => Promise<WriteOutcome> }> = {
    createStudent: {
      type: 'student.created',
      run: (w) => w.createStudent({ name: '새학생', sex: 'WOMAN', email: 'new@gsm.hs.kr', grade: 2, classNum: 1, number: 17 }),
    },
    updateStudent: { type: 'student.updated', run: (w) => w.updateStudent(1, { name: '바뀐이름' }) },
    graduateStudent: { type: 'student.updated', run: (w) => w.graduateStudent(2) },
    withdrawStudent: { type: 'student.updated', run: (w) => w.withdrawStudent(3) },
    reactivateStudent: {
      type: 'student.updated',
      run: async (w) => {
        await w.withdrawStudent(4);
        return w.reactivateStudent(4, { grade: 2, classNum: 4, number: 17 });
      },
    },
    deleteStudent: { type: 'student.deleted', run: (w) => w.deleteStudent(5) },
    createClub: { type: 'club.created', run: (w) => w.createClub({ name: 'Brand New', type: 'AUTONOMOUS_CLUB' }) },
    updateClub: { type: 'club.updated', run: (w) => w.updateClub(1, { name: 'Renamed Club' }) },
    abolishClub: {
      type: 'club.updated',
      run: async (w) => {
        const club = await w.createClub({ name: 'Short Lived', type: 'AUTONOMOUS_CLUB' });
        return w.abolishClub(club.id ?? 0, 2026);
      },
    },
    deleteClub: {
      type: 'club.deleted',
      run: async (w) => {
        const club = await w.createClub({ name: 'Gone Soon', type: 'AUTONOMOUS_CLUB' });
        return w.deleteClub(club.id ?? 0);
      },
    },
    createProject: { type: 'project.created', run: (w) => w.createProject({ name: 'New Project' }) },
    updateProject: { type: 'project.updated', run: (w) => w.updateProject(1, { name: 'Renamed Project' }) },
    endProject: { type: 'project.updated', run: (w) => w.endProject(2, 2026) },
    reopenProject: {
      type: 'project.updated',
      run: async (w) => {
        await w.endProject(3, 2026);
        return w.reopenProject(3);
      },
    },
    deleteProject: { type: 'project.deleted', run: (w) => w.deleteProject(4) },
  };

  it('every write path emits its events: each SchoolWriter method, import, rollover and undo (a new path without a case fails)', async () => {
    // The paths are the callers of the engine: a file that starts a school write (withSchoolLock)
    // or commits one (commitBatch) must be one this test walks. The demo seed's reset writes
    // the records itself and is the one path without events (`campus seed --demo --reset`: a
    // development school replaced whole; docs/data-api.md, "GET /v1/changes").
    expect(sourcesMatching(/\bcommitBatch\(/).sort()).to.deep.equal([
      'src/data/school/audit.ts',
      'src/data/school/engine.ts',
      'src/data/school/import.ts',
      'src/data/school/writes.ts',
    ]);
    expect(sourcesMatching(/\bwithSchoolLock\(/).sort()).to.deep.equal([
      // The NEIS sync's events (walked by the next test).
      'src/data/neis/events.ts',
      'src/data/school/audit.ts',
      'src/data/school/demo.ts',
      'src/data/school/import.ts',
      'src/data/school/rollover.ts',
      'src/data/school/writes.ts',
    ]);
    // Every event writer: the school's batches and the NEIS sync.
    expect(sourcesMatching(/\bwriteEvents\(/).sort()).to.deep.equal([
      // A rollover's or mass change's announcement and its close (test/events/rollover-signal.integration.test.ts).
      'src/data/events/announcements.ts',
      'src/data/events/outbox.ts',
      'src/data/neis/events.ts',
      'src/data/school/engine.ts',
    ]);
    expect(sourcesMatching(/\brecordNeisEvent\(/).sort()).to.deep.equal(['src/data/neis/events.ts', 'src/neis/sync.ts']);
    const methods = Object.getOwnPropertyNames(SchoolWriter.prototype).filter((m) => !['constructor', 'run', 'year'].includes(m));
    expect(methods.sort()).to.deep.equal(Object.keys(WRITER_CASES).sort());

    const writer = new SchoolWriter(db, ADMIN, clock);
    for (const [method, { type, run }] of Object.entries(WRITER_CASES)) {
      let outcome: WriteOutcome | undefined;
      const found = await emitted(async () => (outcome = await run(writer)));
      expect(outcome?.issues, method).to.deep.equal([]);
      const mine = found.filter((e) => e.batchId === outcome?.batchId);
      expect(
        mine.map((e) => e.type),
        `${method} emits ${type}`,
      ).to.include(type);
      for (const event of mine) {
        expect(event.actor, method).to.deep.equal({ kind: 'ACCOUNT', accountId: 7 });
        expect(event.time, method).to.equal(now.toISOString());
      }
    }

    // Import: one event per record written, then batch.completed with its kind and counts.
    const csv = Buffer.from('학생명,학번,이메일,성별,학과,소속\r\n가져옴,2118,imported@gsm.hs.kr,여자,SW개발과,일반학생\r\n');
    let imported: string | null = null;
    let importResult: { issues: readonly unknown[]; batchId: string | null } | undefined;
    const importEvents = await emitted(async () => {
      importResult = await applyImport(db, CLI_ACTOR, 'STUDENT', 'students.csv', csv, {
        timeZone: 'Asia/Seoul',
        now,
        removeMissing: false,
      });
      imported = importResult.batchId;
    });
    expect(imported, JSON.stringify(importResult?.issues)).to.be.a('string');
    const created = importEvents.find((e) => e.type === 'student.created');
    expect(created?.data).to.deep.include({ before: null });
    expect((created?.data as { after: Record<string, unknown> }).after).to.include({
      name: '가져옴',
      email: 'imported@gsm.hs.kr',
      studentNumber: 2118,
    });
    expect(importEvents.at(-1)).to.deep.include({ type: 'batch.completed', batchId: imported, actor: { kind: 'CLI', accountId: null } });
    expect(importEvents.at(-1)?.data).to.deep.equal({
      kind: 'IMPORT',
      summary: 'import students.csv: 1 created, 0 updated, 0 removed, 0 unchanged',
      records: 1,
      counts: { created: 1, updated: 0, deleted: 0 },
    });

    // Undo of the import: the student deleted again, and batch.completed of kind UNDO.
    const undoEvents = await emitted(() => undoBatch(db, ADMIN, imported ?? '', now));
    expect(undoEvents.map((e) => e.type)).to.include('student.deleted');
    expect(undoEvents.at(-1)?.type).to.equal('batch.completed');
    expect((undoEvents.at(-1)?.data as { kind: string }).kind).to.equal('UNDO');

    // Rollover: grade 3 graduates, the others move up.
    const rollover = Buffer.from('학번,새 반,새 번호\r\n1101,2,1\r\n1201,1,1\r\n');
    let rolled: { issues: readonly unknown[] } | undefined;
    const rolloverEvents = await emitted(async () => (rolled = await applyRollover(db, CLI_ACTOR, 'rollover.csv', rollover, { now })));
    expect(rolled?.issues).to.deep.equal([]);
    expect(rolloverEvents.filter((e) => e.type === 'student.updated').length).to.be.greaterThan(10);
    // Announced and closed around its events (test/events/rollover-signal.integration.test.ts), batch.completed last inside.
    expect(rolloverEvents[0]?.type).to.equal('school.rollover.started');
    expect(rolloverEvents.at(-1)?.type).to.equal('school.rollover.completed');
    expect(rolloverEvents.at(-2)?.type).to.equal('batch.completed');
    expect((rolloverEvents.at(-2)?.data as { kind: string }).kind).to.equal('ROLLOVER');
  });

  it('a NEIS sync that changes meals, schedules or timetables emits neis.*.updated with the dates touched; an unchanged one emits nothing', async () => {
    const fake = await startFakeNeis({ anchor: '2026-03-16', apiKey: 'neis-key' });
    try {
      const client = new NeisClient({
        baseUrl: fake.url,
        apiKey: 'neis-key',
        officeCode: 'F10',
        schoolCode: '7380292',
        timeoutMs: 5000,
        backoffMs: () => 0,
      });
      const sync = new NeisSync({
        store: new NeisStore(db),
        client,
        officeCode: 'F10',
        schoolCode: '7380292',
        logger: createLogger('silent'),
        now: () => now,
      });
      const window = { from: '2026-03-02', to: '2026-03-04' };
      const NEIS = only('NEIS_READ');
      const emitted = async (write: () => Promise<unknown>): Promise<ChangeEvent[]> => {
        const before = String(await lastSequence(db));
        await write();
        return readAll(db, before, 1000, NEIS);
      };
      // The demo seed synced nothing of these dates: every dataset changes, on the dates it has rows.
      const first = await emitted(() => sync.run({ ...window, trigger: 'cli' }));
      expect(first.map((e) => e.type)).to.deep.equal(['neis.meals.updated', 'neis.schedules.updated', 'neis.timetables.updated']);
      expect(first[0]).to.deep.include({ actor: { kind: 'CLI', accountId: null }, batchId: null, time: now.toISOString() });
      expect(first[0]?.data).to.deep.equal({ dataset: 'meals', dates: ['2026-03-02', '2026-03-03', '2026-03-04'], ...window });
      for (const event of first) expect((event.data as { dates: string[] }).dates.length, event.type).to.be.greaterThan(0);
      // The same data again: nothing changed, no event.
      expect(await emitted(() => sync.run({ ...window, trigger: 'cli' }))).to.deep.equal([]);
      // NEIS drops one day's meals: only that date is named.
      const rows = await client.meals(window.from, window.to);
      fake.script('mealServiceDietInfo', { kind: 'rows', rows: rows.filter((r) => r['MLSV_YMD'] !== '20260303') });
      const dropped = await emitted(() => sync.run({ ...window, trigger: 'cli', datasets: ['meals'] }));
      expect(dropped.map((e) => [e.type, (e.data as { dates: string[] }).dates])).to.deep.equal([['neis.meals.updated', ['2026-03-03']]]);
      // Only NEIS_READ sees them.
      const cursor = String(Number(first[0]?.id) - 1);
      expect((await readAll(db, cursor, 1000, NEIS)).map((e) => e.type)).to.deep.equal([
        'neis.meals.updated',
        'neis.schedules.updated',
        'neis.timetables.updated',
        'neis.meals.updated',
      ]);
      expect(await readAll(db, cursor, 1000, ALL)).to.deep.equal([]);
      // The demo seed's load (`campus seed --demo`) changes data without events, like the demo school's.
      fake.script('mealServiceDietInfo', { kind: 'rows', rows: rows.filter((r) => r['MLSV_YMD'] !== '20260302') });
      expect(await emitted(() => sync.run({ ...window, trigger: 'seed', datasets: ['meals'] }))).to.deep.equal([]);
    } finally {
      await fake.close();
    }
  });

  it('a student moving clubs updates both clubs; before and after are the REST shapes; the ids are the commit order', async () => {
    // A member who leads no club (a leader is listed apart from the participants).
    const leaders = (await db.models.clubs.find().lean()).map((c) => c.leaderId);
    const student = (await db.models.students.find({ majorClubId: { $ne: null } }).lean()).find((s) => !leaders.includes(s._id));
    const from = student?.majorClubId ?? 0;
    const to = (await db.models.clubs.findOne({ _id: { $ne: from }, type: 'MAJOR_CLUB' }).lean())?._id ?? 0;
    const found = await emitted(() => new SchoolWriter(db, ADMIN, clock).updateStudent(student?._id ?? 0, { majorClubId: to }));
    expect(found.map((e) => e.type)).to.deep.equal(['student.updated', 'club.updated', 'club.updated']);
    const clubId = (e: ChangeEvent) => (e.data as { before: { id: number } }).before.id;
    const moved = found[0] as ChangeEvent;
    const left = found.find((e) => e.type === 'club.updated' && clubId(e) === from) as ChangeEvent;
    const joined = found.find((e) => e.type === 'club.updated' && clubId(e) === to) as ChangeEvent;
    const shape = moved.data as { before: { majorClub: { id: number } }; after: { majorClub: { id: number } } };
    expect(Object.keys(shape.after)).to.deep.equal(STUDENT_RECORD_FIELDS);
    expect([shape.before.majorClub.id, shape.after.majorClub.id]).to.deep.equal([from, to]);
    const ids = (e: ChangeEvent, side: 'before' | 'after') =>
      (e.data as Record<string, { participants: { id: number }[] }>)[side]?.participants.map((p) => p.id) ?? [];
    expect(ids(left, 'before')).to.include(student?._id);
    expect(ids(left, 'after')).not.to.include(student?._id);
    expect(ids(joined, 'after')).to.include(student?._id);
    // The participants are the summaries REST shows inside a club.
    expect(Object.keys((joined.data as { after: { participants: object[] } }).after.participants[0] ?? {})).to.deep.equal([
      'id',
      'name',
      'email',
      'studentNumber',
      'major',
      'sex',
    ]);
    expect(found.map((e) => Number(e.id))).to.deep.equal([1, 2, 3].map((n) => Number(moved.id) - 1 + n));
  });

  it('a batch that never settled leaves no events: recovery removes them, and the feed never served them', async () => {
    const writer = new SchoolWriter(db, ADMIN, clock);
    await writer.updateStudent(1, { name: '하나' });
    const committed = await lastSequence(db);
    // A writer that died after writing its events, before its batch settled.
    const first = await takeSequence(db, 2);
    const one = normalizeStudent((await db.models.students.findById(1).lean()) ?? buildStudent({ _id: 1 }));
    const batchId = await journalBatch(
      db,
      {
        actor: CLI_ACTOR,
        action: 'UPDATE',
        summary: 'died',
        changes: [{ entity: 'STUDENT', id: 1, before: one, after: { ...one, name: '죽음' } }],
      },
      now,
      { eventFirst: first, eventLast: first + 1 },
    );
    const planned = {
      type: 'student.updated' as const,
      at: now,
      actorKind: 'CLI' as const,
      actorId: null,
      batchId,
      data: '{"before":null,"after":null}',
    };
    await writeEvents(db, [planned, planned], first);
    expect(await events(db).countDocuments({ batchId })).to.equal(2);
    // The feed settles first: the dead writer's batch is rolled back with its events.
    const page = await readChanges(db, { after: String(committed), limit: 10, subscriber: ALL });
    expect(page.events).to.deep.equal([]);
    expect(await events(db).countDocuments({ batchId })).to.equal(0);
    expect((await db.models.auditBatches.findById(batchId).lean())?.status).to.equal('ROLLED_BACK');
    await settleSchool(db);
    // The numbers it took are not given again: the next event follows them.
    const next = await emitted(() => writer.updateStudent(1, { name: '둘' }));
    expect(Number(next[0]?.id)).to.equal(first + 2);
  });

  it('the feed resumes exactly from any cursor, filters by scope, and answers 410 past its retention', async () => {
    const writer = new SchoolWriter(db, ADMIN, clock);
    for (let i = 0; i < 4; i++) await writer.updateStudent(1, { name: `이름${i}` });
    await writer.updateClub(2, { name: 'Club Two Renamed' });
    await writer.updateProject(1, { name: 'Project Renamed' });
    const whole = await readAll(db, '0');
    expect(whole.length).to.be.greaterThan(6);
    // Pages of 2 concatenate to the whole; from any event's id, exactly the events after it.
    expect(await readAll(db, '0', 2)).to.deep.equal(whole);
    for (const [i, event] of whole.entries()) expect(await readAll(db, event.id, 3)).to.deep.equal(whole.slice(i + 1));
    // The last page's cursor stays put until something newer commits.
    const end = await readChanges(db, { after: whole.at(-1)?.id ?? '', limit: 5, subscriber: ALL });
    expect(end).to.deep.equal({ events: [], nextCursor: whole.at(-1)?.id });

    // CLUB_READ only: the club events (and no student or project one); the cursor still moves past the others.
    const clubsOnly = await readChanges(db, { after: '0', limit: 1000, subscriber: only('CLUB_READ') });
    expect(clubsOnly.events.length).to.be.greaterThan(0);
    expect(clubsOnly.events.every((e) => e.type.startsWith('club.'))).to.equal(true);
    expect(clubsOnly.nextCursor).to.equal(whole.at(-1)?.id);
    const studentsOnly = await readChanges(db, { after: '0', limit: 1000, subscriber: only('STUDENT_READ') });
    // Four renames, and the members of the renamed club (their majorClub summary changed).
    const members = await db.models.students.countDocuments({ $or: [{ majorClubId: 2 }, { autonomousClubId: 2 }] });
    expect(studentsOnly.events.length).to.equal(4 + members);
    expect(studentsOnly.events.every((e) => e.type === 'student.updated')).to.equal(true);

    // Malformed parameters are 400 naming them.
    for (const after of ['-1', 'abc', '1.5', '01']) {
      const refused = await readChanges(db, { after, limit: 1, subscriber: ALL }).catch((e: unknown) => e);
      expect(refused, after).to.be.instanceOf(BadRequestError);
      expect((refused as Error).message).to.match(/^after: /);
    }
    const future = await readChanges(db, { after: '999999', limit: 1, subscriber: ALL }).catch((e: unknown) => e);
    expect((future as Error).message).to.equal(`after: cursor 999999 names no event yet (the newest is ${whole.at(-1)?.id}).`);
    for (const limit of [0, 1001]) {
      const refused = await readChanges(db, { after: null, limit, subscriber: ALL }).catch((e: unknown) => e);
      expect((refused as Error).message).to.equal('limit: must be an integer from 1 to 1000.');
    }

    // 31 days later a commit prunes them: an old cursor is 410, none starts at the oldest kept.
    const later = new Date(now.getTime() + 31 * 24 * 3600 * 1000);
    await new SchoolWriter(db, ADMIN, { timeZone: 'Asia/Seoul', now: () => later }).updateStudent(1, { name: '한달뒤' });
    expect(await pruneEvents(db, later)).to.equal(0);
    const gone = await readChanges(db, { after: '3', limit: 1, subscriber: ALL }).catch((e: unknown) => e);
    expect(gone).to.be.instanceOf(CursorExpiredError);
    expect((gone as CursorExpiredError).status).to.equal(410);
    expect((gone as Error).message).to.match(/^after: cursor 3 is older than the 30 days of events the feed keeps/);
    const fresh = await readChanges(db, { after: null, limit: 1000, subscriber: ALL });
    // The rename and the clubs whose participant summary it changed.
    expect(fresh.events.length).to.be.greaterThan(0);
    expect(fresh.events.every((e) => e.time === later.toISOString())).to.equal(true);
    expect(Number(fresh.events[0]?.id)).to.equal(Number(whole.at(-1)?.id) + 1);
    // The last pruned event's id still resumes (nothing after it is gone).
    expect((await readChanges(db, { after: whole.at(-1)?.id ?? '', limit: 1000, subscriber: ALL })).events).to.deep.equal(fresh.events);
  });
});
