import type { ClubStatus, ClubType, Major, ProjectStatus, Sex, StudentRole } from '../__generated__/enums.js';
import { RANGES } from '../../limits.js';
import type { ClubDoc } from '../models/club.model.js';
import type { ProjectDoc } from '../models/project.model.js';
import { isEnrolledRole, toStudentRecord, type StudentDoc } from '../models/student.model.js';
import { studentIssues } from './rules.js';
import type { SchoolState } from './state.js';
import type { Issue } from './types.js';

/*
 * The changes one can make to school records, as steps on a SchoolState. Each step applies the
 * rules that shape records (derived fields, what graduating clears, what abolishing a club
 * removes) and returns the problems it could not get past; whether the result is valid as a
 * whole is src/data/school/rules.ts's to say. The GraphQL mutations, the imports and the
 * rollover all go through these steps, so a rule lives here once.
 */

/** What a student write may set; an omitted field stays as it is, null clears it. */
export interface StudentPatch {
  name?: string | null;
  sex?: Sex | null;
  email?: string | null;
  grade?: number | null;
  classNum?: number | null;
  number?: number | null;
  /** Null or omitted on a new class: the class's major (majorOfClass). */
  major?: Major | null;
  role?: StudentRole | null;
  dormitoryRoom?: number | null;
  majorClubId?: number | null;
  autonomousClubId?: number | null;
  specialty?: string | null;
  githubId?: string | null;
}

export interface ClubPatch {
  name?: string | null;
  type?: ClubType | null;
  /** A student reference (email, four-digit student number, #id); null or '' for none. */
  leader?: string | null;
  /** Student references; replaces the member list. */
  members?: readonly string[] | null;
  status?: ClubStatus | null;
  foundedYear?: number | null;
  abolishedYear?: number | null;
}

export interface ProjectPatch {
  name?: string | null;
  description?: string | null;
  clubId?: number | null;
  participants?: readonly string[] | null;
  startYear?: number | null;
  status?: ProjectStatus | null;
  endYear?: number | null;
}

/** The outcome of a step: the record's id (null when nothing was written) and its problems. */
export interface StepResult {
  readonly id: number | null;
  readonly issues: Issue[];
}

/** The major of a class: 1-2 SW_DEVELOPMENT, 3 SMART_IOT, 4 AI (docs/decisions.md; the school's departments). */
export function majorOfClass(classNum: number | null | undefined): Major | null {
  if (classNum === 1 || classNum === 2) return 'SW_DEVELOPMENT';
  if (classNum === 3) return 'SMART_IOT';
  if (classNum === 4) return 'AI';
  return null;
}

/** The floor of a dormitory room: its hundreds (room 318 is on floor 3). */
export function floorOfRoom(room: number | null): number | null {
  return room == null ? null : Math.floor(room / 100);
}

const has = <T extends object>(patch: T, field: keyof T): boolean =>
  Object.prototype.hasOwnProperty.call(patch, field) && patch[field] !== undefined;

function text(value: string | null | undefined): string | null {
  if (value == null) return null;
  const trimmed = value.normalize('NFC').trim();
  return trimmed === '' ? null : trimmed;
}

function notFound(entity: 'STUDENT' | 'CLUB' | 'PROJECT', id: number): StepResult {
  return { id: null, issues: [{ field: 'id', code: 'NOT_FOUND', params: { entity, id } }] };
}

/**
 * Creates (id null) or changes a student. A retired role (GRADUATE, WITHDRAWN) clears the
 * enrolment fields, the dormitory and the clubs, and the clubs the student leads lose their
 * leader; an enrolled student needs grade, class and number; the major follows a new class
 * unless given; the floor follows the room; the GitHub URL follows the GitHub id.
 */
