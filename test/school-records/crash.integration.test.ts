import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import { openDatabase, type Database } from '../../src/data/database.js';
import { freePort } from '../../src/data/platform/embedded/index.js';
import type { AuditBatchDoc } from '../../src/data/models/audit.model.js';
import type { StudentDoc } from '../../src/data/models/student.model.js';
import { Lease } from '../../src/data/platform/lease.js';
import { exportSchoolData } from '../../src/data/school/export.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import type { TestApp } from '../helpers/app.js';
import { runCampus, startCampus, type RunningCampus } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/database.js';
import { issueKey } from '../helpers/factories.js';
import { createAccount, signInToConsole } from '../helpers/oauth.js';

/*
 * Crashes for real: `kill -9` of the importing `campus import`, of `campus serve` during
 * a console rollover, and of the database during an apply, each at several points of the apply
 * (CAMPUS_TEST_PAUSE_AFTER makes the writer stop after N records: src/data/school/engine.ts).
 * After each, a restarted service answers the school as it was before the batch or as it is
 * after it, never a mix; no two enrolled students share a student number; the audit log shows the
 * batch as interrupted and rolled back, by whom; and the next import succeeds within 10 s. And a
 * writer that does not die but freezes (SIGSTOP) past its lease, and wakes after another took the
 * lease over: it commits nothing (docs/school-writes.md, "The write lease and its fencing token").
 */

const STUDENTS = 1000;
/**
 * The target: the next import succeeds within 10 s of the crash. What a crash used to cost is the
 * dead writer's lock (60 s) and a slow recovery (minutes); both are checked against this bound:
 * the interrupted batch is rolled back (by whoever gets there first) within 10 s of the kill.
 * The import itself takes 1 to 2 s on an idle machine (docs/benchmarks.md), but a starting
 * `campus` process on a 2-core machine shared with other work can take several seconds more, so
 * the whole command is held to the looser COMMAND_MS (its time is printed).
 */
const NEXT_IMPORT_MS = 10_000;
const COMMAND_MS = 20_000;
const CAMPUS = 'bin/campus.js';

/** A `campus` process started with the pause hook, stopped at its point. */
async function startPaused(env: Record<string, string>, args: string[], point: number): Promise<ChildProcessWithoutNullStreams> {
  const child = spawn(process.execPath, [CAMPUS, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', CAMPUS_TEST_PAUSE_AFTER: String(point), ...env },
  });
  await pausedAt(child, point);
  return child;
}

/** Resolves once `child` says it paused after `point` records (or fails when it exits first). */
function pausedAt(child: ChildProcessWithoutNullStreams, point: number, timeoutMs = 90_000): Promise<void> {
  return new Promise((done, fail) => {
    let stderr = '';
    const timer = setTimeout(() => fail(new Error(`no pause after ${point} records within ${timeoutMs} ms: ${stderr}`)), timeoutMs);
    createInterface({ input: child.stderr }).on('line', (line) => {
      stderr += `${line}\n`;
      if (line.startsWith(`CAMPUS_TEST_PAUSE_AFTER: paused after ${point} records`)) {
        clearTimeout(timer);
        done();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`exited with ${code} before pausing: ${stderr}`));
    });
  });
}

async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  process.kill(child.pid ?? 0, 'SIGKILL');
  await exited;
}

