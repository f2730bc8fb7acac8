import { ClubStatus, ClubType, Major, ProjectStatus, Sex, StudentRole } from '../__generated__/enums.js';
import { RANGES } from '../../limits.js';
import type { ClubDoc } from '../models/club.model.js';
import type { ProjectDoc } from '../models/project.model.js';
import { isEnrolledRole, type StudentDoc } from '../models/student.model.js';
import { sameValue, type SchoolState } from './state.js';
import type { Issue, SchoolEntity } from './types.js';

/**
 * The rules of school records, written once and judged on a whole planned state
 * (src/data/school/state.ts): a form's change, an import and a rollover are valid when every
 * record they touch is. A field's own rule (length, range, syntax) is checked when the field is
 * set or changed, so records from before a rule existed (e.g. a demo room 519) can still be
 * edited in their other fields; the rules between records (uniqueness, references, leadership)
 * are checked for every touched record.
 */
export const SCHOOL_LIMITS = {
  studentName: { min: 1, max: 30 },
  clubName: { min: 1, max: 30 },
  projectName: { min: 1, max: 100 },
  description: { min: 0, max: 500 },
  specialty: { min: 0, max: 50 },
  /** Rooms 201 to 518: floors 2 to 5 of the dormitory. */
  dormitoryRoom: { min: 201, max: 518 },
  year: { min: 1900, max: 2100 },
  email: { min: 3, max: 254 },
} as const;

/** GitHub's own username syntax: alphanumerics and single inner hyphens, 1 to 39 characters. */
const GITHUB_ID = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
/** A pragmatic address check: one @, a dotted domain, no spaces or control characters. */
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/** A problem of one record in a planned state. */
export interface RecordIssue {
  readonly entity: SchoolEntity;
  readonly id: number;
  readonly issue: Issue;
}

/** Every problem of the records the plan touched (removed records have none). */
export function validateState(state: SchoolState): RecordIssue[] {
  const found: RecordIssue[] = [];
  for (const { entity, id } of state.touchedRecords()) {
    const push = (issue: Issue) => found.push({ entity, id, issue });
    if (entity === 'STUDENT') {
      const doc = state.get('STUDENT', id);
      if (doc) studentIssues(state, doc, state.before('STUDENT', id) ?? null).forEach(push);
    } else if (entity === 'CLUB') {
      const doc = state.get('CLUB', id);
      if (doc) clubIssues(state, doc, state.before('CLUB', id) ?? null).forEach(push);
    } else {
      const doc = state.get('PROJECT', id);
      if (doc) projectIssues(state, doc, state.before('PROJECT', id) ?? null).forEach(push);
    }
  }
  return found;
}

/** How a student is named in messages: name and student number (or role). */
export function studentLabel(s: Pick<StudentDoc, 'name' | 'studentNumber' | 'role'>): string {
  return s.studentNumber != null ? `${s.name} (${s.studentNumber})` : `${s.name} (${s.role})`;
}

function changedFields<T extends object>(doc: T, before: T | null): (field: keyof T) => boolean {
  return (field) => before === null || !sameValue(doc[field], before[field]);
}

function length(field: string, value: string, limits: { min: number; max: number }): Issue | undefined {
  const n = [...value].length;
  if (n < limits.min || n > limits.max) return { field, code: 'LENGTH', params: { min: limits.min, max: limits.max, got: n } };
  return undefined;
}

function range(field: string, value: number | null | undefined, limits: { min: number; max: number }): Issue | undefined {
  if (value == null) return undefined;
  if (!Number.isInteger(value) || value < limits.min || value > limits.max) {
    return { field, code: 'RANGE', params: { min: limits.min, max: limits.max, got: value } };
  }
  return undefined;
}

function oneOf(field: string, value: string | null | undefined, allowed: Record<string, string>): Issue | undefined {
  const values = Object.values(allowed);
  if (value != null && !values.includes(value)) return { field, code: 'ONE_OF', params: { allowed: values.join(', '), got: value } };
  return undefined;
}

