import type { Major } from '../__generated__/enums.js';
import type { Database } from '../database.js';
import { isEnrolledRole, type StudentDoc } from '../models/student.model.js';
import { enumColumn, idColumn, integerColumn, readMajor, textColumn, type CellProblem, type Column } from './columns.js';
import { readSettled, withSchoolLock } from './engine.js';
import {
  commitPlan,
  describePlan,
  parseFile,
  placeIssue,
  type ApplyProgress,
  type ImportPlan,
  type ParsedRow,
  type RowRef,
} from './import.js';
import { putStudent, retireStudent, type StudentPatch } from './operations.js';
import { studentLabel, validateState } from './rules.js';
import { SchoolState } from './state.js';
import type { Actor, Issue, LocatedIssue, PreviewResult } from './types.js';

/*
 * The school-year rollover: grade 3 graduates (src/data/school/operations.ts retireStudent:
 * class, clubs and dormitory cleared, club leadership ended), grades 1 and 2 move up, and each
 * moving student's new class and number come from an uploaded file (a student the file does not
 * list keeps their class and number). Previewed like an import, applied all or nothing, and
 * undoable from the audit log's before-images (src/data/school/audit.ts).
 */

/** A rollover row: who (ID, email or current student number) and where they go. */
interface RolloverRow {
  email?: string | null;
  currentNumber?: number | null;
  name?: string | null;
  newGrade?: number | null;
  newClassNum?: number | null;
  newNumber?: number | null;
  major?: Major | null;
  dormitoryRoom?: number | null;
}

function fourDigits(
  fields: (keyof RolloverRow & string)[],
  header: string,
  aliases: string[],
  set: (row: RolloverRow, n: number) => void,
): Column<RolloverRow, unknown> {
  return {
    fields,
    header,
    aliases,
    exported: true,
    read(text, draft): CellProblem | undefined {
      if (text === null) return undefined;
      const trimmed = text.trim().replace(/\.0+$/, '');
      if (!/^\d{4}$/.test(trimmed)) return { code: 'STUDENT_NUMBER', params: { got: text } };
      set(draft.patch, Number(trimmed));
      return undefined;
    },
    write: () => null,
  };
}

/** The rollover file's columns. */
export const ROLLOVER_COLUMNS: readonly Column<RolloverRow, unknown>[] = [
  idColumn<RolloverRow, { _id: number }>() as Column<RolloverRow, unknown>,
  textColumn<RolloverRow, unknown>('email', '이메일', ['email', 'e-mail', '메일'], () => null),
  textColumn<RolloverRow, unknown>('name', '학생명', ['이름', '성명', 'name'], () => null),
  fourDigits(['currentNumber'], '학번', ['student number', '현재 학번', 'current student number'], (row, n) => (row.currentNumber = n)),
  fourDigits(['newGrade', 'newClassNum', 'newNumber'], '새 학번', ['new student number', '신학번'], (row, n) => {
    row.newGrade = Math.floor(n / 1000);
    row.newClassNum = Math.floor(n / 100) % 10;
    row.newNumber = n % 100;
  }),
  integerColumn<RolloverRow, unknown>('newClassNum', '새 반', ['new class', '반', 'class'], () => null),
  integerColumn<RolloverRow, unknown>('newNumber', '새 번호', ['new number', '번호', 'number'], () => null),
  enumColumn<RolloverRow, unknown, Major>('major', '학과', ['major', 'department'], readMajor, () => null),
  integerColumn<RolloverRow, unknown>('dormitoryRoom', '호실', ['dormitory room', 'room'], () => null, /^(\d+)\s*호?$/),
];

export interface RolloverOptions {
  readonly now: Date;
  readonly onProgress?: ApplyProgress;
}

