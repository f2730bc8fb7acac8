import { ClubStatus, ClubType, Major, ProjectStatus, Sex, StudentRole } from '../__generated__/enums.js';
import type { ClubDoc } from '../models/club.model.js';
import type { ProjectDoc } from '../models/project.model.js';
import type { StudentDoc } from '../models/student.model.js';
import { CLUB_STATUS_LABELS, CLUB_TYPE_LABELS, MAJOR_LABELS, PROJECT_STATUS_LABELS, ROLE_LABELS, SEX_LABELS } from './labels.js';
import type { ClubPatch, ProjectPatch, StudentPatch } from './operations.js';
import { studentRef } from './operations.js';
import type { OutCell } from './spreadsheet.js';
import type { SchoolState } from './state.js';
import type { IssueCode, SchoolEntity } from './types.js';

/*
 * The spreadsheet formats of students, clubs and projects: one column list per kind, read by
 * imports and written by exports, so that an export imports back unchanged. Headers are Korean
 * (the original system's: 학생명, 학번, 이메일, 학과, 전공동아리, 창체동아리, 호실, 소속, 성별) and
 * English names are accepted too, in any case and spacing. Values are written with their Korean
 * labels (SW개발과, 일반학생, 남자) and read in either language or as the API's enum names.
 */

export interface CellProblem {
  readonly code: IssueCode;
  readonly params: Readonly<Record<string, string | number>>;
}

/** What a row becomes: the record it names by ID (if any) and the fields its cells set. */
export interface RowDraft<P> {
  id: number | null;
  patch: P;
}

export interface ReadContext {
  readonly state: SchoolState;
  /** The grade a sheet named like "2학년" holds (the original system's workbook), else null. */
  readonly sheetGrade: number | null;
}

export interface Column<P, D> {
  /** The record field(s) this column sets; the first names the column in messages. */
  readonly fields: readonly string[];
  /** The header exports write (Korean). */
  readonly header: string;
  /** Other names accepted on import (compared without case, spaces or punctuation). */
  readonly aliases: readonly string[];
  /** Whether exports write it (columns accepted only for the original system's files are not). */
  readonly exported: boolean;
  /** Reads a non-empty or empty cell into the draft; returns the problem, if any. */
  read(text: string | null, draft: RowDraft<P>, ctx: ReadContext): CellProblem | undefined;
  write(doc: D, state: SchoolState): OutCell;
}

export interface EntityFormat<P, D> {
  readonly entity: SchoolEntity;
  /** The sheet name exports use. */
  readonly sheetName: string;
  readonly columns: readonly Column<P, D>[];
  /** The fields rows are matched on besides the ID (students: email; clubs, projects: name). */
  readonly matchField: 'email' | 'name';
}

/** Header comparison: no case, spaces, underscores, hyphens, dots or brackets. */
export function headerKey(text: string): string {
  return text
    .normalize('NFC')
    .toLowerCase()
    .replace(/[\s_\-.()[\]/]/g, '');
}

function integer(text: string): number | CellProblem {
  const trimmed = text.trim().replace(/\.0+$/, '');
  if (!/^-?\d{1,9}$/.test(trimmed)) return { code: 'NOT_INTEGER', params: { got: text } };
  return Number(trimmed);
}

/** An enum read from its name, its Korean or English label, or a synonym. */
function enumReader<T extends string>(
  values: Readonly<Record<string, T>>,
  labels: Readonly<Record<T, { ko: string; en: string }>>,
  synonyms: Readonly<Record<string, T>> = {},
): (text: string) => T | CellProblem {
  const known = new Map<string, T>();
  for (const value of Object.values(values)) {
    known.set(headerKey(value), value);
    known.set(headerKey(labels[value].ko), value);
    known.set(headerKey(labels[value].en), value);
  }
  for (const [word, value] of Object.entries(synonyms)) known.set(headerKey(word), value);
  const allowed = Object.values(values)
    .map((v) => labels[v].ko)
    .join(', ');
  return (text) => known.get(headerKey(text)) ?? { code: 'ONE_OF', params: { allowed, got: text } };
}