export function studentIssues(state: SchoolState, s: StudentDoc, before: StudentDoc | null): Issue[] {
  const changed = changedFields(s, before);
  const issues: (Issue | undefined)[] = [];
  const enrolled = isEnrolledRole(s.role);
  if (changed('name')) issues.push(length('name', s.name, SCHOOL_LIMITS.studentName));
  if (changed('email')) {
    if (!EMAIL.test(s.email) || s.email.length > SCHOOL_LIMITS.email.max)
      issues.push({ field: 'email', code: 'EMAIL', params: { got: s.email } });
  }
  const otherEmail = state.studentsByEmail(s.email).find((id) => id !== s._id);
  if (otherEmail !== undefined)
    issues.push({ field: 'email', code: 'TAKEN', params: { value: s.email, by: labelOfStudent(state, otherEmail) } });
  if (changed('sex')) issues.push(oneOf('sex', s.sex, Sex));
  if (changed('role')) issues.push(oneOf('role', s.role, StudentRole));
  if (enrolled) {
    if (changed('grade')) issues.push(range('grade', s.grade, RANGES.grade));
    if (changed('classNum')) issues.push(range('classNum', s.classNum, RANGES.classNum));
    if (changed('number')) issues.push(range('number', s.number, RANGES.number));
    if (changed('major')) issues.push(oneOf('major', s.major, Major));
    if (s.grade != null && s.classNum != null && s.number != null) {
      const other = state.studentsBySeat(s.grade, s.classNum, s.number).find((id) => id !== s._id);
      if (other !== undefined) {
        issues.push({
          field: 'studentNumber',
          code: 'SEAT_TAKEN',
          params: { seat: s.studentNumber ?? '', by: labelOfStudent(state, other) },
        });
      }
    }
    if (changed('dormitoryRoom')) issues.push(range('dormitoryRoom', s.dormitoryRoom, SCHOOL_LIMITS.dormitoryRoom));
    if (changed('majorClubId')) issues.push(clubReference(state, 'majorClubId', s.majorClubId, 'MAJOR_CLUB'));
    if (changed('autonomousClubId')) issues.push(clubReference(state, 'autonomousClubId', s.autonomousClubId, 'AUTONOMOUS_CLUB'));
  }
  if (changed('specialty') && s.specialty != null) issues.push(length('specialty', s.specialty, SCHOOL_LIMITS.specialty));
  if (changed('githubId') && s.githubId != null && !GITHUB_ID.test(s.githubId)) {
    issues.push({ field: 'githubId', code: 'GITHUB_ID', params: { got: s.githubId } });
  }
  return issues.filter((i): i is Issue => i !== undefined);
}

function clubReference(state: SchoolState, field: string, clubId: number | null | undefined, type: ClubDoc['type']): Issue | undefined {
  if (clubId == null) return undefined;
  const club = state.get('CLUB', clubId);
  if (!club) return { field, code: 'UNKNOWN_CLUB', params: { ref: `#${clubId}` } };
  if (club.type !== type) return { field, code: 'CLUB_TYPE', params: { club: club.name, expected: type } };
  if (club.status === 'ABOLISHED') return { field, code: 'CLUB_ABOLISHED', params: { club: club.name } };
  return undefined;
}

