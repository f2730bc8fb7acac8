import { expect } from 'chai';
import ExcelJS from 'exceljs';
import type { Database } from '../../src/data/database.js';
import { withSchoolLock } from '../../src/data/school/engine.js';
import { exportSchoolData } from '../../src/data/school/export.js';
import { applyImport, commitPlan, planImport, previewImport } from '../../src/data/school/import.js';
import { issueMessage } from '../../src/data/school/messages.js';
import { applyRollover, previewRollover } from '../../src/data/school/rollover.js';
import { FILE_LIMITS } from '../../src/data/school/spreadsheet.js';
import { SchoolState } from '../../src/data/school/state.js';
import { undoBatch } from '../../src/data/school/audit.js';
import { CLI_ACTOR, type LocatedIssue, type PreviewResult } from '../../src/data/school/types.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { createTestDatabase } from '../helpers/database.js';

/**
 * Spreadsheet import and export (src/data/school/import.ts, export.ts, rollover.ts) against the
 * real database with the demo school: every import error kind with its row and column, the
 * all-or-nothing application, --remove-missing, the original system's workbook, round trips,
 * formulas and escaping, and the school-year rollover with its undo.
 */

type Cell = string | number | null | { formula: string; result?: number | string };

async function xlsx(sheets: { name: string; rows: Cell[][] }[]): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  for (const sheet of sheets) {
    const ws = workbook.addWorksheet(sheet.name);
    for (const row of sheet.rows) ws.addRow(row);
  }
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