const isProblem = (v: unknown): v is CellProblem => typeof v === 'object' && v !== null && 'code' in v;

export function idColumn<P, D extends { _id: number }>(): Column<P, D> {
  return {
    fields: ['id'],
    header: 'ID',
    aliases: ['아이디', '번호(ID)', 'record id'],
    exported: true,
    read(text, draft) {
      if (text === null) return undefined;
      const n = integer(text);
      if (isProblem(n)) return n;
      if (n < 1) return { code: 'RANGE', params: { min: 1, max: Number.MAX_SAFE_INTEGER, got: n } };
      draft.id = n;
      return undefined;
    },
    write: (doc) => doc._id,
  };
}

/** A column holding one field as text (empty: null). */
export function textColumn<P extends object, D>(
  field: keyof P & string,
  header: string,
  aliases: string[],
  write: (doc: D) => string | null,
): Column<P, D> {
  return {
    fields: [field],
    header,
    aliases,
    exported: true,
    read(text, draft) {
      (draft.patch as Record<string, unknown>)[field] = text;
      return undefined;
    },
    write: (doc) => write(doc),
  };
}

/** A column holding one field that its text is read into (empty: null), or the problem with it. */
function parsedColumn<P extends object, D, V>(
  field: keyof P & string,
  header: string,
  aliases: string[],
  parse: (text: string, ctx: ReadContext) => V | CellProblem,
  write: (doc: D, state: SchoolState) => OutCell,
): Column<P, D> {
  return {
    fields: [field],
    header,
    aliases,
    exported: true,
    read(text, draft, ctx) {
      const value = text === null ? null : parse(text, ctx);
      if (isProblem(value)) return value;
      (draft.patch as Record<string, unknown>)[field] = value;
      return undefined;
    },
    write,
  };
}

export function integerColumn<P extends object, D>(
  field: keyof P & string,
  header: string,
  aliases: string[],
  write: (doc: D) => number | null,
  pattern: RegExp = /^(.*)$/,
): Column<P, D> {
  return parsedColumn<P, D, number>(
    field,
    header,
    aliases,
    (text) => {
      const n = integer(pattern.exec(text.trim())?.[1] ?? text);
      return isProblem(n) ? { code: 'NOT_INTEGER', params: { got: text } } : n;
    },
    write,
  );
}

export function enumColumn<P extends object, D, T extends string>(
  field: keyof P & string,
  header: string,
  aliases: string[],
  parse: (text: string) => T | CellProblem,
  write: (doc: D) => string | null,
): Column<P, D> {
  return parsedColumn<P, D, T>(field, header, aliases, parse, write);
}