export function clubIssues(state: SchoolState, c: ClubDoc, before: ClubDoc | null): Issue[] {
  const changed = changedFields(c, before);
  const issues: (Issue | undefined)[] = [];
  if (changed('name')) issues.push(length('name', c.name, SCHOOL_LIMITS.clubName));
  const other = state.clubsByName(c.name).find((id) => id !== c._id);
  if (other !== undefined)
    issues.push({ field: 'name', code: 'TAKEN', params: { value: c.name, by: state.get('CLUB', other)?.name ?? `#${other}` } });
  if (changed('type')) issues.push(oneOf('type', c.type, ClubType));
  if (changed('status')) issues.push(oneOf('status', c.status, ClubStatus));
  if (changed('foundedYear')) issues.push(range('foundedYear', c.foundedYear ?? null, SCHOOL_LIMITS.year));
  if (changed('abolishedYear')) issues.push(range('abolishedYear', c.abolishedYear ?? null, SCHOOL_LIMITS.year));
  if (c.leaderId != null && (changed('leaderId') || changed('type'))) issues.push(...leaderIssues(state, c, c.leaderId));
  if (c.status === 'ABOLISHED') {
    if (c.leaderId != null) issues.push({ field: 'leader', code: 'ABOLISHED_LEADER' });
    if (state.membersOf(c).length > 0) issues.push({ field: 'members', code: 'ABOLISHED_MEMBERS' });
  }
  for (const member of state.membersOf(c)) {
    const was = state.before('STUDENT', member._id);
    const field = c.type === 'MAJOR_CLUB' ? 'majorClubId' : 'autonomousClubId';
    // A member added by this change must be enrolled (graduates keep no clubs).
    if (!isEnrolledRole(member.role) && (!was || was[field] !== c._id)) {
      issues.push({ field: 'members', code: 'NOT_ENROLLED', params: { student: studentLabel(member) } });
    }
  }
  return issues.filter((i): i is Issue => i !== undefined);
}

/** The leader is an enrolled student who leads no other club of the same type. */
function leaderIssues(state: SchoolState, c: ClubDoc, leaderId: number): Issue[] {
  const leader = state.get('STUDENT', leaderId);
  if (!leader) return [{ field: 'leader', code: 'UNKNOWN_STUDENT', params: { ref: `#${leaderId}` } }];
  if (!isEnrolledRole(leader.role)) return [{ field: 'leader', code: 'NOT_ENROLLED', params: { student: studentLabel(leader) } }];
  const other = [...state.all('CLUB')].find((o) => o._id !== c._id && o.type === c.type && o.leaderId === leaderId);
  if (other) return [{ field: 'leader', code: 'LEADS_ANOTHER', params: { student: studentLabel(leader), club: other.name } }];
  return [];
}

export function projectIssues(state: SchoolState, pr: ProjectDoc, before: ProjectDoc | null): Issue[] {
  const changed = changedFields(pr, before);
  const issues: (Issue | undefined)[] = [];
  if (changed('name')) issues.push(length('name', pr.name, SCHOOL_LIMITS.projectName));
  const other = state.projectsByName(pr.name).find((id) => id !== pr._id);
  if (other !== undefined)
    issues.push({ field: 'name', code: 'TAKEN', params: { value: pr.name, by: state.get('PROJECT', other)?.name ?? `#${other}` } });
  if (changed('description')) issues.push(length('description', pr.description, SCHOOL_LIMITS.description));
  if (changed('clubId') && pr.clubId != null && !state.get('CLUB', pr.clubId)) {
    issues.push({ field: 'clubId', code: 'UNKNOWN_CLUB', params: { ref: `#${pr.clubId}` } });
  }
  if (changed('participantIds')) {
    for (const id of pr.participantIds) {
      if (!state.get('STUDENT', id)) issues.push({ field: 'participants', code: 'UNKNOWN_STUDENT', params: { ref: `#${id}` } });
    }
  }
  if (changed('startYear')) issues.push(range('startYear', pr.startYear ?? null, SCHOOL_LIMITS.year));
  if (changed('status')) issues.push(oneOf('status', pr.status, ProjectStatus));
  if (changed('endYear') || changed('status') || changed('startYear')) {
    if (pr.status === 'ENDED') {
      if (pr.endYear == null) issues.push({ field: 'endYear', code: 'END_YEAR_REQUIRED' });
      else {
        const inRange = range('endYear', pr.endYear, SCHOOL_LIMITS.year);
        if (inRange) issues.push(inRange);
        else if (pr.startYear != null && pr.endYear < pr.startYear) {
          issues.push({ field: 'endYear', code: 'END_BEFORE_START', params: { start: pr.startYear, got: pr.endYear } });
        }
      }
    } else if (pr.endYear != null) issues.push({ field: 'endYear', code: 'END_WHILE_ACTIVE' });
  }
  return issues.filter((i): i is Issue => i !== undefined);
}

function labelOfStudent(state: SchoolState, id: number): string {
  const s = state.get('STUDENT', id);
  return s ? studentLabel(s) : `#${id}`;
}