const csv = (rows: string[][]) =>
  Buffer.from(rows.map((r) => r.map((c) => (/[",\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(',')).join('\r\n'));

const HEADER = ['학생명', '학번', '이메일', '성별', '학과', '소속', '호실', '전공동아리'];
/** A new student row in a seat the demo school leaves free (classes 2-1 and 2-4 have 16 students). */
const row = (n: number, seat: number, extra: Partial<Record<'club' | 'room' | 'sex', string | number>> = {}): Cell[] => [
  `학생${n}`,
  seat,
  `new${n}@gsm.hs.kr`,
  extra.sex ?? '여자',
  'SW개발과',
  '일반학생',
  extra.room ?? null,
  extra.club ?? 'Quokka',
];

const where = (issues: readonly LocatedIssue[]) => issues.map((i) => `${i.sheet ?? ''}!${i.row ?? '-'} ${i.column ?? '-'} ${i.code}`);

describe('school records: spreadsheet import and export', function () {
  this.timeout(120000);
  let db: Database & { drop(): Promise<void> };
  const now = new Date('2026-03-02T09:00:00+09:00');
  const options = { timeZone: 'Asia/Seoul', now };
  const preview = (entity: 'STUDENT' | 'CLUB' | 'PROJECT', bytes: Buffer, removeMissing = false) =>
    previewImport(db, entity, 'file.xlsx', bytes, { ...options, removeMissing });
  const snapshot = async () => ({
    students: await db.models.students.find().sort({ _id: 1 }).lean(),
    clubs: await db.models.clubs.find().sort({ _id: 1 }).lean(),
    projects: await db.models.projects.find().sort({ _id: 1 }).lean(),
  });

  beforeEach(async () => {
    db = await createTestDatabase('school_import');
    await seedDemoSchool(db);
  });
  afterEach(async () => {
    await db.drop();
  });

  it('previews without writing: per row what is created; applying writes it with an audit batch', async () => {
    const file = await xlsx([{ name: '학생', rows: [HEADER, row(1, 2117, { room: 318 }), row(2, 2118)] }]);
    const before = await snapshot();
    const version = (await db.versions.readFresh()).data;
    const result = await preview('STUDENT', file);
    expect(result.issues).to.deep.equal([]);
    expect(result.counts).to.deep.equal({ created: 2, updated: 0, unchanged: 0, removed: 0, refused: 0 });
    expect(result.changes.map((c) => [c.row, c.operation, c.label])).to.deep.equal([
      [2, 'CREATE', '학생1 (2117)'],
      [3, 'CREATE', '학생2 (2118)'],
    ]);
    expect(await snapshot()).to.deep.equal(before);
    expect((await db.versions.readFresh()).data).to.equal(version);

    const applied = await applyImport(db, CLI_ACTOR, 'STUDENT', 'students.xlsx', file, options);
    expect(applied.applied).to.equal(true);
    const created = await db.models.students.findOne({ email: 'new1@gsm.hs.kr' }).lean();
    expect(created).to.include({
      name: '학생1',
      grade: 2,
      classNum: 1,
      number: 17,
      studentNumber: 2117,
      major: 'SW_DEVELOPMENT',
      sex: 'WOMAN',
      dormitoryRoom: 318,
      dormitoryFloor: 3,
      majorClubId: 1,
    });
    expect((await db.versions.readFresh()).data).not.to.equal(version);
    const batch = await db.models.auditBatches.findById(applied.batchId).lean();
    expect(batch).to.include({ action: 'IMPORT', actorKind: 'CLI', status: 'APPLIED', records: 2, source: 'students.xlsx' });
  });

  describe('each import error kind, with its row and column', () => {
    it('a bad header: unknown column, repeated column, no column to match rows on', async () => {
      const unknown = await preview('STUDENT', await xlsx([{ name: '학생', rows: [[...HEADER, '혈액형'], row(1, 2117)] }]));
      expect(where(unknown.issues)).to.deep.equal(['학생!1 혈액형 HEADER_UNKNOWN']);
      expect(issueMessage(unknown.issues[0] as LocatedIssue, 'en', '혈액형')).to.match(
        /^혈액형: unknown column '혈액형'; the columns are: ID, 학생명, 학번, 이메일/,
      );
      const twice = await preview('STUDENT', await xlsx([{ name: '학생', rows: [[...HEADER, 'Email'], row(1, 2117)] }]));
      expect(where(twice.issues)).to.deep.equal(['학생!1 Email HEADER_DUPLICATE']);
      const unmatched = await preview(
        'STUDENT',
        await xlsx([
          {
            name: '학생',
            rows: [
              ['학생명', '학번'],
              ['가', 2117],
            ],
          },
        ]),
      );
      expect(where(unmatched.issues)).to.deep.equal(['학생!1 - HEADER_MISSING']);
      expect(issueMessage(unmatched.issues[0] as LocatedIssue, 'en')).to.equal('a column is missing: the file needs ID / 이메일');
    });

    it('English headers are accepted in any case and spacing', async () => {
      const english = ['Name', 'Student Number', 'EMAIL', 'sex', 'major', 'role', 'dormitory_room', 'Major club'];
      const result = await preview(
        'STUDENT',
        await xlsx([
          { name: 'Students', rows: [english, ['Kim', 2117, 'kim@gsm.hs.kr', 'WOMAN', 'AI', 'GENERAL_STUDENT', null, 'Spark']] },
        ]),
      );
      expect(result.issues).to.deep.equal([]);
      expect(result.changes[0]?.fields.find((f) => f.field === 'major')?.after).to.equal('AI');
    });

    it('a bad value names the row, the column, the value and why', async () => {
      const file = await xlsx([
        { name: '학생', rows: [HEADER, row(1, 2117, { sex: '외계인' }), row(2, 2118, { room: '많음' }), row(3, 2417, { room: 519 })] },
      ]);
      const result = await preview('STUDENT', file);
      expect(where(result.issues)).to.deep.equal(['학생!2 성별 ONE_OF', '학생!3 호실 NOT_INTEGER', '학생!4 호실 RANGE']);
      expect(result.issues.map((i) => i.value)).to.deep.equal(['외계인', '많음', '519']);
      expect(issueMessage(result.issues[0] as LocatedIssue, 'ko', '성별')).to.equal("성별: 남자, 여자 중 하나여야 합니다 (입력: '외계인')");
      expect(result.counts.refused).to.equal(3);
    });

    it('a duplicate in the file points at the first row', async () => {
      const file = await xlsx([{ name: '학생', rows: [HEADER, row(1, 2117), row(1, 2118)] }]);
      const result = await preview('STUDENT', file);
      expect(where(result.issues)).to.deep.equal(['학생!3 이메일 DUPLICATE_IN_FILE']);
      expect(issueMessage(result.issues[0] as LocatedIssue, 'en', '이메일')).to.equal(
        "이메일: 'new1@gsm.hs.kr' is also in row 학생!2 of this file",
      );
      // The same student twice in one file also when it is an existing one (matched by email).
      const existing = await db.models.students.findById(1).lean();
      const twice = await preview(
        'STUDENT',
        await xlsx([
          {
            name: '학생',
            rows: [
              ['이메일', '학생명'],
              [existing?.email ?? '', 'A'],
              [existing?.email ?? '', 'B'],
            ],
          },
        ]),
      );
      expect(where(twice.issues)).to.deep.equal(['학생!3 이메일 DUPLICATE_IN_FILE']);
    });

    it('an unknown club (and one of the wrong type)', async () => {
      const file = await xlsx([
        { name: '학생', rows: [HEADER, row(1, 2117, { club: '없는 동아리' }), row(2, 2118, { club: '밴드부 소리' })] },
      ]);
      const result = await preview('STUDENT', file);
      expect(where(result.issues)).to.deep.equal(['학생!2 전공동아리 UNKNOWN_CLUB', '학생!3 전공동아리 CLUB_TYPE']);
    });

    it('a seat taken (by the data or by another row) and an unknown ID', async () => {
      const file = await xlsx([
        {
          name: '학생',
          rows: [
            ['ID', ...HEADER],
            [null, ...row(1, 1101)],
            [9999, ...row(2, 2118)],
          ],
        },
      ]);
      const result = await preview('STUDENT', file);
      expect(where(result.issues)).to.deep.equal(['학생!2 학번 SEAT_TAKEN', '학생!3 ID UNKNOWN_ID']);
    });

    it('a file too large is refused before it is read', async () => {
      const big = Buffer.alloc(FILE_LIMITS.maxBytes + 1, 0x41);
      const result = await preview('STUDENT', big);
      expect(where(result.issues)).to.deep.equal(['!- - TOO_LARGE']);
      expect(issueMessage(result.issues[0] as LocatedIssue, 'en')).to.equal('the file is too large: 5 MB (at most 5 MB)');
    });

    it('more than 20,000 rows are refused', async () => {
      const lines = [['이메일', '학생명'], ...Array.from({ length: FILE_LIMITS.maxRows + 1 }, (_, i) => [`x${i}@a.kr`, 'x'])];
      const result = await preview('STUDENT', csv(lines));
      expect(where(result.issues)).to.deep.equal(['!- - TOO_MANY_ROWS']);
      expect(issueMessage(result.issues[0] as LocatedIssue, 'en')).to.equal('the file has too many rows: 20001 (at most 20000)');
    });

    it('not a spreadsheet, whatever the name says: an image, a ZIP that is not a workbook, an old .xls, an empty file', async () => {
      const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
      expect(where((await preview('STUDENT', png)).issues)).to.deep.equal(['!- - NOT_SPREADSHEET']);
      const docx = await new ExcelJS.Workbook().xlsx
        .writeBuffer()
        .then((b) => Buffer.from(b).toString('binary').replaceAll('xl/workbook.xml', 'xx/notebook.xml'));
      expect(where((await preview('STUDENT', Buffer.from(docx, 'binary'))).issues)).to.deep.equal(['!- - NOT_SPREADSHEET']);
      const xls = Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(512)]);
      expect(where((await preview('STUDENT', xls)).issues)).to.deep.equal(['!- - OLD_EXCEL']);
      expect(where((await preview('STUDENT', Buffer.alloc(0))).issues)).to.deep.equal(['!- - EMPTY_FILE']);
    });

    it('a formula is read as its saved result, never evaluated; one without a saved result is refused', async () => {
      const file = await xlsx([
        {
          name: '학생',
          rows: [
            HEADER,
            [...row(1, 2117).slice(0, 6), { formula: '300+18', result: 318 }, 'Quokka'],
            [...row(2, 2118).slice(0, 6), { formula: '300+19' }, 'Quokka'],
          ],
        },
      ]);
      const result = await preview('STUDENT', file);
      expect(where(result.issues)).to.deep.equal(['학생!3 호실 FORMULA_NO_RESULT']);
      expect(issueMessage(result.issues[0] as LocatedIssue, 'en', '호실')).to.include(
        '=300+19 without a saved result; formulas are never evaluated',
      );
      const clean = await preview(
        'STUDENT',
        await xlsx([{ name: '학생', rows: [HEADER, [...row(1, 2117).slice(0, 6), { formula: 'A1', result: 318 }, 'Quokka']] }]),
      );
      expect(clean.changes[0]?.fields.find((f) => f.field === 'dormitoryRoom')?.after).to.equal(318);
    });

    it('a CSV written by Korean Excel (CP949) is read', async () => {
      const text = ['이메일,학생명', `${(await db.models.students.findById(1).lean())?.email ?? ''},홍길동`].join('\r\n');
      const cp949 = Buffer.from(new Uint8Array([...new TextEncoder().encode('')]));
      // Node has no CP949 encoder; build the bytes from the known code points of these characters.
      const bytes = encodeCp949(text);
      expect(cp949.length).to.equal(0);
      const result = await preview('STUDENT', bytes);
      expect(result.issues).to.deep.equal([]);
      expect(result.changes[0]?.fields).to.deep.equal([{ field: 'name', before: '홍건우', after: '홍길동' }]);
    });
  });

  it('applies all or nothing: a problem in the last row changes nothing', async () => {
    const rows = [HEADER, ...[2117, 2118, 2417].map((seat, i) => row(i + 1, seat)), row(4, 2418, { club: '없는 동아리' })];
    const before = await snapshot();
    const result = await applyImport(db, CLI_ACTOR, 'STUDENT', 'students.xlsx', await xlsx([{ name: '학생', rows }]), options);
    expect(result.applied).to.equal(false);
    expect(where(result.issues)).to.deep.equal(['학생!5 전공동아리 UNKNOWN_CLUB']);
    expect(await snapshot()).to.deep.equal(before);
    expect(await db.models.auditBatches.countDocuments()).to.equal(0);
  });

  it('applies all or nothing: a write refused by the database in the last row undoes the others', async () => {
    const rows = [HEADER, row(1, 2117), row(2, 2118), row(3, 2417)];
    const file = await xlsx([{ name: '학생', rows }]);
    const plan = await planImport(await SchoolState.load(db), 'STUDENT', 'students.xlsx', file, options);
    expect(plan.preview.issues).to.deep.equal([]);
    // Another program takes the last row's email between the plan and the write.
    await db.models.students.collection.insertOne({
      ...(await db.models.students.findById(1).lean()),
      _id: 5000,
      email: 'new3@gsm.hs.kr',
    } as never);
    const before = await snapshot();
    const version = (await db.versions.readFresh()).data;
    let error: unknown;
    await withSchoolLock(db, (lease) => commitPlan(db, lease, CLI_ACTOR, plan, 'IMPORT', now)).catch((err: unknown) => (error = err));
    expect((error as { status?: number }).status).to.equal(409);
    expect((error as Error).message).to.match(
      /^The change was not applied: a record clashed with one written meanwhile.*nothing changed\.$/,
    );
    expect(await snapshot()).to.deep.equal(before);
    const batch = await db.models.auditBatches.findOne().lean();
    expect(batch).to.include({ status: 'ROLLED_BACK', records: 3 });
    expect(await db.models.auditEntries.countDocuments({ status: 'ROLLED_BACK' })).to.equal(3);
    expect((await db.versions.readFresh()).data).not.to.equal(version);
  });

  it('--remove-missing removes the enrolled students the file leaves out (and only then); graduates stay', async () => {
    const keep = await db.models.students.find({ grade: 1 }).sort({ _id: 1 }).lean();
    const file = await xlsx([{ name: '학생', rows: [['이메일'], ...keep.map((s) => [s.email])] }]);
    const without = await preview('STUDENT', file);
    expect(without.counts).to.include({ removed: 0, unchanged: keep.length });
    const enrolledOthers = await db.models.students.countDocuments({ grade: { $in: [2, 3] } });
    const withFlag = await applyImport(db, CLI_ACTOR, 'STUDENT', 'grade1.xlsx', file, { ...options, removeMissing: true });
    expect(withFlag.counts).to.include({ removed: enrolledOthers, unchanged: keep.length });
    expect(withFlag.changes.filter((c) => c.operation === 'DELETE' && c.entity === 'STUDENT')).to.have.length(enrolledOthers);
    expect(await db.models.students.countDocuments({ grade: { $in: [2, 3] } })).to.equal(0);
    expect(await db.models.students.countDocuments({ role: { $in: ['GRADUATE', 'WITHDRAWN'] } })).to.equal(24);
    // Removed students leave the projects they were in.
    const projects = await db.models.projects.find().lean();
    const remaining = new Set((await db.models.students.find().lean()).map((s) => s._id));
    expect(projects.every((p) => p.participantIds.every((id) => remaining.has(id)))).to.equal(true);
  });

  it("reads the original system's workbook (sheets 1학년, 2학년, 3학년) as it is", async () => {
    const columns = ['학생명', '학번', '이메일', '학과', '전공동아리', '창체동아리', '호실', '소속', '성별'];
    const file = await xlsx([
      { name: '1학년', rows: [columns, ['김하나', '1318', 'one@gsm.hs.kr', '인공지능과', 'Quokka', '', 301, '기숙사자치위원회', '여자']] },
      { name: '2학년', rows: [columns, ['이둘', '2117', 'two@gsm.hs.kr', 'SW개발과', '', '밴드부 소리', '', '학생회', '남자']] },
      { name: '3학년', rows: [columns, ['박셋', '2118', 'three@gsm.hs.kr', 'SW개발과', '', '', '', '일반학생', '남자']] },
    ]);
    const refused = await preview('STUDENT', file);
    // 3학년 holds a grade-2 number: said with the sheet and row.
    expect(where(refused.issues)).to.deep.equal(['3학년!2 학번 SHEET_GRADE']);
    const fixed = await xlsx([
      { name: '1학년', rows: [columns, ['김하나', '1318', 'one@gsm.hs.kr', '인공지능과', 'Quokka', '', 301, '기숙사자치위원회', '여자']] },
      { name: '2학년', rows: [columns, ['이둘', '2117', 'two@gsm.hs.kr', 'SW개발과', '', '밴드부 소리', '', '학생회', '남자']] },
      { name: '3학년', rows: [columns] },
    ]);
    const applied = await applyImport(db, CLI_ACTOR, 'STUDENT', 'original.xlsx', fixed, options);
    expect(applied.issues).to.deep.equal([]);
    expect(await db.models.students.findOne({ email: 'one@gsm.hs.kr' }).lean()).to.include({
      studentNumber: 1318,
      major: 'AI',
      role: 'DORMITORY_MANAGER',
      sex: 'WOMAN',
      dormitoryRoom: 301,
      majorClubId: 1,
    });
    expect(await db.models.students.findOne({ email: 'two@gsm.hs.kr' }).lean()).to.include({
      role: 'STUDENT_COUNCIL',
      autonomousClubId: 101,
    });
    // Its later columns: 자퇴 여부 O withdraws; 취업동아리 must stay empty.
    const later = await preview(
      'STUDENT',
      await xlsx([
        {
          name: '1학년',
          rows: [
            ['이메일', '자퇴 여부', '취업동아리'],
            ['one@gsm.hs.kr', 'O', ''],
          ],
        },
      ]),
    );
    expect(later.changes[0]?.fields.find((f) => f.field === 'role')).to.deep.equal({
      field: 'role',
      before: 'DORMITORY_MANAGER',
      after: 'WITHDRAWN',
    });
    const jobs = await preview(
      'STUDENT',
      await xlsx([
        {
          name: '1학년',
          rows: [
            ['이메일', '취업동아리'],
            ['one@gsm.hs.kr', 'IT반'],
          ],
        },
      ]),
    );
    expect(where(jobs.issues)).to.deep.equal(['1학년!2 취업동아리 JOB_CLUB']);
  });

  for (const format of ['xlsx', 'csv'] as const) {
    it(`export then import reads back unchanged (${format}), for students, clubs and projects`, async () => {
      for (const entity of ['STUDENT', 'CLUB', 'PROJECT'] as const) {
        const file = await exportSchoolData(db, entity, format, { ...options, includeGraduates: true });
        const result = await previewImport(db, entity, file.fileName, file.content, options);
        expect(result.issues, entity).to.deep.equal([]);
        expect(result.counts, entity).to.deep.equal({ created: 0, updated: 0, unchanged: file.rows, removed: 0, refused: 0 });
      }
    });
  }

  it('exports text a spreadsheet would run as a formula escaped, and imports it back as it was', async () => {
    await db.models.projects.updateOne({ _id: 1 }, { $set: { description: '=HYPERLINK("http://evil.example","click")' } });
    await db.models.projects.updateOne({ _id: 2 }, { $set: { description: '+82 10-1234', name: '@home' } });
    const file = await exportSchoolData(db, 'PROJECT', 'csv', options);
    const text = file.content.toString('utf8');
    expect(text.startsWith('\uFEFF')).to.equal(true);
    expect(text).to.include(`"'=HYPERLINK(""http://evil.example"",""click"")"`);
    expect(text).to.include("'@home,'+82 10-1234");
    const back = await previewImport(db, 'PROJECT', file.fileName, file.content, options);
    expect(back.counts).to.include({ updated: 0, created: 0 });
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load((await exportSchoolData(db, 'PROJECT', 'xlsx', options)).content as never);
    const cells = workbook.worksheets[0]?.getColumn(3).values ?? [];
    expect(cells).to.include(`'=HYPERLINK("http://evil.example","click")`);
    expect(cells.every((c) => typeof c !== 'object' || c === null)).to.equal(true);
  });

  it('matches rows by ID, else by name (clubs): an ID renames, a name updates, a new name creates', async () => {
    const file = await xlsx([
      {
        name: '동아리',
        rows: [
          ['ID', '동아리명', '종류', '부장', '부원'],
          [1, 'Quokka Lab', '전공동아리', null, null],
          [null, 'Spark', '전공동아리', '2101', null],
          [null, '새 동아리', '창체동아리', null, null],
        ],
      },
    ]);
    const result = await applyImport(db, CLI_ACTOR, 'CLUB', 'clubs.xlsx', file, options);
    expect(result.issues).to.deep.equal([]);
    expect((await db.models.clubs.findById(1).lean())?.name).to.equal('Quokka Lab');
    const spark = await db.models.clubs.findOne({ name: 'Spark' }).lean();
    const leader = await db.models.students.findOne({ studentNumber: 2101 }).lean();
    expect(spark?.leaderId).to.equal(leader?._id);
    expect(await db.models.clubs.findOne({ name: '새 동아리' }).lean()).to.include({ _id: 109, type: 'AUTONOMOUS_CLUB', status: 'ACTIVE' });
    // The members column of a club file moves students; unlisted members leave.
    const members = await xlsx([
      {
        name: '동아리',
        rows: [
          ['동아리명', '부원'],
          ['새 동아리', `${leader?.email ?? ''}, 1101`],
        ],
      },
    ]);
    const moved = await applyImport(db, CLI_ACTOR, 'CLUB', 'members.xlsx', members, options);
    expect(moved.issues).to.deep.equal([]);
    expect((await db.models.students.find({ autonomousClubId: 109 }).lean()).map((s) => s.studentNumber).sort()).to.deep.equal([
      1101, 2101,
    ]);
  });

  it('projects: participants by email or student number, the end-year rules per row', async () => {
    const file = await xlsx([
      {
        name: '프로젝트',
        rows: [
          ['프로젝트명', '동아리', '참여자', '시작연도', '종료연도', '상태'],
          ['급식 봇', 'Quokka', '1101\n1102', 2025, 2026, '종료'],
          ['빈 해', null, null, 2025, null, '종료'],
          ['거꾸로', null, null, 2025, 2024, '종료'],
        ],
      },
    ]);
    const result = await preview('PROJECT', file);
    expect(where(result.issues)).to.deep.equal(['프로젝트!3 종료연도 END_YEAR_REQUIRED', '프로젝트!4 종료연도 END_BEFORE_START']);
    expect(result.changes.find((c) => c.row === 2)?.fields.find((f) => f.field === 'participantIds')?.after).to.deep.equal([
      'hong1@gsm.hs.kr',
      'ryu2@gsm.hs.kr',
    ]);
  });

  describe('the school-year rollover', () => {
    const rollover = async (rows: Cell[][]) => xlsx([{ name: '새 학년', rows: [['학번', '새 반', '새 번호'], ...rows] }]);

    it('graduates grade 3, moves grades 1 and 2 up with the classes of the file, keeps the others', async () => {
      const before = await snapshot();
      const file = await rollover([
        ['1101', 2, 1],
        ['1201', 1, 1],
      ]);
      const result = await previewRollover(db, 'rollover.xlsx', file);
      expect(result.issues).to.deep.equal([]);
      expect(await snapshot()).to.deep.equal(before);
      const applied = await applyRollover(db, CLI_ACTOR, 'rollover.xlsx', file, { now });
      expect(applied.applied).to.equal(true);
      const byId = new Map(before.students.map((s) => [s._id, s]));
      const after = await db.models.students.find().lean();
      for (const s of after) {
        const was = byId.get(s._id);
        if (!was || was.grade == null) continue;
        if (was.grade === 3)
          expect(s, `#${s._id}`).to.include({ role: 'GRADUATE', grade: null, studentNumber: null, majorClubId: null, dormitoryRoom: null });
        else expect(s.grade, `#${s._id}`).to.equal(was.grade + 1);
      }
      expect(after.find((s) => s._id === 1)).to.include({ studentNumber: 2201, grade: 2, classNum: 2, number: 1 });
      expect(after.find((s) => s.email === byId.get(19)?.email)).to.include({ studentNumber: 2101 });
      // Clubs led by graduates lose their leader.
      const leaders = new Set((await db.models.clubs.find().lean()).map((c) => c.leaderId).filter((id) => id !== null));
      expect(after.filter((s) => leaders.has(s._id) && s.role === 'GRADUATE' && byId.get(s._id)?.role !== 'GRADUATE')).to.deep.equal([]);
      const batch = await db.models.auditBatches.findById(applied.batchId).lean();
      expect(batch).to.include({ action: 'ROLLOVER', status: 'APPLIED' });

      // Undone from the audit log's before-images: everything as it was.
      const undone = await undoBatch(db, CLI_ACTOR, applied.batchId ?? '', now);
      expect(undone.issues).to.deep.equal([]);
      expect(await snapshot()).to.deep.equal(before);
      expect(await db.models.auditBatches.findById(applied.batchId).lean()).to.include({ status: 'UNDONE', undoneBy: undone.batchId });
    });

    it('reports seats taken after the move, rows for students who do not move, wrong grades and unknown students', async () => {
      const file = await xlsx([
        {
          name: '새 학년',
          rows: [
            ['학번', '새 학번'],
            ['1101', '2102'],
            ['3101', '4101'],
            ['1102', '3101'],
            ['9999', '2101'],
          ],
        },
      ]);
      const result = await previewRollover(db, 'rollover.xlsx', file);
      // 1102's row is refused, so 1102 keeps class 1 number 2 and takes 2102 too: said of both.
      expect(where(result.issues)).to.deep.equal([
        '!- - SEAT_TAKEN',
        '새 학년!2 새 학번 SEAT_TAKEN',
        '새 학년!3 학번 ROLLOVER_NOT_MOVING',
        '새 학년!4 새 학번 ROLLOVER_GRADE',
        '새 학년!5 학번 UNKNOWN_STUDENT',
      ]);
    });

    it('an undo is refused when a record changed after the change', async () => {
      const applied = await applyRollover(
        db,
        CLI_ACTOR,
        'r.xlsx',
        await rollover([
          ['1101', 2, 1],
          ['1201', 1, 1],
        ]),
        { now },
      );
      expect(applied.issues).to.deep.equal([]);
      await db.models.students.updateOne({ _id: 1 }, { $set: { name: '바뀜' } });
      const undone = await undoBatch(db, CLI_ACTOR, applied.batchId ?? '', now);
      expect(undone.batchId).to.equal(null);
      expect(undone.issues.map((i) => i.code)).to.deep.equal(['CHANGED_SINCE']);
      expect(issueMessage(undone.issues[0] ?? { field: '', code: 'REQUIRED' }, 'en')).to.match(
        /^record: .* \(#1\) changed after this change, so it cannot be undone$/,
      );
    });
  });
});

/** Encodes text as CP949 (EUC-KR) through Node's decoder: every two-byte code is searched once. */
function encodeCp949(text: string): Buffer {
  const decoder = new TextDecoder('euc-kr');
  const table = new Map<string, number[]>();
  for (let lead = 0x81; lead <= 0xfe; lead++) {
    for (let trail = 0x41; trail <= 0xfe; trail++) {
      const ch = decoder.decode(new Uint8Array([lead, trail]));
      if (ch.length === 1 && !table.has(ch)) table.set(ch, [lead, trail]);
    }
  }
  const bytes: number[] = [];
  for (const ch of text) bytes.push(...(ch.charCodeAt(0) < 0x80 ? [ch.charCodeAt(0)] : (table.get(ch) ?? [0x3f])));
  return Buffer.from(bytes);
}

export type { PreviewResult };