export function putStudent(state: SchoolState, id: number | null, patch: StudentPatch): StepResult {
  const existing = id === null ? undefined : state.get('STUDENT', id);
  if (id !== null && !existing) return notFound('STUDENT', id);
  const issues: Issue[] = [];
  const pick = <K extends keyof StudentPatch>(field: K, current: StudentPatch[K]): StudentPatch[K] =>
    has(patch, field) ? patch[field] : current;

  const name = has(patch, 'name') ? text(patch.name) : (existing?.name ?? null);
  const email = has(patch, 'email') ? (text(patch.email)?.toLowerCase() ?? null) : (existing?.email ?? null);
  const sex = pick('sex', existing?.sex ?? null) ?? null;
  const role = pick('role', existing?.role ?? 'GENERAL_STUDENT') ?? 'GENERAL_STUDENT';
  for (const [field, value] of [
    ['name', name],
    ['email', email],
    ['sex', sex],
  ] as const) {
    if (value == null) issues.push({ field, code: 'REQUIRED' });
  }
  const enrolled = isEnrolledRole(role);
  const grade = enrolled ? (pick('grade', existing?.grade ?? null) ?? null) : null;
  const classNum = enrolled ? (pick('classNum', existing?.classNum ?? null) ?? null) : null;
  const number = enrolled ? (pick('number', existing?.number ?? null) ?? null) : null;
  if (enrolled) {
    for (const [field, value] of [
      ['grade', grade],
      ['classNum', classNum],
      ['number', number],
    ] as const) {
      if (value == null) issues.push({ field, code: 'REQUIRED' });
    }
  }
  const classChanged = !existing || existing.classNum !== classNum || !isEnrolledRole(existing.role);
  const major = !enrolled
    ? null
    : (patch.major ?? (has(patch, 'major') || classChanged || existing?.major == null ? majorOfClass(classNum) : existing.major));
  const dormitoryRoom = enrolled ? (pick('dormitoryRoom', existing?.dormitoryRoom ?? null) ?? null) : null;
  const majorClubId = enrolled ? (pick('majorClubId', existing?.majorClubId ?? null) ?? null) : null;
  const autonomousClubId = enrolled ? (pick('autonomousClubId', existing?.autonomousClubId ?? null) ?? null) : null;
  const specialty = has(patch, 'specialty') ? text(patch.specialty) : (existing?.specialty ?? null);
  const githubId = has(patch, 'githubId') ? text(patch.githubId) : (existing?.githubId ?? null);
  if (enrolled && classNum != null && major == null) {
    issues.push({ field: 'classNum', code: 'RANGE', params: { min: RANGES.classNum.min, max: RANGES.classNum.max, got: classNum } });
  }
  if (!enrolled && existing && !isEnrolledRole(existing.role)) {
    // Editing a graduate's class or clubs would be silently dropped: say so instead.
    const enrolmentOnly = ['grade', 'classNum', 'number', 'dormitoryRoom', 'majorClubId', 'autonomousClubId'] as const;
    const given = enrolmentOnly.find((field) => has(patch, field) && patch[field] != null);
    if (given) issues.push({ field: given, code: 'ENROLLED_ONLY' });
  }
  const fields = {
    name: name ?? '',
    sex: sex ?? 'MAN',
    email: email ?? '',
    grade,
    classNum,
    number,
    major: major ?? null,
    role,
    dormitoryFloor: floorOfRoom(dormitoryRoom),
    dormitoryRoom,
    majorClubId,
    autonomousClubId,
    specialty,
    githubId,
    githubUrl: githubId ? `https://github.com/${githubId}` : null,
  };
  if (issues.length > 0 || name == null || email == null || sex == null) {
    // A form shows every problem at once (schema/school-admin.graphql, CreateStudentInput): the
    // rules of the fields that were given too, judged on a record that is never stored.
    const seat = grade != null && classNum != null && number != null ? grade * 1000 + classNum * 100 + number : null;
    const draft = { ...fields, _id: existing?._id ?? -1, studentNumber: seat, enrolledRank: 0, dormitoryRank: 0 } as StudentDoc;
    const reported = new Set(issues.map((i) => i.field));
    const others = studentIssues(state, draft, existing ?? null).filter((i) => !reported.has(i.field));
    return { id: null, issues: [...issues, ...others] };
  }

  const studentId = existing?._id ?? state.newId('STUDENT');
  const doc: StudentDoc = toStudentRecord({ ...fields, _id: studentId });
  state.put('STUDENT', doc);
  // Leaving the school ends club leadership (a graduate kept as a leader before stays as it was).
  if (!enrolled && (!existing || isEnrolledRole(existing.role))) dropLeadership(state, studentId);
  return { id: studentId, issues: [] };
}

/** Graduates or withdraws an enrolled student (putStudent clears what that clears). */
export function retireStudent(state: SchoolState, id: number, role: 'GRADUATE' | 'WITHDRAWN'): StepResult {
  const existing = state.get('STUDENT', id);
  if (!existing) return notFound('STUDENT', id);
  if (existing.role === role) {
    const state_ = role === 'GRADUATE' ? { stateKo: '졸업', stateEn: 'graduated' } : { stateKo: '자퇴', stateEn: 'withdrawn' };
    return { id: null, issues: [{ field: 'role', code: 'ALREADY', params: state_ }] };
  }
  return putStudent(state, id, { role });
}

