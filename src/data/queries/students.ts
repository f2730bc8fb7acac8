import type { StudentDoc } from '../models/student.model.js';
import { containsInsensitive, withIdTieBreaker, type SortSpec } from './page.js';

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

export type StudentSortBy =
  | 'ID' | 'NAME' | 'EMAIL' | 'STUDENT_NUMBER' | 'GRADE' | 'CLASS_NUM' | 'NUMBER' | 'MAJOR' | 'ROLE' | 'SEX' | 'DORMITORY_ROOM';

/** Roles hidden by the enrolment rules: onlyEnrolled > includeGraduates > includeWithdrawn. */
export function excludedRoles(c: StudentCriteria): StudentDoc['role'][] {
  if (c.onlyEnrolled) return ['GRADUATE', 'WITHDRAWN'];
  const excluded: StudentDoc['role'][] = [];
  if (!c.includeGraduates) excluded.push('GRADUATE');
  if (!c.includeWithdrawn) excluded.push('WITHDRAWN');
  return excluded;
}

/** The MongoDB filter of a student query; omitted criteria are not applied. */
export function studentFilter(c: StudentCriteria): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  if (c.studentId != null) filter['_id'] = c.studentId;
  if (c.name != null) filter['name'] = containsInsensitive(c.name);
  if (c.email != null) filter['email'] = containsInsensitive(c.email);
  for (const field of ['grade', 'classNum', 'number', 'dormitoryRoom', 'sex', 'major'] as const) {
    const value = c[field];
    if (value != null) filter[field] = value;
  }
  const excluded = excludedRoles(c);
  if (c.role != null) filter['role'] = excluded.includes(c.role) ? { $in: [] } : c.role;
  else if (excluded.length > 0) filter['role'] = { $nin: excluded };
  return filter;
}

/**
 * Sort keys per StudentSortBy. Fields that are null for graduates (or for students outside the
 * dormitory) sort after a rank field that is always ascending, so nulls come last both ways.
 */
export function studentSort(sortBy: StudentSortBy | null | undefined, direction: 1 | -1): SortSpec {
  const d = direction;
  const specs: Record<StudentSortBy, SortSpec> = {
    ID: { _id: d },
    NAME: { name: d },
    EMAIL: { email: d },
    STUDENT_NUMBER: { enrolledRank: 1, grade: d, classNum: d, number: d },
    GRADE: { enrolledRank: 1, grade: d },
    CLASS_NUM: { enrolledRank: 1, classNum: d },
    NUMBER: { enrolledRank: 1, number: d },
    MAJOR: { enrolledRank: 1, major: d },
    ROLE: { role: d },
    SEX: { sex: d },
    DORMITORY_ROOM: { dormitoryRank: 1, dormitoryRoom: d },
  };
  return withIdTieBreaker(specs[sortBy ?? 'ID']);
}