/** Polls `check` until it returns a value (not undefined), at most `ms`. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms (${String(last)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Served {
  readonly url: string;
  readonly process: RunningCampus;
}

async function serve(env: Record<string, string>): Promise<Served> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const process = await startCampus(
    { HOST: '127.0.0.1', PORT: String(port), AUTH_URL: origin, USERINFO_URL: origin, BASE_URL: origin, NEIS_SYNC_ENABLED: 'false', ...env },
    ['serve', '--json'],
  );
  return { url: (JSON.parse(process.firstLine) as { url: string }).url, process };
}

/** Every student record the data API serves (graduates and withdrawn ones included). */
async function servedStudents(url: string, key: string): Promise<StudentDoc[]> {
  const res = await fetch(`${url}/v1/students?includeGraduates=true&includeWithdrawn=true&size=1000`, { headers: { 'X-API-KEY': key } });
  const body = (await res.json()) as { data?: { students: StudentDoc[] } };
  if (res.status !== 200 || !body.data) throw new Error(`GET /v1/students: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body.data.students.map((s) => ({ ...s, _id: (s as unknown as { id: number }).id }));
}

function duplicateStudentNumbers(students: readonly StudentDoc[]): number[] {
  const seen = new Set<number>();
  const twice: number[] = [];
  for (const s of students) {
    if (s.role === 'GRADUATE' || s.role === 'WITHDRAWN' || s.studentNumber == null) continue;
    if (seen.has(s.studentNumber)) twice.push(s.studentNumber);
    seen.add(s.studentNumber);
  }
  return twice;
}

/** Which school `students` is, by each record's 전문분야 tag: 'old', 'new', or 'mixed' (the failure). */
function whichSchool(students: readonly StudentDoc[], oldTag: string, newTag: string): 'old' | 'new' | 'mixed' {
  const tags = new Set(
    students.map((s) => (s.specialty?.startsWith(`${newTag} `) ? 'new' : s.specialty?.startsWith(`${oldTag} `) ? 'old' : '?')),
  );
  if (tags.size === 1 && !tags.has('?')) return [...tags][0] as 'old' | 'new';
  return 'mixed';
}

/** A file updating every one of the school's records: 전문분야 set to `${tag} ${row}`. */
function specialtyFile(exported: string, tag: string): string {
  const lines = exported
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .filter(Boolean);
  const header = (lines[0] ?? '').split(',');
  const column = header.indexOf('전문분야');
  if (column < 0) throw new Error(`no 전문분야 column: ${lines[0]}`);
  return [
    lines[0],
    ...lines.slice(1).map((line, i) => {
      // The demo school's cells hold no commas or quotes (names, emails, numbers, labels).
      const cells = line.split(',');
      cells[column] = `${tag} ${i}`;
      return cells.join(',');
    }),
  ].join('\r\n');
}

async function interruptedBatch(db: Database, source: string, since: Date): Promise<AuditBatchDoc> {
  return eventually('the interrupted batch', async () => {
    const batch = await db.models.auditBatches.findOne({ source, interrupted: true, at: { $gte: since } }).lean<AuditBatchDoc>();
    return batch ?? undefined;
  });
}

describe('school records: writes survive kill -9', function () {
  this.timeout(600_000);
  let db: Database & { readonly uri: string; drop(): Promise<void> };
  let key: string;
  let dir: string;
  let exported: string;

  before(async () => {
    db = await createTestDatabase('school_crash');
    await seedDemoSchool(db, { students: STUDENTS });
    key = await issueKey(db);
    dir = mkdtempSync(join(tmpdir(), 'school-crash-'));
    const file = await exportSchoolData(db, 'STUDENT', 'csv', { includeGraduates: true, timeZone: 'Asia/Seoul', now: new Date() });
    exported = file.content.toString('utf8');
    expect(file.rows).to.equal(STUDENTS);
    // The school starts as the "v0" school: every record tagged.
    const first = join(dir, 'v0.csv');
    writeFileSync(first, specialtyFile(exported, 'v0'));
    const applied = await runCampus({ MONGODB_URI: db.uri }, ['import', 'students', first, '--apply']);
    expect(applied.code, applied.stderr).to.equal(0);
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await db?.drop();
  });

  it('kill -9 of `campus import --apply` after 0, 440 and 1,000 of 1,000 records: the restarted service serves the old school, the audit says interrupted and rolled back, the next import succeeds within 10 s', async () => {
    let current = 'v0';
    for (const point of [0, 440, 1000]) {
      const next = `crash${point}`;
      const path = join(dir, `${next}.csv`);
      writeFileSync(path, specialtyFile(exported, next));
      const started = new Date();
      const importer = await startPaused({ MONGODB_URI: db.uri }, ['import', 'students', path, '--apply'], point);
      await kill9(importer);
      const crashedAt = Date.now();

      const served = await serve({ MONGODB_URI: db.uri });
      try {
        // Start-up rolled the batch back before the service answered anything.
        const students = await servedStudents(served.url, key);
        expect(students).to.have.length(STUDENTS);
        expect(whichSchool(students, current, next), `after a kill at ${point}`).to.equal('old');
        expect(duplicateStudentNumbers(students)).to.deep.equal([]);
        const batch = await interruptedBatch(db, `${next}.csv`, started);
        // Here the restarted service rolls it back while it starts (which takes a few seconds on its own).
        expect((batch.recoveredAt?.getTime() ?? Infinity) - crashedAt, 'rolled back, from the crash').to.be.below(COMMAND_MS);
        expect(batch).to.include({ status: 'ROLLED_BACK', action: 'IMPORT', interrupted: true, records: STUDENTS });
        expect(batch.recoveredBy).to.match(/^campus serve at start-up \(pid \d+ on .+\)$/);
        expect(batch.recoveredAt).to.be.instanceOf(Date);

        // The same file again goes through: no lock of the dead writer in its way.
        const again = await runCampus({ MONGODB_URI: db.uri }, ['import', 'students', path, '--apply']);
        expect(again.code, again.stderr).to.equal(0);
        expect(Date.now() - crashedAt, 'the restart and the next import, from the crash').to.be.below(NEXT_IMPORT_MS + COMMAND_MS);
        const after = await eventually('the new school served', async () => {
          const now = await servedStudents(served.url, key);
          return whichSchool(now, current, next) === 'new' ? now : undefined;
        });
        expect(duplicateStudentNumbers(after)).to.deep.equal([]);
      } finally {
        await served.process.stop();
      }
      current = next;
    }
  });

  it('the next import right after a kill -9 recovers the batch itself and succeeds within 10 s; a service running meanwhile never serves a mix', async () => {
    const served = await serve({ MONGODB_URI: db.uri });
    try {
      const before = await servedStudents(served.url, key);
      const current = before[0]?.specialty?.split(' ')[0] ?? '';
      const next = 'rerun';
      const path = join(dir, `${next}.csv`);
      writeFileSync(path, specialtyFile(exported, next));
      const started = new Date();
      const importer = await startPaused({ MONGODB_URI: db.uri }, ['import', 'students', path, '--apply'], 500);
      // While the writer sits half-way, the running service still serves the whole old school.
      expect(whichSchool(await servedStudents(served.url, key), current, next)).to.equal('old');
      await kill9(importer);
      const crashedAt = Date.now();
      const again = await runCampus({ MONGODB_URI: db.uri }, ['import', 'students', path, '--apply']);
      expect(again.code, again.stderr).to.equal(0);
      const took = Date.now() - crashedAt;
      console.log(`      (the next import finished ${(took / 1000).toFixed(1)} s after the kill)`);
      expect(took, 'the next import, from the crash').to.be.below(COMMAND_MS);
      const batch = await interruptedBatch(db, `${next}.csv`, started);
      expect((batch.recoveredAt?.getTime() ?? Infinity) - crashedAt, 'rolled back, from the crash').to.be.below(NEXT_IMPORT_MS);
      expect(batch.recoveredBy).to.match(
        /^campus (import before its own change|serve before a read|serve in the background) \(pid \d+ on .+\)$/,
      );
      const after = await eventually('the new school served', async () => {
        const now = await servedStudents(served.url, key);
        return whichSchool(now, current, next) === 'new' ? now : undefined;
      });
      expect(after).to.have.length(STUDENTS);
    } finally {
      await served.process.stop();
    }
  });

  it('kill -9 of `campus serve` during a console rollover, at 0, 100 and all of its records: the restarted service serves the school before it, without a duplicate student number; the retried preview plans against it', async () => {
    const admin = { email: 'crash.admin@gsm.hs.kr', password: 'a long enough passphrase 42' };
    const adminId = await createAccount(db, admin.email, admin.password);
    await db.models.accounts.updateOne({ _id: adminId }, { $set: { role: 'ADMIN' } });
    const original = (await db.models.students.find({}).lean<StudentDoc[]>()).sort((a, b) => a._id - b._id);
    const enrolled = original.filter((s) => s.role !== 'GRADUATE' && s.role !== 'WITHDRAWN');
    // Everyone keeps class and number: grades 1 and 2 move up, grade 3 graduates.
    const rollover = [
      '학번,새 학번',
      ...enrolled
        .filter((s) => (s.grade ?? 3) < 3)
        .map((s) => `${s.studentNumber},${((s.grade ?? 0) + 1) * 1000 + (s.classNum ?? 0) * 100 + (s.number ?? 0)}`),
    ].join('\r\n');
    const gradeOf = (s: Pick<StudentDoc, 'role' | 'grade'>) => `${s.role}:${s.grade}`;
    const oldGrades = new Map(original.map((s) => [s._id, gradeOf(s)]));

    for (const point of [0, 100, enrolled.length]) {
      const started = new Date();
      const served = await serve({ MONGODB_URI: db.uri, CAMPUS_TEST_PAUSE_AFTER: String(point) });
      const session = await signInToConsole({ url: served.url } as TestApp, admin, '/admin');
      const csrf = await session.csrf();
      const form = new FormData();
      form.set('csrf', csrf);
      form.set('file', new Blob([rollover], { type: 'text/csv' }), 'rollover.csv');
      const previewed = await fetch(`${served.url}/admin/school-year`, {
        method: 'POST',
        headers: { cookie: session.jar.header(), origin: served.url },
        body: form,
        redirect: 'manual',
      });
      const previewHtml = await previewed.text();
      expect(previewed.status, previewHtml.slice(-800)).to.equal(200);
      const uploadId = /name="uploadId" value="([^"]+)"/.exec(previewHtml)?.[1];
      expect(uploadId, 'the preview offers to apply').to.be.a('string');
      const paused = pausedAt(served.process.child, point);
      // The apply is left in flight: the service is killed while it writes.
      void session.post('/admin/school-year/apply', { uploadId: uploadId ?? '' }, csrf).catch(() => {});
      await paused;
      await kill9(served.process.child);
      const crashedAt = Date.now();

      // The service comes back and the next import runs at once, both recovering if they get there first.
      const path = join(dir, `after-rollover-${point}.csv`);
      writeFileSync(path, specialtyFile(exported, `rollover${point}`));
      const [again, imported] = await Promise.all([
        serve({ MONGODB_URI: db.uri }),
        runCampus({ MONGODB_URI: db.uri }, ['import', 'students', path, '--apply']).then((result) => ({ ...result, at: Date.now() })),
      ]);
      try {
        expect(imported.code, imported.stderr).to.equal(0);
        expect(imported.at - crashedAt, 'the next import, from the crash').to.be.below(COMMAND_MS);
        const students = await servedStudents(again.url, key);
        const moved = students.filter((s) => gradeOf(s) !== oldGrades.get(s._id));
        expect(
          moved.map((s) => s._id),
          `records of the half-applied rollover served after a kill at ${point}`,
        ).to.deep.equal([]);
        expect(duplicateStudentNumbers(students)).to.deep.equal([]);
        const batch = await interruptedBatch(db, 'rollover.csv', started);
        expect((batch.recoveredAt?.getTime() ?? Infinity) - crashedAt, 'rolled back, from the crash').to.be.below(NEXT_IMPORT_MS);
        expect(batch).to.include({ status: 'ROLLED_BACK', action: 'ROLLOVER', interrupted: true });
        expect(batch.recoveredBy).to.match(/^campus (serve at start-up|import before its own change) \(pid \d+ on .+\)$/);

        // A retried preview plans against the recovered school: nothing refused.
        const retry = await signInToConsole({ url: again.url } as TestApp, admin, '/admin');
        // The console's audit log lists it at the top, with what became of it.
        const audit = await retry.get('/admin/audit?lang=en');
        expect(audit.res.status).to.equal(200);
        const item = new RegExp(`<li data-batch="${batch._id}">[\\s\\S]*?interrupted, and rolled back on [^<]*\\(campus [^<]*\\)`);
        expect(audit.html).to.match(item);
        const retryForm = new FormData();
        retryForm.set('csrf', await retry.csrf());
        retryForm.set('file', new Blob([rollover], { type: 'text/csv' }), 'rollover.csv');
        const retried = await fetch(`${again.url}/admin/school-year`, {
          method: 'POST',
          headers: { cookie: retry.jar.header(), origin: again.url },
          body: retryForm,
          redirect: 'manual',
        });
        const retriedHtml = await retried.text();
        expect(retried.status).to.equal(200);
        expect(retriedHtml).to.match(/name="uploadId" value="[^"]+"/);
      } finally {
        await again.process.stop();
      }
    }
  });

  it('a writer frozen past its lease (SIGSTOP at 440 of 1,000 records) is fenced out: the next import takes the lease over once it expires, rolls the frozen batch back and commits; the frozen writer, resumed, commits nothing and fails saying the lease was lost', async () => {
    const school = await db.models.students.find({}).lean<StudentDoc[]>();
    const current = school[0]?.specialty?.split(' ')[0] ?? '';
    const [frozenTag, takerTag] = ['frozen', 'taker'];
    const frozenPath = join(dir, `${frozenTag}.csv`);
    const takerPath = join(dir, `${takerTag}.csv`);
    writeFileSync(frozenPath, specialtyFile(exported, frozenTag));
    writeFileSync(takerPath, specialtyFile(exported, takerTag));
    const started = new Date();

    const frozen = await startPaused({ MONGODB_URI: db.uri }, ['import', 'students', frozenPath, '--apply'], 440);
    let frozenStderr = '';
    frozen.stderr.on('data', (c: Buffer) => (frozenStderr += c.toString()));
    const frozenExit = new Promise<number | null>((done) => frozen.once('exit', (code) => done(code)));
    // Frozen whole, as a stopped container or a long pause freezes it: it renews its lease no more.
    frozen.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, 200));
    const lease = await Lease.read(db.client.db(), 'school-write-lock');
    expect(lease?.token, 'the frozen writer holds the lease').to.be.a('number');
    try {
      // The next import waits out the lease (its holder's process exists, so it is not taken over at
      // once), rolls the frozen batch back, and applies its own file.
      const taker = await runCampus({ MONGODB_URI: db.uri }, ['import', 'students', takerPath, '--apply']);
      expect(taker.code, taker.stderr).to.equal(0);
      const batch = await interruptedBatch(db, `${frozenTag}.csv`, started);
      expect(batch).to.include({ status: 'ROLLED_BACK', action: 'IMPORT', interrupted: true, records: STUDENTS });
      expect(batch.recoveredBy).to.match(/^campus import before its own change \(pid \d+ on .+\)$/);
      expect(batch.recoveredAt?.getTime() ?? 0, 'taken over once the lease expired, not before').to.be.at.least(
        lease?.expiresAt.getTime() ?? Infinity,
      );
      expect(batch.fence, 'claimed by the new holder').to.be.above(lease?.token ?? Infinity);
    } finally {
      frozen.kill('SIGCONT');
    }

    // The frozen writer wakes up and goes on from record 440: the lease is no longer its own.
    frozen.kill('SIGUSR2');
    expect(await frozenExit).to.equal(1);
    expect(frozenStderr).to.include(
      'campus: The write lease was lost: this writer went longer than the lease lasts without renewing it (it stalled, or the database was away) and another process may hold it now, so the change was not committed. Try again.\n',
    );
    const students = await db.models.students.find({}).lean<StudentDoc[]>();
    expect(students).to.have.length(STUDENTS);
    expect(whichSchool(students, current, takerTag), "the taker's school, none of the frozen writer's records").to.equal('new');
    expect(students.filter((s) => s.specialty?.startsWith(`${frozenTag} `))).to.deep.equal([]);
    expect(duplicateStudentNumbers(students)).to.deep.equal([]);
    const batches = await db.models.auditBatches
      .find({ at: { $gte: started } }, { _id: 0, source: 1, status: 1, interrupted: 1 })
      .sort({ at: 1 })
      .lean();
    expect(batches).to.deep.equal([
      { source: `${frozenTag}.csv`, status: 'ROLLED_BACK', interrupted: true },
      { source: `${takerTag}.csv`, status: 'APPLIED', interrupted: false },
    ]);
    // Its audit entries say rolled back, every one (none says applied).
    const frozenBatch = (await interruptedBatch(db, `${frozenTag}.csv`, started))._id;
    expect(await db.models.auditEntries.countDocuments({ batchId: frozenBatch, status: 'ROLLED_BACK' })).to.equal(STUDENTS);
    expect(await db.models.auditEntries.countDocuments({ batchId: frozenBatch, status: { $ne: 'ROLLED_BACK' } })).to.equal(0);
    expect(await Lease.read(db.client.db(), 'school-write-lock'), 'no lease left behind').to.equal(null);
  });

  it('kill -9 of the database during an apply, at 440 and 1,000 records: `campus db` exits 1 saying so, the service answers 503, then recovers the batch and serves the old school; the next import succeeds within 10 s', async function () {
    if (process.env['MONGODB_URI']) this.skip();
    const dataDir = join(dir, 'own-db');
    const dbPort = await freePort();
    const dbEnv = { DATA_DIR: dataDir, EMBEDDED_DB_PORT: String(dbPort), FERRETDB_POSTGRESQL_URL: '' };
    const startDb = async () => {
      const running = await startCampus(dbEnv, ['db'], /^MONGODB_URI=/);
      return { running, uri: (running.lines.find((l) => l.startsWith('MONGODB_URI=')) ?? '').slice('MONGODB_URI='.length) };
    };
    let database = await startDb();
    const own = await openDatabase(database.uri);
    let served: Served | undefined;
    try {
      served = await serve({ MONGODB_URI: database.uri });
      await seedDemoSchool(own, { students: STUDENTS });
      const ownKey = await issueKey(own);
      let current = 'v0';
      const first = join(dir, 'own-v0.csv');
      writeFileSync(first, specialtyFile(exported, current));
      expect((await runCampus({ MONGODB_URI: database.uri }, ['import', 'students', first, '--apply'])).code).to.equal(0);

      for (const point of [440, 1000]) {
        const next = `dbcrash${point}`;
        const path = join(dir, `${next}.csv`);
        writeFileSync(path, specialtyFile(exported, next));
        const started = new Date();
        const importer = await startPaused({ MONGODB_URI: database.uri }, ['import', 'students', path, '--apply'], point);
        let importerStderr = '';
        importer.stderr.on('data', (c: Buffer) => (importerStderr += c.toString()));
        const importerExit = new Promise<number | null>((done) => importer.once('exit', (code) => done(code)));
        const ferret = JSON.parse(readFileSync(join(dataDir, 'embedded-db.json'), 'utf8')) as { pid: number };
        const dbExit = new Promise<number | null>((done) => database.running.child.once('exit', (code) => done(code)));
        process.kill(ferret.pid, 'SIGKILL');

        // `campus db` says the database died, and fails.
        expect(await dbExit).to.equal(1);
        expect(database.running.stderr()).to.match(/the embedded database \(ferretdb, pid \d+\) was killed \(SIGKILL\)/);
        // The service answers 503 while the database is away.
        await eventually('a 503 from the service', async () => {
          const res = await fetch(`${served?.url}/v1/students?size=1`, { headers: { 'X-API-KEY': ownKey } });
          await res.arrayBuffer();
          return res.status === 503 ? true : undefined;
        });
        // The writer goes on, finds its database gone, cannot undo either, and fails loudly.
        importer.kill('SIGUSR2');
        expect(await importerExit).to.equal(1);
        expect(importerStderr).to.match(/^campus: /m);

        database = await startDb();
        const restartedAt = Date.now();
        const students = await eventually('the service answering again', () => servedStudents(served?.url ?? '', ownKey));
        expect(whichSchool(students, current, next), `after the database died at ${point}`).to.equal('old');
        expect(duplicateStudentNumbers(students)).to.deep.equal([]);
        const batch = await interruptedBatch(own, `${next}.csv`, started);
        expect((batch.recoveredAt?.getTime() ?? Infinity) - restartedAt, 'rolled back, from the database being back').to.be.below(
          NEXT_IMPORT_MS,
        );
        expect(batch).to.include({ status: 'ROLLED_BACK', interrupted: true });
        expect(batch.recoveredBy).to.match(/^campus serve (before a read|in the background) \(pid \d+ on .+\)$/);
        const again = await runCampus({ MONGODB_URI: database.uri }, ['import', 'students', path, '--apply']);
        expect(again.code, again.stderr).to.equal(0);
        expect(Date.now() - restartedAt, 'the next import, from the database being back').to.be.below(COMMAND_MS);
        current = next;
      }
    } finally {
      await served?.process.stop();
      await own.close().catch(() => {});
      await database.running.stop();
    }
  });
});
