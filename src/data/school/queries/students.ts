import type { StudentSortBy } from '../../__generated__/enums.js';
import type { StudentDoc } from '../../models/student.model.js';
import { compareText, containsText, equals, listQueries, nullsLast, type Compare, type ListQuery } from './page.js';

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

/** Roles hidden by the enrolment rules: onlyEnrolled > includeGraduates > includeWithdrawn. */
export function excludedRoles(c: StudentCriteria): StudentDoc['role'][] {
  if (c.onlyEnrolled) return ['GRADUATE', 'WITHDRAWN'];
  const excluded: StudentDoc['role'][] = [];
  if (!c.includeGraduates) excluded.push('GRADUATE');
  if (!c.includeWithdrawn) excluded.push('WITHDRAWN');
  return excluded;
}

/**
 * The tests of a student query's criteria (the role and the enrolment rules are applied apart), and
 * its orders per StudentSortBy, made total by the id. Grade, class, number, major and student
 * number are null exactly for graduates and withdrawn students, the room for students outside the
 * dormitory: those sort last in both directions.
 */
const STUDENTS = listQueries<StudentCriteria, StudentDoc, StudentSortBy>({
  tests: {
    studentId: (id) => equals((s) => s._id, id),
    name: (name) => containsText((s) => s.name, name),
    email: (email) => containsText((s) => s.email, email),
    grade: (grade) => equals((s) => s.grade, grade),
    classNum: (classNum) => equals((s) => s.classNum, classNum),
    number: (number) => equals((s) => s.number, number),
    sex: (sex) => equals((s) => s.sex, sex),
    role: null,
    major: (major) => equals((s) => s.major, major),
    dormitoryRoom: (room) => equals((s) => s.dormitoryRoom, room),
    includeGraduates: null,
    includeWithdrawn: null,
    onlyEnrolled: null,
  },
  orders: (d) => {
    const text =
      (field: (s: StudentDoc) => string): Compare<StudentDoc> =>
      (a, b) =>
        d * compareText(field(a), field(b));
    return {
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
  },
  defaultOrder: 'ID',
});

/**
 * The test of a student query; omitted criteria are not applied. The enrolment rules always
 * apply, to an explicit role too: a role they hide matches nothing.
 */
export function studentMatcher(c: StudentCriteria): (s: StudentDoc) => boolean {
  const excluded = excludedRoles(c);
  if (c.role != null) {
    const role = c.role;
    return excluded.includes(role) ? () => false : STUDENTS.matcher(c, [equals((s) => s.role, role)]);
  }
  return STUDENTS.matcher(c, excluded.length > 0 ? [(s) => !excluded.includes(s.role)] : []);
}

/** The order of a student query per StudentSortBy. */
export const studentSort = STUDENTS.sort;

/** A whole student query: the test, the order, and the id it names (a look-up). */
export function studentQuery(c: StudentCriteria, sortBy: StudentSortBy | null | undefined, direction: 1 | -1): ListQuery<StudentDoc> {
  return { matches: studentMatcher(c), filterKey: STUDENTS.key(c), sort: studentSort(sortBy, direction), id: c.studentId ?? undefined };
}
