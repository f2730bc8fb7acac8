import { openDatabase, type Database } from '../src/data/database.js';
import { exportSchoolData } from '../src/data/school/export.js';
import { applyImport } from '../src/data/school/import.js';
import { applyRollover } from '../src/data/school/rollover.js';
import { CLI_ACTOR } from '../src/data/school/types.js';
import { isEnrolledRole, type StudentDoc } from '../src/data/models/student.model.js';
import { seedDemoSchool } from '../src/data/school/demo.js';
import { benchDatabase } from './lib.js';

/** The school: 1,000 student records, every one of the 216 seats taken. */
const STUDENTS = 1000;
/** Three grades of four classes of 18. */
const SEATS = 216;
/** The target: each apply within this many seconds over SQLite. */
const TARGET_SECONDS = 10;
const OPTIONS = { timeZone: 'Asia/Seoul', now: new Date('2026-03-02T09:00:00+09:00') };

/**
 * School writes in seconds: a 1,000-row import that changes every student record, and
 * the school-year rollover of a full school (216 enrolled students move or graduate), each applied
 * through the one write path (src/data/school/engine.ts: journal, records, settle). With
 * BENCH_PROFILE=1 it also prints where the time went, per database command.
 */
export async function runSchoolBench(): Promise<boolean> {
  const database = await benchDatabase('bench-school');
  const profile = process.env['BENCH_PROFILE'] === '1';
  const db = await openDatabase(database.uri, { backendIndexes: database.indexer, monitorCommands: profile });
  const commands = new Map<string, { count: number; ms: number }>();
  if (profile) {
    const started = new Map<number, string>();
    db.client.on('commandStarted', (e) => {
      const target = (e.command as Record<string, unknown>)[e.commandName];
      const n = ['updates', 'documents', 'deletes']
        .map((k) => (e.command as Record<string, unknown[]>)[k]?.length)
        .find((x) => x !== undefined);
      started.set(e.requestId, `${e.commandName} ${String(target)}${n === undefined ? '' : ` x${n}`}`);
    });
    db.client.on('commandSucceeded', (e) => {
      const key = started.get(e.requestId) ?? e.commandName;
      const c = commands.get(key) ?? { count: 0, ms: 0 };
      c.count++;
      c.ms += e.duration;
      commands.set(key, c);
    });
  }
  try {
    await db.connection.dropDatabase();
    await db.ensureIndexes();
    // The demo school of N records (its alumni grow with N) leaves some seats free: fewer alumni, then fill them.
    await seedDemoSchool(db, { students: STUDENTS });
    const free = SEATS - (await db.models.students.countDocuments({ role: { $nin: ['GRADUATE', 'WITHDRAWN'] } }));
    await seedDemoSchool(db, { students: STUDENTS - free });
    await fillSeats(db);
    const all = await db.models.students.find({}).lean<StudentDoc[]>();
    const enrolled = all.filter((s) => isEnrolledRole(s.role));
    if (all.length !== STUDENTS || enrolled.length !== SEATS)
      throw new Error(`the bench school has ${all.length} records, ${enrolled.length} seats taken`);

    // Every record's 전문분야 (specialty) changes: 1,000 updates in one batch.
    const changed = await everySpecialtyChanged(db, 'bench');
    const importSeconds = await timed(profile, commands, 'import', async () => {
      const result = await applyImport(db, CLI_ACTOR, 'STUDENT', 'bench.csv', Buffer.from(changed), OPTIONS);
      if (!result.applied) throw new Error(`the bench import was refused: ${JSON.stringify(result.issues.slice(0, 3))}`);
      return result.counts.updated;
    });

    // Everyone keeps their class and number: grade 3 graduates, grades 1 and 2 move up.
    const moving = enrolled.filter((s) => (s.grade ?? 3) < 3);
    const rollover = [
      '학번,새 학번',
      ...moving.map((s) => `${s.studentNumber},${((s.grade ?? 0) + 1) * 1000 + (s.classNum ?? 0) * 100 + (s.number ?? 0)}`),
    ].join('\r\n');
    const rolloverSeconds = await timed(profile, commands, 'rollover', async () => {
      const result = await applyRollover(db, CLI_ACTOR, 'rollover.csv', Buffer.from(rollover), OPTIONS);
      if (!result.applied) throw new Error(`the bench rollover was refused: ${JSON.stringify(result.issues.slice(0, 3))}`);
      return result.counts.updated;
    });

    console.log(
      `\nSchool writes (${STUDENTS.toLocaleString('en')} student records, ${enrolled.length} of 216 seats taken; seconds, one run each)`,
    );
    let ok = true;
    for (const [label, seconds] of [
      [`import apply, ${STUDENTS.toLocaleString('en')} rows (every record updated)`, importSeconds],
      [`rollover apply, full school (${enrolled.length} enrolled)`, rolloverSeconds],
    ] as const) {
      const met = seconds <= TARGET_SECONDS;
      ok &&= met;
      console.log(`  ${label.padEnd(52)} ${seconds.toFixed(2).padStart(7)} s   (target <= ${TARGET_SECONDS} s: ${met ? 'met' : 'MISSED'})`);
    }
    return ok;
  } finally {
    await db.close();
    await database.stop();
  }
}

