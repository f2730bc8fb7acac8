import type { StudentSortBy } from '../../__generated__/enums.js';
import type { StudentDoc } from '../../models/student.model.js';
import {
  allOf,
  compareText,
  containsText,
  criteriaKey,
  equals,
  nullsLast,
  sortRule,
  type Compare,
  type ListQuery,
  type SortRule,
} from './page.js';

export interface StudentCriteria {
  studentId?: number | null;
  name?: string | null;
  email?: string | null;
  grade?: number | null;
  classNum?: number | null;
  number?: number | null;
  sex?: StudentDoc['sex'] | null;
  role?: StudentDoc['role'] | null;
  major?: NonNullable<StudentDoc['major']> | null;
  dormitoryRoom?: number | null;
  includeGraduates?: boolean | null;
  includeWithdrawn?: boolean | null;
  onlyEnrolled?: boolean | null;
}

/** Every criterion of StudentCriteria (the type refuses a list that misses one), for criteriaKey. */
const CRITERIA = Object.keys({
  studentId: true,
  name: true,
  email: true,
  grade: true,
  classNum: true,
  number: true,
  sex: true,
  role: true,
  major: true,
  dormitoryRoom: true,
  includeGraduates: true,
  includeWithdrawn: true,
  onlyEnrolled: true,
} satisfies Record<keyof StudentCriteria, true>) as (keyof StudentCriteria)[];

/** Roles hidden by the enrolment rules: onlyEnrolled > includeGraduates > includeWithdrawn. */
export function excludedRoles(c: StudentCriteria): StudentDoc['role'][] {
  if (c.onlyEnrolled) return ['GRADUATE', 'WITHDRAWN'];
  const excluded: StudentDoc['role'][] = [];
  if (!c.includeGraduates) excluded.push('GRADUATE');
  if (!c.includeWithdrawn) excluded.push('WITHDRAWN');
  return excluded;
}

const EXACT_FIELDS = ['grade', 'classNum', 'number', 'dormitoryRoom', 'sex', 'major'] as const;

/**
 * The test of a student query; omitted criteria are not applied. The enrolment rules always
 * apply, to an explicit role too: a role they hide matches nothing.
 */
export function studentMatcher(c: StudentCriteria): (s: StudentDoc) => boolean {
  const tests: ((s: StudentDoc) => boolean)[] = [];
  if (c.studentId != null) tests.push(equals((s) => s._id, c.studentId));
  if (c.name != null) tests.push(containsText((s) => s.name, c.name));
  if (c.email != null) tests.push(containsText((s) => s.email, c.email));
  for (const field of EXACT_FIELDS) {
    const value = c[field];
    if (value != null) tests.push(equals((s) => s[field], value));
  }
  const excluded = excludedRoles(c);
  if (c.role != null) {
    if (excluded.includes(c.role)) return () => false;
    tests.push(equals((s) => s.role, c.role));
  } else if (excluded.length > 0) {
    tests.push((s) => !excluded.includes(s.role));
  }
  return allOf(tests);
}

/**
 * The order of a student query per StudentSortBy, made total by the id. Grade, class, number,
 * major and student number are null exactly for graduates and withdrawn students, the room for
 * students outside the dormitory: those sort last in both directions.
 */
export function studentSort(sortBy: StudentSortBy | null | undefined, direction: 1 | -1): SortRule<StudentDoc> {
  const d = direction;
  const text =
    (field: (s: StudentDoc) => string): Compare<StudentDoc> =>
    (a, b) =>
      d * compareText(field(a), field(b));
  const parts: Record<StudentSortBy, Compare<StudentDoc>[]> = {
    ID: [],
    NAME: [text((s) => s.name)],
    EMAIL: [text((s) => s.email)],
    STUDENT_NUMBER: [nullsLast((s) => s.grade, d), nullsLast((s) => s.classNum, d), nullsLast((s) => s.number, d)],
    GRADE: [nullsLast((s) => s.grade, d)],
    CLASS_NUM: [nullsLast((s) => s.classNum, d)],
    NUMBER: [nullsLast((s) => s.number, d)],
    MAJOR: [nullsLast((s) => s.major, d)],
    ROLE: [text((s) => s.role)],
    SEX: [text((s) => s.sex)],
    DORMITORY_ROOM: [nullsLast((s) => s.dormitoryRoom, d)],
  };
  const key = sortBy ?? 'ID';
  return sortRule(key, d, ...parts[key]);
}

/** A whole student query: the test, the order, and the id it names (a look-up). */
export function studentQuery(c: StudentCriteria, sortBy: StudentSortBy | null | undefined, direction: 1 | -1): ListQuery<StudentDoc> {
  return {
    matches: studentMatcher(c),
    filterKey: criteriaKey(c, CRITERIA),
    sort: studentSort(sortBy, direction),
    id: c.studentId ?? undefined,
  };
}
