import { clubSummary, type ClubsById } from './shapes.js';
import type { StudentDoc } from '../models/student.model.js';

/**
 * The Student record of the data API, built from a stored student: the one builder of the shape
 * GET /v1/students answers (its selection, src/rest/operations/student-record.ts, names the
 * same fields in the same order; test/school-records/student-record.unit.test.ts holds the two together), for
 * every other place that shows it: userinfo (src/oauth/userinfo.ts), the change feed's events
 * (src/data/events/outbox.ts) and the console's profile. As the GraphQL resolvers do
 * (src/graphql/resolvers/student.ts), `id` is the stored `_id`, the two clubs are their
 * summaries (or null), and an absent value is null.
 */
export function studentRecord(s: StudentDoc, clubs: ClubsById) {
  return {
    id: s._id,
    ...studentValues(s),
    majorClub: clubSummary(s.majorClubId, clubs),
    autonomousClub: clubSummary(s.autonomousClubId, clubs),
    specialty: s.specialty ?? null,
    githubId: s.githubId ?? null,
    githubUrl: s.githubUrl ?? null,
  };
}

/**
 * A stored student's own values from its name to its room, in this order, null where an older
 * record lacks one: the head of both the stored record (normalizeStudent, ./state.ts) and the
 * Student record.
 */
export function studentValues(s: StudentDoc) {
  return {
    name: s.name,
    sex: s.sex,
    email: s.email,
    grade: s.grade ?? null,
    classNum: s.classNum ?? null,
    number: s.number ?? null,
    studentNumber: s.studentNumber ?? null,
    major: s.major ?? null,
    role: s.role,
    dormitoryFloor: s.dormitoryFloor ?? null,
    dormitoryRoom: s.dormitoryRoom ?? null,
  };
}