/**
 * Fills every free seat of the demo school with a new student (through an import, untimed): the
 * demo school of N records leaves some seats free; the bench's full school has none.
 */
async function fillSeats(db: Database): Promise<void> {
  const taken = new Set(
    (await db.models.students.find({}).lean<StudentDoc[]>()).filter((s) => isEnrolledRole(s.role)).map((s) => s.studentNumber),
  );
  const rows: string[] = [];
  for (let grade = 1; grade <= 3; grade++)
    for (let classNum = 1; classNum <= 4; classNum++)
      for (let number = 1; number <= 18; number++) {
        const seat = grade * 1000 + classNum * 100 + number;
        if (!taken.has(seat)) rows.push(`벤치${seat},${seat},bench${seat}@gsm.hs.kr,남자,일반학생`);
      }
  const added = await applyImport(
    db,
    CLI_ACTOR,
    'STUDENT',
    'seats.csv',
    Buffer.from(['학생명,학번,이메일,성별,소속', ...rows].join('\r\n')),
    OPTIONS,
  );
  if (!added.applied) throw new Error(`filling the free seats was refused: ${JSON.stringify(added.issues.slice(0, 3))}`);
}

async function timed(
  profile: boolean,
  commands: Map<string, { count: number; ms: number }>,
  label: string,
  work: () => Promise<number>,
): Promise<number> {
  commands.clear();
  const started = performance.now();
  const records = await work();
  const seconds = (performance.now() - started) / 1000;
  if (profile) {
    console.log(`\n${label}: ${records} records in ${seconds.toFixed(2)} s; database commands:`);
    for (const [name, c] of [...commands].sort((a, b) => b[1].ms - a[1].ms)) {
      console.log(`  ${name.padEnd(20)} ${String(c.count).padStart(6)}  ${(c.ms / 1000).toFixed(2).padStart(7)} s`);
    }
  }
  return seconds;
}

/** The school's students exported as CSV with every record's 전문분야 (specialty) set to `<tag> <n>`: an import that updates them all. */
export async function everySpecialtyChanged(db: Database, tag: string): Promise<string> {
  const exported = await exportSchoolData(db, 'STUDENT', 'csv', { ...OPTIONS, includeGraduates: true });
  const lines = exported.content
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .filter(Boolean);
  const header = parseCsvLine(lines[0] ?? '');
  const column = header.indexOf('전문분야');
  if (column < 0) throw new Error(`no 전문분야 column in ${header.join(',')}`);
  return [
    lines[0] ?? '',
    ...lines.slice(1).map((line, i) => {
      const cells = parseCsvLine(line);
      cells[column] = `${tag} ${i}`;
      return cells.map(csvCell).join(',');
    }),
  ].join('\r\n');
}

export function parseCsvLine(line: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      cells.push(cell);
      cell = '';
    } else cell += ch;
  }
  cells.push(cell);
  return cells;
}

export function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export type { Database };
