import type { PolicySettings } from '../../src/auth/policy.js';
import { loadConfig } from '../../src/config/index.js';
import { ApiKeyService, API_SCOPES, type ApiScope } from '../../src/data/keys/store.js';
import type { Database } from '../../src/data/database.js';
import type { ClubDoc } from '../../src/data/models/club.model.js';
import type { ProjectDoc } from '../../src/data/models/project.model.js';
import { toStudentRecord, type StudentDoc, type StudentInput } from '../../src/data/models/student.model.js';

/**
 * The fields of a student record as the API shows it (GET /v1/students, the change feed), in the
 * order of the spec's StudentResDto, the extras after. Written out here, not read from the code,
 * so that a test of the order fails when the code's order changes.
 */
export const STUDENT_RECORD_FIELDS = [
  'id',
  'name',
  'sex',
  'email',
  'grade',
  'classNum',
  'number',
  'studentNumber',
  'major',
  'role',
  'dormitoryFloor',
  'dormitoryRoom',
  'majorClub',
  'autonomousClub',
  'specialty',
  'githubId',
  'githubUrl',
] as const;

/** A valid enrolled student; override any field. */
export function buildStudent(overrides: Partial<StudentInput> & { _id: number }): StudentDoc {
  return toStudentRecord({
    name: `Student ${overrides._id}`,
    sex: 'MAN',
    email: `s${overrides._id}@school.test`,
    grade: 1,
    classNum: 1,
    number: 1,
    major: 'SW_DEVELOPMENT',
    role: 'GENERAL_STUDENT',
    dormitoryFloor: null,
    dormitoryRoom: null,
    majorClubId: null,
    autonomousClubId: null,
    ...overrides,
  });
}

export function buildClub(overrides: Partial<ClubDoc> & { _id: number }): ClubDoc {
  return {
    name: `Club ${overrides._id}`,
    type: 'MAJOR_CLUB',
    leaderId: null,
    foundedYear: null,
    status: 'ACTIVE',
    abolishedYear: null,
    ...overrides,
  };
}

export function buildProject(overrides: Partial<ProjectDoc> & { _id: number }): ProjectDoc {
  return {
    name: `Project ${overrides._id}`,
    description: 'A project',
    clubId: null,
    participantIds: [],
    startYear: null,
    endYear: null,
    status: 'ACTIVE',
    ...overrides,
  };
}

/** Inserts records and bumps the data version (as every real write does). */
export async function insertSchool(
  db: Database,
  records: { students?: StudentDoc[]; clubs?: ClubDoc[]; projects?: ProjectDoc[] },
): Promise<void> {
  if (records.students?.length) await db.models.students.insertMany(records.students);
  if (records.clubs?.length) await db.models.clubs.insertMany(records.clubs);
  if (records.projects?.length) await db.models.projects.insertMany(records.projects);
  await db.versions.bump('data');
}

/** The privilege settings of a test service with no overrides (src/config/index.ts), for services made without an app. */
export const TEST_POLICY: PolicySettings = loadConfig({ NODE_ENV: 'test' }).policy;

/** Issues an API key (all scopes unless given) and returns its value. */
export async function issueKey(
  db: Database,
  options: { scopes?: ApiScope[]; days?: number; rateLimit?: { points: number; durationSeconds: number }; now?: Date } = {},
): Promise<string> {
  const { key } = await new ApiKeyService(db, TEST_POLICY).issue({
    scopes: options.scopes ?? [...API_SCOPES],
    ...(options.days ? { days: options.days } : {}),
    ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  return key;
}