/** Brings a graduated or withdrawn student back as a general student in the given class. */
export function reactivateStudent(
  state: SchoolState,
  id: number,
  input: { grade?: number | null; classNum?: number | null; number?: number | null; major?: Major | null },
): StepResult {
  const existing = state.get('STUDENT', id);
  if (!existing) return notFound('STUDENT', id);
  if (isEnrolledRole(existing.role))
    return { id: null, issues: [{ field: 'role', code: 'ALREADY', params: { stateKo: '재학', stateEn: 'enrolled' } }] };
  return putStudent(state, id, {
    role: 'GENERAL_STUDENT',
    grade: input.grade ?? null,
    classNum: input.classNum ?? null,
    number: input.number ?? null,
    major: input.major ?? null,
  });
}

/** Deletes a student; the clubs they lead lose their leader, the projects lose the participant. */
export function deleteStudent(state: SchoolState, id: number): StepResult {
  if (!state.get('STUDENT', id)) return notFound('STUDENT', id);
  state.remove('STUDENT', id);
  dropLeadership(state, id);
  for (const project of [...state.all('PROJECT')]) {
    if (project.participantIds.includes(id)) {
      state.put('PROJECT', { ...project, participantIds: project.participantIds.filter((p) => p !== id) });
    }
  }
  return { id, issues: [] };
}

function dropLeadership(state: SchoolState, studentId: number): void {
  for (const club of [...state.all('CLUB')]) {
    if (club.leaderId === studentId) state.put('CLUB', { ...club, leaderId: null });
  }
}

/**
 * Resolves a student reference: an email, a four-digit student number (enrolled students) or
 * #id. Returns the id, or the issue naming the reference.
 */
export function resolveStudent(state: SchoolState, ref: string, field: string): { id: number } | { issue: Issue } {
  const value = ref.trim();
  const byId = /^#(\d{1,15})$/.exec(value);
  let ids: number[];
  if (byId) ids = state.get('STUDENT', Number(byId[1])) ? [Number(byId[1])] : [];
  else if (/^\d{4}$/.test(value)) {
    const n = Number(value);
    ids = state.studentsBySeat(Math.floor(n / 1000), Math.floor(n / 100) % 10, n % 100);
  } else ids = state.studentsByEmail(value);
  const [first] = ids;
  if (first === undefined) return { issue: { field, code: 'UNKNOWN_STUDENT', params: { ref: value } } };
  if (ids.length > 1) return { issue: { field, code: 'AMBIGUOUS_STUDENT', params: { ref: value } } };
  return { id: first };
}

/** How a student is named in a reference (the form every export writes). */
export function studentRef(student: Pick<StudentDoc, 'email'>): string {
  return student.email;
}

/**
 * Creates or changes a club. `members` (when given) replaces the member list: each listed
 * student's club of this type becomes this club (moving them from another), each unlisted member
 * leaves. A type change takes the members along. ABOLISHED clears the leader and the members and
 * sets the abolished year (`year` unless given); ACTIVE clears it.
 */
export function putClub(state: SchoolState, id: number | null, patch: ClubPatch, year: number): StepResult {
  const existing = id === null ? undefined : state.get('CLUB', id);
  if (id !== null && !existing) return notFound('CLUB', id);
  const issues: Issue[] = [];
  const name = has(patch, 'name') ? text(patch.name) : (existing?.name ?? null);
  const type = (has(patch, 'type') ? patch.type : existing?.type) ?? null;
  if (name == null) issues.push({ field: 'name', code: 'REQUIRED' });
  if (type == null) issues.push({ field: 'type', code: 'REQUIRED' });
  const status = (has(patch, 'status') ? patch.status : existing?.status) ?? 'ACTIVE';

  let leaderId = existing?.leaderId ?? null;
  if (has(patch, 'leader')) {
    const ref = text(patch.leader ?? null);
    if (ref === null) leaderId = null;
    else {
      const found = resolveStudent(state, ref, 'leader');
      if ('issue' in found) issues.push(found.issue);
      else leaderId = found.id;
    }
  }
  let memberIds: number[] | null = null;
  if (has(patch, 'members')) {
    memberIds = [];
    for (const ref of patch.members ?? []) {
      if (text(ref) === null) continue;
      const found = resolveStudent(state, ref, 'members');
      if ('issue' in found) issues.push(found.issue);
      else if (!memberIds.includes(found.id)) memberIds.push(found.id);
    }
  }
  if (status === 'ABOLISHED') {
    if (has(patch, 'leader') && leaderId !== null) issues.push({ field: 'leader', code: 'ABOLISHED_LEADER' });
    if (memberIds && memberIds.length > 0) issues.push({ field: 'members', code: 'ABOLISHED_MEMBERS' });
  }
  if (issues.length > 0 || name == null || type == null) return { id: null, issues };

  const clubId = existing?._id ?? state.newId('CLUB');
  const abolished = status === 'ABOLISHED';
  const doc: ClubDoc = {
    _id: clubId,
    name,
    type,
    leaderId: abolished ? null : leaderId,
    foundedYear: (has(patch, 'foundedYear') ? patch.foundedYear : existing?.foundedYear) ?? null,
    status,
    abolishedYear: abolished ? ((has(patch, 'abolishedYear') ? patch.abolishedYear : existing?.abolishedYear) ?? year) : null,
  };
  const previousMembers = existing ? state.membersOf(existing).map((s) => s._id) : [];
  state.put('CLUB', doc);
  const wanted = abolished ? [] : (memberIds ?? previousMembers);
  setMembers(state, doc, existing, wanted);
  return { id: clubId, issues: [] };
}