/** Plans the rollover on `state` (which it changes); nothing is written. */
export async function planRollover(state: SchoolState, fileName: string, bytes: Buffer): Promise<ImportPlan> {
  const parsed = await parseFile(bytes, ROLLOVER_COLUMNS, state, [
    [['id'], ['email'], ['currentNumber']],
    [['newGrade'], ['newClassNum', 'newNumber']],
  ]);
  const issues: LocatedIssue[] = [...parsed.issues];
  const placed = new Map<number, ParsedRow<RolloverRow>>();
  for (const row of parsed.rows) {
    if (row.issues.length > 0) {
      issues.push(...row.issues);
      continue;
    }
    const found = findStudent(state, row);
    if ('issue' in found) {
      issues.push(placeIssue(found.issue, row as ParsedRow<object>, null));
      continue;
    }
    const first = placed.get(found.student._id);
    if (first) {
      issues.push(
        placeIssue(
          { field: found.field, code: 'DUPLICATE_IN_FILE', params: { value: found.value, first: rowName(first) } },
          row as ParsedRow<object>,
          null,
        ),
      );
      continue;
    }
    const problem = movingProblem(found.student, row.draft.patch, found.field);
    if (problem) {
      issues.push(placeIssue(problem, row as ParsedRow<object>, null));
      continue;
    }
    placed.set(found.student._id, row);
  }

  const rowOf = new Map<string, RowRef>();
  const outcome = new Map<ParsedRow<object>, { id: number; existed: boolean }>();
  for (const student of [...state.all('STUDENT')].sort((a, b) => a._id - b._id)) {
    if (!isEnrolledRole(student.role) || student.grade == null) continue;
    if (student.grade >= 3) {
      retireStudent(state, student._id, 'GRADUATE');
      continue;
    }
    const row = placed.get(student._id);
    const move = row?.draft.patch ?? {};
    const patch: StudentPatch = {
      grade: student.grade + 1,
      classNum: move.newClassNum ?? student.classNum,
      number: move.newNumber ?? student.number,
    };
    if (move.major) patch.major = move.major;
    if (row && row.columns.some((c) => c.fields.includes('dormitoryRoom'))) patch.dormitoryRoom = move.dormitoryRoom ?? null;
    const step = putStudent(state, student._id, patch);
    if (step.issues.length > 0)
      issues.push(...step.issues.map((issue) => placeIssue(moved(issue), row as ParsedRow<object> | undefined, studentLabel(student))));
    if (row) {
      rowOf.set(`STUDENT:${student._id}`, row);
      outcome.set(row as ParsedRow<object>, { id: student._id, existed: true });
    }
  }
  for (const problem of validateState(state)) {
    const row = rowOf.get(`${problem.entity}:${problem.id}`) as ParsedRow<object> | undefined;
    const doc = state.get(problem.entity, problem.id);
    const label = doc && problem.entity === 'STUDENT' ? studentLabel(doc as StudentDoc) : (doc?.name ?? `#${problem.id}`);
    issues.push(placeIssue(moved(problem.issue), row, row ? null : label));
  }
  const preview = describePlan(
    state,
    'STUDENT',
    fileName,
    parsed.dataRows,
    issues,
    parsed.rows as ParsedRow<object>[],
    outcome,
    rowOf,
    false,
  );
  return { preview, state };
}

/** A problem of the new class or number belongs to the file's new-class columns. */
function moved(issue: Issue): Issue {
  const map: Record<string, string> = { classNum: 'newClassNum', number: 'newNumber', grade: 'newGrade', studentNumber: 'newNumber' };
  const field = map[issue.field];
  return field ? { ...issue, field } : issue;
}

function findStudent(
  state: SchoolState,
  row: ParsedRow<RolloverRow>,
): { student: StudentDoc; field: string; value: string } | { issue: Issue } {
  const { draft } = row;
  const look = (ids: number[], field: string, value: string) => {
    const [id] = ids;
    const student = id === undefined ? undefined : state.get('STUDENT', id);
    if (!student) return { issue: { field, code: 'UNKNOWN_STUDENT' as const, params: { ref: value } } };
    if (ids.length > 1) return { issue: { field, code: 'AMBIGUOUS_STUDENT' as const, params: { ref: value } } };
    return { student, field, value };
  };
  if (draft.id !== null) return look(state.get('STUDENT', draft.id) ? [draft.id] : [], 'id', String(draft.id));
  const email = draft.patch.email?.trim();
  if (email) return look(state.studentsByEmail(email), 'email', email);
  const n = draft.patch.currentNumber;
  if (n != null) return look(state.studentsBySeat(Math.floor(n / 1000), Math.floor(n / 100) % 10, n % 100), 'currentNumber', String(n));
  return { issue: { field: 'id', code: 'REQUIRED' } };
}

/** Only enrolled grade 1 and 2 students move; a new student number must be in the next grade. */
function movingProblem(student: StudentDoc, row: RolloverRow, field: string): Issue | undefined {
  if (!isEnrolledRole(student.role) || student.grade == null || student.grade >= 3) {
    const state =
      student.role === 'GRADUATE'
        ? { stateKo: '졸업생', stateEn: 'a graduate' }
        : student.role === 'WITHDRAWN'
          ? { stateKo: '자퇴생', stateEn: 'withdrawn' }
          : { stateKo: '3학년(졸업 예정)', stateEn: 'in grade 3 (graduating)' };
    return { field, code: 'ROLLOVER_NOT_MOVING', params: { student: studentLabel(student), ...state } };
  }
  if (row.newGrade != null && row.newGrade !== student.grade + 1) {
    return { field: 'newGrade', code: 'ROLLOVER_GRADE', params: { expected: student.grade + 1, got: row.newGrade } };
  }
  return undefined;
}

function rowName(row: RowRef): string {
  return row.sheet ? `${row.sheet}!${row.row}` : String(row.row);
}

/** A dry run against the data as it is now. */
export async function previewRollover(db: Database, fileName: string, bytes: Buffer): Promise<PreviewResult> {
  return (await planRollover(await readSettled(db, () => SchoolState.load(db)), fileName, bytes)).preview;
}

/** Plans the rollover again under the write lock and applies it all, or nothing when it has issues. */
export async function applyRollover(
  db: Database,
  actor: Actor,
  fileName: string,
  bytes: Buffer,
  options: RolloverOptions,
): Promise<PreviewResult> {
  return withSchoolLock(db, async (lease) => {
    const plan = await planRollover(await SchoolState.load(db), fileName, bytes);
    return commitPlan(db, lease, actor, plan, 'ROLLOVER', options.now, options.onProgress);
  });
}
