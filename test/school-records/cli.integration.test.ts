import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { openDatabase, type Database } from '../../src/data/database.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { runCampus } from '../helpers/cli.js';
import { testDatabaseUri } from '../helpers/database.js';

/**
 * `campus import` and `campus export` (src/cli/commands/import.ts, export.ts) as a person runs
 * them: a preview by default that exits 1 when a row is refused, --apply all or nothing with the
 * CLI as the audit log's actor, --remove-missing, --json, and export files that import back
 * unchanged.
 */

const campus = (uri: string, ...args: string[]) => runCampus({ MONGODB_URI: uri }, args);

const HEADER = '학생명,학번,이메일,성별,소속,호실,전공동아리';
const GOOD = ['김새봄,2117,spring@gsm.hs.kr,여자,일반학생,318,Quokka', '이여름,2118,summer@gsm.hs.kr,남자,일반학생,,Quokka'];

describe('school records: campus import and export', function () {
  this.timeout(120000);
  let uri: string;
  let db: Database;
  let dir: string;
  const file = (name: string, lines: string[]) => {
    const path = join(dir, name);
    writeFileSync(path, lines.join('\r\n'));
    return path;
  };

  before(async () => {
    uri = testDatabaseUri('school_cli');
    db = await openDatabase(uri);
    await seedDemoSchool(db);
    dir = mkdtempSync(join(tmpdir(), 'school-cli-'));
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await db.connection.dropDatabase();
    await db.close();
  });

  it('previews by default: exit 1 naming each refused row and cell; nothing written', async () => {
    const bad = file('bad.csv', [
      HEADER,
      GOOD[0] ?? '',
      '이여름,21x8,summer@gsm.hs.kr,남자,일반학생,,Quokka',
      '박가을,2417,autumn@gsm.hs.kr,여자,일반학생,,없는 동아리',
    ]);
    const preview = await campus(uri, 'import', 'students', bad);
    expect(preview.code, preview.stderr).to.equal(1);
    const lines = preview.stdout.trim().split('\n');
    expect(lines[0]).to.equal('bad.csv: 3 rows; 1 to create, 0 to update, 0 unchanged, 0 to remove, 2 refused.');
    expect(lines[1]).to.equal(
      "  row 3, column 학번 ('21x8'): 학번: must be a four-digit student number (grade, class, two-digit number), e.g. 1101 (got '21x8')",
    );
    expect(lines[2]).to.equal("  row 4, column 전공동아리 ('없는 동아리'): 전공동아리: no club is '없는 동아리'");
    expect(lines.at(-1)).to.equal('Refused: fix the file, then import it with --apply.');
    // --apply with a refused row writes nothing either.
    const applied = await campus(uri, 'import', 'students', bad, '--apply');
    expect(applied.code).to.equal(1);
    expect(applied.stdout.trim().split('\n').at(-1)).to.equal('Nothing was written: fix the file and run again.');
    expect(await db.models.students.countDocuments({ email: 'spring@gsm.hs.kr' })).to.equal(0);
    expect(await db.models.auditBatches.countDocuments()).to.equal(0);
  });

  it('--json gives every issue with its place and its message in both languages', async () => {
    const bad = file('bad.csv', [HEADER, '이여름,21x8,summer@gsm.hs.kr,남자,일반학생,,Quokka']);
    const result = await campus(uri, 'import', 'students', bad, '--json');
    expect(result.code).to.equal(1);
    const body = JSON.parse(result.stdout) as { counts: Record<string, number>; issues: Record<string, unknown>[] };
    expect(body.counts).to.deep.equal({ created: 0, updated: 0, unchanged: 0, removed: 0, refused: 1 });
    expect(body.issues).to.deep.equal([
      {
        sheet: null,
        row: 2,
        column: '학번',
        value: '21x8',
        field: 'studentNumber',
        code: 'STUDENT_NUMBER',
        params: { got: '21x8' },
        message: "학번: must be a four-digit student number (grade, class, two-digit number), e.g. 1101 (got '21x8')",
        messageKo: "학번: 학년·반·두 자리 번호로 된 네 자리 학번이어야 합니다, 예: 1101 (입력: '21x8')",
      },
    ]);
  });

  it('--apply writes the fixed file with the CLI as the actor', async () => {
    const good = file('good.csv', [HEADER, ...GOOD]);
    const result = await campus(uri, 'import', 'students', good, '--apply');
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.match(/^good\.csv: 2 rows; 2 to create, 0 to update, 0 unchanged, 0 to remove, 0 refused\.\n/);
    expect(result.stdout.trim().split('\n').at(-1)).to.match(/^Applied \(audit batch [0-9a-f-]+\)\.$/);
    // The apply's progress goes to stderr, the answer stays alone on stdout.
    expect(result.stderr).to.equal('applying: 2 of 2 records written\n');
    expect(await db.models.students.findOne({ email: 'spring@gsm.hs.kr' }).lean()).to.include({ studentNumber: 2117, dormitoryRoom: 318 });
    const batch = await db.models.auditBatches.findOne({ source: 'good.csv' }).lean();
    expect(batch).to.include({ action: 'IMPORT', actorKind: 'CLI', status: 'APPLIED', records: 2 });
  });

  // Both formats for each kind are checked at the data layer (test/school-records/import.integration.test.ts);
  // here the command line's own path, one file per kind.
  it('export --out imports back unchanged: students.xlsx, clubs.csv, projects.xlsx', async () => {
    for (const name of ['students.xlsx', 'clubs.csv', 'projects.xlsx']) {
      const kind = name.split('.')[0] ?? '';
      const out = join(dir, name);
      const exported = await campus(uri, 'export', kind, '--out', out, '--include-graduates');
      expect(exported.code, exported.stderr).to.equal(0);
      const rows = Number(/^Wrote (\d+) /.exec(exported.stdout)?.[1]);
      expect(exported.stdout.trim()).to.equal(`Wrote ${rows} ${kind} to ${out}.`);
      const back = await campus(uri, 'import', kind, out, '--json');
      expect(back.code, back.stdout.slice(0, 500)).to.equal(0);
      expect((JSON.parse(back.stdout) as { counts: unknown }).counts).to.deep.equal({
        created: 0,
        updated: 0,
        unchanged: rows,
        removed: 0,
        refused: 0,
      });
    }
  });

  it('refuses a wrong kind, a missing file and an --out that is not .xlsx or .csv', async () => {
    const kind = await campus(uri, 'import', 'pupils', join(dir, 'x.csv'));
    expect([kind.code, kind.stderr.trim()]).to.deep.equal([1, "campus: The kind must be one of students, clubs, projects (got 'pupils')."]);
    const missing = await campus(uri, 'import', 'students', join(dir, 'nothing.csv'));
    expect([missing.code, missing.stderr.trim()]).to.deep.equal([1, `campus: Cannot read ${join(dir, 'nothing.csv')}: no such file.`]);
    const out = await campus(uri, 'export', 'students', '--out', join(dir, 'students.xls'));
    expect([out.code, out.stderr.trim()]).to.deep.equal([
      1,
      `campus: --out must end in .xlsx or .csv (got '${join(dir, 'students.xls')}').`,
    ]);
  });

  it('--remove-missing removes the enrolled students the file leaves out, only with --apply', async () => {
    const grade1 = await db.models.students.find({ grade: 1 }).sort({ _id: 1 }).lean();
    const others = await db.models.students.countDocuments({ grade: { $in: [2, 3] } });
    const keep = file('grade1.csv', ['이메일', ...grade1.map((s) => s.email)]);
    const preview = await campus(uri, 'import', 'students', keep, '--remove-missing');
    expect(preview.code).to.equal(0);
    // The clubs and projects of the removed students change with them (leaders, participants).
    expect(preview.stdout.split('\n')[0]).to.match(
      new RegExp(
        `^grade1\\.csv: ${grade1.length} rows; 0 to create, \\d+ to update, ${grade1.length} unchanged, ${others} to remove, 0 refused\\.$`,
      ),
    );
    expect(await db.models.students.countDocuments({ grade: { $in: [2, 3] } })).to.equal(others);
    const applied = await campus(uri, 'import', 'students', keep, '--remove-missing', '--apply');
    expect(applied.code, applied.stderr).to.equal(0);
    expect(await db.models.students.countDocuments({ grade: { $in: [2, 3] } })).to.equal(0);
    expect(await db.models.students.countDocuments({ grade: 1 })).to.equal(grade1.length);
  });
});