/** A list of student references (emails, student numbers, #ids) separated by commas, semicolons or lines. */
export function splitList(text: string | null): string[] {
  return (text ?? '')
    .split(/[,;\n\r]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** A club named by its name (any case) or #id. */
function clubByName(state: SchoolState, text: string): number | CellProblem {
  const byId = /^#(\d+)$/.exec(text.trim());
  if (byId && state.get('CLUB', Number(byId[1]))) return Number(byId[1]);
  const [id] = state.clubsByName(text);
  return id ?? { code: 'UNKNOWN_CLUB', params: { ref: text.trim() } };
}

function clubColumn<P extends object, D>(
  field: keyof P & string,
  header: string,
  aliases: string[],
  write: (doc: D, state: SchoolState) => string | null,
): Column<P, D> {
  return parsedColumn<P, D, number>(field, header, aliases, (text, ctx) => clubByName(ctx.state, text), write);
}

const clubName = (state: SchoolState, id: number | null | undefined): string | null =>
  id == null ? null : (state.get('CLUB', id)?.name ?? null);
const studentEmail = (state: SchoolState, id: number): string | null => {
  const s = state.get('STUDENT', id);
  return s ? studentRef(s) : null;
};

const readSex = enumReader(Sex, SEX_LABELS, { 남: 'MAN', m: 'MAN', male: 'MAN', 여: 'WOMAN', f: 'WOMAN', w: 'WOMAN', female: 'WOMAN' });
export const readMajor = enumReader(Major, MAJOR_LABELS, {
  소프트웨어개발과: 'SW_DEVELOPMENT',
  sw: 'SW_DEVELOPMENT',
  software: 'SW_DEVELOPMENT',
  스마트iot: 'SMART_IOT',
  iot: 'SMART_IOT',
  ai과: 'AI',
  인공지능: 'AI',
});
const readRole = enumReader(StudentRole, ROLE_LABELS, {
  졸업: 'GRADUATE',
  자퇴: 'WITHDRAWN',
  일반: 'GENERAL_STUDENT',
  기숙사자치위원: 'DORMITORY_MANAGER',
});
const readClubType = enumReader(ClubType, CLUB_TYPE_LABELS, {
  전공: 'MAJOR_CLUB',
  창체: 'AUTONOMOUS_CLUB',
  major: 'MAJOR_CLUB',
  autonomous: 'AUTONOMOUS_CLUB',
});
const readClubStatus = enumReader(ClubStatus, CLUB_STATUS_LABELS, { 활동중: 'ACTIVE', 운영: 'ACTIVE' });
const readProjectStatus = enumReader(ProjectStatus, PROJECT_STATUS_LABELS, { 진행중: 'ACTIVE', 완료: 'ENDED' });

export const STUDENT_FORMAT: EntityFormat<StudentPatch, StudentDoc> = {
  entity: 'STUDENT',
  sheetName: '학생',
  matchField: 'email',
  columns: [
    idColumn(),
    textColumn('name', '학생명', ['이름', '성명', 'name', 'student name'], (s) => s.name),
    {
      fields: ['studentNumber', 'grade', 'classNum', 'number'],
      header: '학번',
      aliases: ['student number', 'studentNumber'],
      exported: true,
      read(text, draft, ctx): CellProblem | undefined {
        if (text === null) {
          Object.assign(draft.patch, { grade: null, classNum: null, number: null });
          return undefined;
        }
        const trimmed = text.trim().replace(/\.0+$/, '');
        if (!/^\d{4}$/.test(trimmed)) return { code: 'STUDENT_NUMBER', params: { got: text } };
        const n = Number(trimmed);
        const grade = Math.floor(n / 1000);
        if (ctx.sheetGrade !== null && grade !== ctx.sheetGrade)
          return { code: 'SHEET_GRADE', params: { got: trimmed, sheet: `${ctx.sheetGrade}학년` } };
        Object.assign(draft.patch, { grade, classNum: Math.floor(n / 100) % 10, number: n % 100 });
        return undefined;
      },
      write: (s) => s.studentNumber ?? null,
    },
    textColumn('email', '이메일', ['email', 'e-mail', '메일', 'email address'], (s) => s.email),
    enumColumn('sex', '성별', ['sex', 'gender'], readSex, (s) => SEX_LABELS[s.sex].ko),
    enumColumn('major', '학과', ['major', 'department', '전공'], readMajor, (s) => (s.major ? MAJOR_LABELS[s.major].ko : null)),
    enumColumn('role', '소속', ['role', '역할', '구분'], readRole, (s) => ROLE_LABELS[s.role].ko),
    integerColumn(
      'dormitoryRoom',
      '호실',
      ['dormitory room', 'room', '기숙사 호실', '기숙사'],
      (s) => s.dormitoryRoom ?? null,
      /^(\d+)\s*호?$/,
    ),
    clubColumn('majorClubId', '전공동아리', ['major club'], (s, state) => clubName(state, s.majorClubId)),
    clubColumn('autonomousClubId', '창체동아리', ['autonomous club', '자율동아리'], (s, state) => clubName(state, s.autonomousClubId)),
    textColumn('specialty', '전문분야', ['specialty', '분야'], (s) => s.specialty ?? null),
    textColumn('githubId', 'GitHub', ['github id', 'githubId', '깃허브', 'github 아이디'], (s) => s.githubId ?? null),
    {
      // The original system's "withdrawn" flag: O withdraws the student, X changes nothing.
      fields: ['role'],
      header: '자퇴 여부',
      aliases: ['withdrawn'],
      exported: false,
      read(text, draft) {
        const value = (text ?? '').trim().toUpperCase();
        if (value === 'O') draft.patch.role = 'WITHDRAWN';
        else if (value !== '' && value !== 'X') return { code: 'ONE_OF', params: { allowed: 'O, X', got: text ?? '' } };
        return undefined;
      },
      write: () => null,
    },
    {
      // The original system's later job clubs: not kept here, so only an empty column is accepted.
      fields: ['jobClub'],
      header: '취업동아리',
      aliases: ['job club'],
      exported: false,
      read: (text) => (text === null ? undefined : { code: 'JOB_CLUB', params: {} }),
      write: () => null,
    },
  ],
};

export const CLUB_FORMAT: EntityFormat<ClubPatch, ClubDoc> = {
  entity: 'CLUB',
  sheetName: '동아리',
  matchField: 'name',
  columns: [
    idColumn(),
    textColumn('name', '동아리명', ['이름', 'name', 'club name', '동아리'], (c) => c.name),
    enumColumn('type', '종류', ['type', '유형', '구분'], readClubType, (c) => CLUB_TYPE_LABELS[c.type].ko),
    enumColumn('status', '상태', ['status'], readClubStatus, (c) => CLUB_STATUS_LABELS[c.status ?? 'ACTIVE'].ko),
    {
      fields: ['leader'],
      header: '부장',
      aliases: ['leader', '동아리장', '회장'],
      exported: true,
      read(text, draft) {
        draft.patch.leader = text;
        return undefined;
      },
      write: (c, state) => (c.leaderId == null ? null : studentEmail(state, c.leaderId)),
    },
    {
      fields: ['members'],
      header: '부원',
      aliases: ['members', '동아리원', '회원'],
      exported: true,
      read(text, draft) {
        draft.patch.members = splitList(text);
        return undefined;
      },
      write: (c, state) =>
        state
          .membersOf(c)
          .map((s) => studentRef(s))
          .join(', ') || null,
    },
    integerColumn('foundedYear', '설립연도', ['founded year', 'founded', '창설연도'], (c) => c.foundedYear ?? null),
    integerColumn('abolishedYear', '폐지연도', ['abolished year', 'abolished'], (c) => c.abolishedYear ?? null),
  ],
};

export const PROJECT_FORMAT: EntityFormat<ProjectPatch, ProjectDoc> = {
  entity: 'PROJECT',
  sheetName: '프로젝트',
  matchField: 'name',
  columns: [
    idColumn(),
    textColumn('name', '프로젝트명', ['이름', 'name', 'project name', '프로젝트'], (p) => p.name),
    {
      fields: ['description'],
      header: '설명',
      aliases: ['description', '소개'],
      exported: true,
      read(text, draft) {
        draft.patch.description = text ?? '';
        return undefined;
      },
      write: (p) => p.description || null,
    },
    clubColumn('clubId', '동아리', ['club', 'club name', '동아리명'], (p, state) => clubName(state, p.clubId)),
    {
      fields: ['participants'],
      header: '참여자',
      aliases: ['participants', '참여 학생', '팀원'],
      exported: true,
      read(text, draft) {
        draft.patch.participants = splitList(text);
        return undefined;
      },
      write: (p, state) =>
        p.participantIds
          .map((id) => studentEmail(state, id))
          .filter((e): e is string => e !== null)
          .join(', ') || null,
    },
    integerColumn('startYear', '시작연도', ['start year', 'started', '시작'], (p) => p.startYear ?? null),
    integerColumn('endYear', '종료연도', ['end year', 'ended', '종료'], (p) => p.endYear ?? null),
    enumColumn('status', '상태', ['status'], readProjectStatus, (p) => PROJECT_STATUS_LABELS[p.status ?? 'ACTIVE'].ko),
  ],
};

/** The format of each kind (the import and export of one kind use the same). */
export function formatOf(entity: SchoolEntity): EntityFormat<object, { _id: number }> {
  const formats = { STUDENT: STUDENT_FORMAT, CLUB: CLUB_FORMAT, PROJECT: PROJECT_FORMAT } as const;
  return formats[entity] as unknown as EntityFormat<object, { _id: number }>;
}
