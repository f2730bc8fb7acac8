import type { ClubDoc } from '../models/club.model.js';
import type { StudentDoc } from '../models/student.model.js';

/**
 * The summaries a record is shown as inside another (docs/decisions.md: a record reached through
 * another shows only what the caller's scopes allow on its own endpoint). One list per shape,
 * read by the GraphQL field rule (src/graphql/field-scopes.ts) and by the presenters below, which
 * the change feed's events, userinfo and the student record use; the REST operations' selections
 * (src/rest/operations/*.ts, static for graphql-codegen) are held to these lists by
 * test/school-records/student-record.unit.test.ts.
 */
export const SUMMARY_FIELDS = {
  /** A student inside a club or a project (GET /v1/clubs, /v1/projects). */
  participant: ['id', 'name', 'email', 'studentNumber', 'major', 'sex'],
  /** A club inside a student or a project (GET /v1/students, /v1/projects). */
  club: ['id', 'name', 'type'],
  /** A project, reached only from its own root field: its summary is its id and name. */
  project: ['id', 'name'],
} as const satisfies Record<string, readonly string[]>;

/** A student inside a club or a project. */
export function participantSummary(s: StudentDoc) {
  return { id: s._id, name: s.name, email: s.email, studentNumber: s.studentNumber ?? null, major: s.major ?? null, sex: s.sex };
}

/** Clubs by id, as the read model (src/data/school/read-model.ts) and a plain Map both hold them. */
export interface ClubsById {
  get(id: number): ClubDoc | undefined;
}

/** A club inside a student record or a project. */
export type ClubSummary = {
  readonly id: number;
  readonly name: string;
  readonly type: ClubDoc['type'];
};

/** The summary of a club by id, or null (no such id, or no club). */
export function clubSummary(id: number | null | undefined, clubs: ClubsById): ClubSummary | null {
  const club = id == null ? undefined : clubs.get(id);
  return club ? { id: club._id, name: club.name, type: club.type } : null;
}