/** Makes exactly `wanted` the members of `club` (of its type), clearing the old field on a type change. */
function setMembers(state: SchoolState, club: ClubDoc, before: ClubDoc | undefined, wanted: readonly number[]): void {
  const field = club.type === 'MAJOR_CLUB' ? 'majorClubId' : 'autonomousClubId';
  const oldField = before ? (before.type === 'MAJOR_CLUB' ? 'majorClubId' : 'autonomousClubId') : field;
  for (const student of [...state.all('STUDENT')]) {
    const listed = wanted.includes(student._id);
    let next = student;
    if (oldField !== field && student[oldField] === club._id) next = { ...next, [oldField]: null };
    if (listed && next[field] !== club._id) next = { ...next, [field]: club._id };
    if (!listed && next[field] === club._id) next = { ...next, [field]: null };
    if (next !== student) state.put('STUDENT', next);
  }
}

/** Deletes a club; its members leave it and its projects lose their club. */
export function deleteClub(state: SchoolState, id: number): StepResult {
  const club = state.get('CLUB', id);
  if (!club) return notFound('CLUB', id);
  setMembers(state, club, club, []);
  state.remove('CLUB', id);
  for (const project of [...state.all('PROJECT')]) {
    if (project.clubId === id) state.put('PROJECT', { ...project, clubId: null });
  }
  return { id, issues: [] };
}

/**
 * Creates or changes a project. ENDED keeps or takes the end year (the rules require one);
 * becoming ACTIVE without an end year given clears it.
 */
export function putProject(state: SchoolState, id: number | null, patch: ProjectPatch): StepResult {
  const existing = id === null ? undefined : state.get('PROJECT', id);
  if (id !== null && !existing) return notFound('PROJECT', id);
  const issues: Issue[] = [];
  const name = has(patch, 'name') ? text(patch.name) : (existing?.name ?? null);
  if (name == null) issues.push({ field: 'name', code: 'REQUIRED' });
  let participantIds = existing ? [...existing.participantIds] : [];
  if (has(patch, 'participants')) {
    participantIds = [];
    for (const ref of patch.participants ?? []) {
      if (text(ref) === null) continue;
      const found = resolveStudent(state, ref, 'participants');
      if ('issue' in found) issues.push(found.issue);
      else if (!participantIds.includes(found.id)) participantIds.push(found.id);
    }
  }
  if (issues.length > 0 || name == null) return { id: null, issues };
  const status = (has(patch, 'status') ? patch.status : existing?.status) ?? 'ACTIVE';
  const reopening = status === 'ACTIVE' && existing?.status === 'ENDED' && !has(patch, 'endYear');
  const projectId = existing?._id ?? state.newId('PROJECT');
  const doc: ProjectDoc = {
    _id: projectId,
    name,
    description: (has(patch, 'description') ? (patch.description ?? '').normalize('NFC').trim() : existing?.description) ?? '',
    clubId: (has(patch, 'clubId') ? patch.clubId : existing?.clubId) ?? null,
    participantIds: participantIds.sort((a, b) => a - b),
    startYear: (has(patch, 'startYear') ? patch.startYear : existing?.startYear) ?? null,
    endYear: reopening ? null : ((has(patch, 'endYear') ? patch.endYear : existing?.endYear) ?? null),
    status,
  };
  state.put('PROJECT', doc);
  return { id: projectId, issues: [] };
}

export function deleteProject(state: SchoolState, id: number): StepResult {
  if (!state.get('PROJECT', id)) return notFound('PROJECT', id);
  state.remove('PROJECT', id);
  return { id, issues: [] };
}

/** The current calendar year in the school's time zone. */
export function schoolYear(timeZone: string, now: Date): number {
  return Number(new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric' }).format(now));
}
