import { randomUUID } from 'node:crypto';
import type { Database } from '../database.js';
import type { ClubDoc } from '../models/club.model.js';
import type { ProjectDoc } from '../models/project.model.js';
import { toStudentRecord, type StudentDoc, type StudentInput } from '../models/student.model.js';
import { withSchoolLock } from './engine.js';

/**
 * A deterministic demo school: 3 grades x 4 classes of up to 18 students, graduates and
 * withdrawn students, dormitory rooms, 16 clubs of both types and 24 projects. The same
 * pseudo-random sequence every run, so seeding twice leaves the same data.
 */
export interface DemoSchool {
  students: StudentDoc[];
  clubs: ClubDoc[];
  projects: ProjectDoc[];
}

const FAMILY = ['김', '이', '박', '최', '정', '강', '조', '윤', '장', '임', '한', '오', '서', '신', '권', '황', '안', '송', '류', '홍'];
const GIVEN = [
  '민준',
  '서연',
  '도윤',
  '지우',
  '하준',
  '서윤',
  '시우',
  '하은',
  '주원',
  '지민',
  '예준',
  '수아',
  '지호',
  '지유',
  '준서',
  '채원',
  '건우',
  '다은',
  '현우',
  '예린',
  '우진',
  '소율',
  '선우',
  '윤서',
  '유준',
  '하린',
  '연우',
  '지안',
  '은우',
  '서아',
];
const ROMAN_FAMILY: Record<string, string> = {
  김: 'kim',
  이: 'lee',
  박: 'park',
  최: 'choi',
  정: 'jung',
  강: 'kang',
  조: 'cho',
  윤: 'yoon',
  장: 'jang',
  임: 'lim',
  한: 'han',
  오: 'oh',
  서: 'seo',
  신: 'shin',
  권: 'kwon',
  황: 'hwang',
  안: 'ahn',
  송: 'song',
  류: 'ryu',
  홍: 'hong',
};
const SPECIALTIES = ['Backend', 'Frontend', 'Android', 'iOS', 'Embedded', 'Machine learning', 'DevOps', 'Game', 'Security', 'Design'];

const MAJOR_CLUBS = ['Quokka', 'Sixteen', 'Entry Point', 'Apptive', 'Spark', 'Byte Forge', 'Circuit Lab', 'Neural Nest'];
const AUTONOMOUS_CLUBS = [
  '밴드부 소리',
  '농구부 덩크',
  '독서토론 책갈피',
  '사진부 셔터',
  'Algorithm Study',
  '보드게임 주사위',
  'E-sports GG',
  '봉사단 햇살',
];

/** mulberry32: a tiny seeded generator, enough for reproducible demo data. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Builds the demo school in memory (pure: same output every call). */
export function buildDemoSchool(): DemoSchool {
  const random = seeded(20260301);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

  const clubs: ClubDoc[] = [
    ...MAJOR_CLUBS.map((name, i) => club(i + 1, name, 'MAJOR_CLUB', 2016 + (i % 8))),
    ...AUTONOMOUS_CLUBS.map((name, i) => club(i + 101, name, 'AUTONOMOUS_CLUB', 2018 + (i % 6))),
  ];
  // One abolished club, to show the optional status fields.
  const abolished = clubs[7];
  if (abolished) Object.assign(abolished, { status: 'ABOLISHED', abolishedYear: 2025 });

  const inputs: StudentInput[] = [];
  let id = 1;
  const usedEmails = new Set<string>();
  const person = (sex: 'MAN' | 'WOMAN') => {
    const family = pick(FAMILY);
    const given = pick(GIVEN);
    let email = `${ROMAN_FAMILY[family] ?? 'student'}${id}@gsm.hs.kr`;
    while (usedEmails.has(email)) email = `s${id}.${email}`;
    usedEmails.add(email);
    return { name: `${family}${given}`, sex, email };
  };

  for (let grade = 1; grade <= 3; grade++) {
    for (let classNum = 1; classNum <= 4; classNum++) {
      const size = 16 + ((grade + classNum) % 3); // 16..18 students
      const major = classNum <= 2 ? 'SW_DEVELOPMENT' : classNum === 3 ? 'SMART_IOT' : 'AI';
      for (let number = 1; number <= size; number++) {
        const sex = random() < 0.8 ? 'MAN' : 'WOMAN';
        const inDorm = random() < 0.6;
        const floor = sex === 'MAN' ? 2 + (grade % 3) : 5;
        const role =
          number === 1 && classNum === 1
            ? 'STUDENT_COUNCIL'
            : number === 2 && classNum === 2 && inDorm
              ? 'DORMITORY_MANAGER'
              : 'GENERAL_STUDENT';
        inputs.push({
          _id: id,
          ...person(sex),
          grade,
          classNum,
          number,
          major,
          role,
          dormitoryFloor: inDorm ? floor : null,
          // Rooms 01-18 on each floor: the school's rule (src/data/school/rules.ts) allows 201 to 518.
          dormitoryRoom: inDorm ? floor * 100 + 1 + Math.floor(random() * 18) : null,
          majorClubId: random() < 0.85 ? 1 + Math.floor(random() * 7) : null,
          autonomousClubId: random() < 0.5 ? 101 + Math.floor(random() * 8) : null,
          specialty: random() < 0.7 ? pick(SPECIALTIES) : null,
          githubId: null,
          githubUrl: null,
        });
        id++;
      }
    }
  }
  // Graduates and withdrawn students: no grade, class, number, major; graduates keep no clubs.
  for (let i = 0; i < 24; i++) {
    const withdrawn = i % 6 === 5;
    inputs.push({
      _id: id,
      ...person(random() < 0.75 ? 'MAN' : 'WOMAN'),
      grade: null,
      classNum: null,
      number: null,
      major: null,
      role: withdrawn ? 'WITHDRAWN' : 'GRADUATE',
      dormitoryFloor: null,
      dormitoryRoom: null,
      majorClubId: null,
      autonomousClubId: null,
    });
    id++;
  }
  for (const input of inputs) {
    if (input.specialty && random() < 0.5) {
      const login = `${input.email.split('@')[0] ?? 'student'}-dev`;
      input.githubId = login;
      input.githubUrl = `https://github.com/${login}`;
    }
  }
  const students = inputs.map(toStudentRecord);

  // Leaders: an enrolled member of the club, third graders first. The last autonomous club is
  // led by a graduate, which the API shows as a null leader.
  for (const c of clubs) {
    const members = students.filter((s) => (c.type === 'MAJOR_CLUB' ? s.majorClubId : s.autonomousClubId) === c._id);
    const leader = [...members].sort((a, b) => (b.grade ?? 0) - (a.grade ?? 0) || a._id - b._id)[0];
    c.leaderId = leader?._id ?? null;
  }
  const lastClub = clubs[clubs.length - 1];
  const graduate = students.find((s) => s.role === 'GRADUATE');
  if (lastClub && graduate) lastClub.leaderId = graduate._id;

  const projects: ProjectDoc[] = [];
  const topics = ['급식 알리미', '기숙사 점호 앱', 'Campus Map', '분리수거 IoT', 'AI 출결', 'Study Timer', '동아리 홍보관', 'Smart Farm'];
  for (let p = 1; p <= 24; p++) {
    const owner = p % 6 === 0 ? null : (clubs[(p - 1) % clubs.length] ?? null);
    const pool = owner
      ? students.filter((s) => s.majorClubId === owner._id || s.autonomousClubId === owner._id)
      : students.filter((s) => s.grade === 3);
    const participants = new Set<number>();
    const wanted = 2 + Math.floor(random() * 4);
    for (let k = 0; k < wanted * 3 && participants.size < wanted && pool.length > 0; k++) participants.add(pick(pool)._id);
    const startYear = 2023 + (p % 4);
    const ended = p % 5 === 0;
    projects.push({
      _id: p,
      name: `${topics[(p - 1) % topics.length]} ${Math.ceil(p / topics.length)}`,
      description: `${owner ? owner.name : '개인'} 팀이 만든 ${topics[(p - 1) % topics.length]} 프로젝트입니다.`,
      clubId: owner?._id ?? null,
      participantIds: [...participants].sort((a, b) => a - b),
      startYear,
      endYear: ended ? startYear + 1 : null,
      status: ended ? 'ENDED' : 'ACTIVE',
    });
  }
  return { students, clubs, projects };
}

function club(id: number, name: string, type: ClubDoc['type'], foundedYear: number): ClubDoc {
  return { _id: id, name, type, leaderId: null, foundedYear, status: 'ACTIVE', abolishedYear: null };
}

/**
 * The demo API key, fixed so the curl examples of docs/data-api.md work as written. It is published, so
 * it may exist only where `campus seed --demo` ran: production refuses it (and seeding it), and
 * `campus seed --remove-demo` removes it.
 */
export const DEMO_API_KEY = 'de70c0de-5eed-4a11-8c0d-000000000001';

/** The demo student whose email the demo login account uses. */
export const DEMO_ACCOUNT_STUDENT_ID = 1;

/** The email of the demo login account: the demo school's first student's (deterministic). */
export function demoAccountEmail(): string {
  const student = buildDemoSchool().students.find((s) => s._id === DEMO_ACCOUNT_STUDENT_ID);
  if (!student) throw new Error('the demo school has no first student');
  return student.email;
}

/** The sizes `campus seed --demo --students N` accepts (a bigger school for benchmarks: bench/uncached.ts). */
export const DEMO_STUDENTS = { min: 100, max: 20_000 } as const;

/**
 * A demo school of `size` students (DEMO_STUDENTS), deterministic like the default one.
 *
 * The school's rules (src/data/school/rules.ts: grades 1-3, classes 1-4, numbers 1-18) seat at
 * most 216 enrolled students, so a school's records grow the way a real one's do: the default
 * demo school first (when `size` is at least its size), then alumni of earlier years (graduates,
 * one in ten withdrawn) with the clubs of their time (since abolished) and their projects (ended),
 * in the default school's proportions (16 clubs and 24 projects per 228 students). A size
 * below the default school's keeps its first enrolled students and their clubs and projects.
 */
export function buildDemoSchoolOfSize(size: number): DemoSchool {
  const base = buildDemoSchool();
  if (size <= base.students.length) return trimmed(base, size);
  const random = seeded(size);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const extra = size - base.students.length;
  const clubCount = Math.round((extra * base.clubs.length) / base.students.length);
  const projectCount = Math.round((extra * base.projects.length) / base.students.length);
  const firstClubId = 1000;
  const clubs: ClubDoc[] = Array.from({ length: clubCount }, (_, i) => ({
    ...club(
      firstClubId + i,
      `${pick([...MAJOR_CLUBS, ...AUTONOMOUS_CLUBS])} ${2015 - Math.floor(i / 16)}-${(i % 16) + 1}`.slice(0, 30),
      i % 2 === 0 ? 'MAJOR_CLUB' : 'AUTONOMOUS_CLUB',
      1990 + (i % 25),
    ),
    status: 'ABOLISHED' as const,
    abolishedYear: 2016 + (i % 9),
  }));
  const alumni = Array.from({ length: extra }, (_, i) => {
    const id = base.students.length + 1 + i;
    const family = pick(FAMILY);
    const withdrawn = i % 10 === 9;
    return toStudentRecord({
      _id: id,
      name: `${family}${pick(GIVEN)}`,
      sex: random() < 0.75 ? 'MAN' : 'WOMAN',
      email: `${ROMAN_FAMILY[family] ?? 'student'}${id}@gsm.hs.kr`,
      grade: null,
      classNum: null,
      number: null,
      major: null,
      role: withdrawn ? 'WITHDRAWN' : 'GRADUATE',
      dormitoryFloor: null,
      dormitoryRoom: null,
      majorClubId: null,
      autonomousClubId: null,
      specialty: random() < 0.7 ? pick(SPECIALTIES) : null,
      githubId: null,
      githubUrl: null,
    });
  });
  const projects: ProjectDoc[] = Array.from({ length: projectCount }, (_, i) => {
    const owner = clubs.length > 0 ? clubs[i % clubs.length] : undefined;
    const participants = new Set<number>();
    for (let k = 0; k < 2 + (i % 4); k++) participants.add(pick(alumni)._id);
    const startYear = 2000 + (i % 22);
    return {
      _id: base.projects.length + 1 + i,
      name: `${owner?.name ?? '개인'} 프로젝트 ${i + 1}`.slice(0, 100),
      description: `졸업생 팀이 ${startYear}년에 시작한 프로젝트입니다.`,
      clubId: owner?._id ?? null,
      participantIds: [...participants].sort((a, b) => a - b),
      startYear,
      endYear: startYear + 1,
      status: 'ENDED',
    };
  });
  return {
    students: [...base.students, ...alumni],
    clubs: [...base.clubs, ...clubs],
    projects: [...base.projects, ...projects],
  };
}

/** The first `size` students of the default school, with the clubs and projects that still fit. */
function trimmed(school: DemoSchool, size: number): DemoSchool {
  const students = school.students.slice(0, size);
  const ids = new Set(students.map((s) => s._id));
  const clubs = school.clubs.map((c) => (c.leaderId != null && !ids.has(c.leaderId) ? { ...c, leaderId: null } : c));
  const projects = school.projects
    .map((p) => ({ ...p, participantIds: p.participantIds.filter((id) => ids.has(id)) }))
    .filter((p) => p.participantIds.length > 0);
  return { students, clubs, projects };
}

/** Records per insert: FerretDB answers large batches slowly (src/data/school/engine.ts). */
const INSERT_CHUNK = 500;

/**
 * Replaces students, clubs and projects with the demo school (of `options.students` students
 * when given) and bumps the data version. `onProgress` hears the students written so far. For
 * fresh databases (tests, benchmarks); `campus seed --demo` calls loadDemoSchool, which keeps a
 * school that is there.
 */
export async function seedDemoSchool(
  db: Database,
  options: { students?: number; onProgress?: (written: number, total: number) => void } = {},
): Promise<{ students: number; clubs: number; projects: number }> {
  return writeSchool(db, options.students === undefined ? buildDemoSchool() : buildDemoSchoolOfSize(options.students), options.onProgress);
}

/** Writes a school in place of the one there (no audit: seedDemoSchool's and loadDemoSchool's common part). */
async function writeSchool(db: Database, school: DemoSchool, onProgress?: (written: number, total: number) => void): Promise<SchoolSize> {
  await db.ensureIndexes();
  const { students, clubs, projects } = db.models;
  await Promise.all([students.deleteMany({}), clubs.deleteMany({}), projects.deleteMany({})]);
  for (let i = 0; i < school.students.length; i += INSERT_CHUNK) {
    await students.insertMany(school.students.slice(i, i + INSERT_CHUNK));
    onProgress?.(Math.min(i + INSERT_CHUNK, school.students.length), school.students.length);
  }
  for (let i = 0; i < school.clubs.length; i += INSERT_CHUNK) await clubs.insertMany(school.clubs.slice(i, i + INSERT_CHUNK));
  for (let i = 0; i < school.projects.length; i += INSERT_CHUNK) await projects.insertMany(school.projects.slice(i, i + INSERT_CHUNK));
  await db.versions.bump('data');
  return { students: school.students.length, clubs: school.clubs.length, projects: school.projects.length };
}

/** How many students, clubs and projects a database holds. */
export interface SchoolSize {
  readonly students: number;
  readonly clubs: number;
  readonly projects: number;
}

/** What `campus seed --demo` did with the school's data. */
export type DemoSchoolLoad =
  /** The database held no school: the demo school was loaded. */
  | { readonly outcome: 'loaded'; readonly school: SchoolSize }
  /** The database held a school and no reset was asked for: it was left as it is. */
  | { readonly outcome: 'kept'; readonly school: SchoolSize }
  /** `--reset`: the school was replaced, as a RESET batch of the audit log that supersedes every applied change before it. */
  | {
      readonly outcome: 'reset';
      readonly school: SchoolSize;
      readonly replaced: SchoolSize;
      readonly batchId: string;
      readonly superseded: number;
    };

async function schoolSize(db: Database): Promise<SchoolSize> {
  const [students, clubs, projects] = await Promise.all([
    db.models.students.countDocuments({}),
    db.models.clubs.countDocuments({}),
    db.models.projects.countDocuments({}),
  ]);
  return { students, clubs, projects };
}

const sizeText = (s: SchoolSize) => `${s.students} students, ${s.clubs} clubs, ${s.projects} projects`;

/**
 * `campus seed --demo`: loads the demo school into a database without one, and leaves a school
 * that is there as it is (imports, edits: the work of whoever runs the demo). With `reset`, it
 * replaces it on purpose, under the school's write lock, and says so in the audit log: a RESET
 * batch, and every change applied before it marked SUPERSEDED by it (its records are gone, so its
 * undo would be meaningless; src/data/school/audit.ts refuses it and says why).
 */
export async function loadDemoSchool(
  db: Database,
  options: { reset?: boolean; students?: number; onProgress?: (written: number, total: number) => void; now?: Date } = {},
): Promise<DemoSchoolLoad> {
  const build = () => (options.students === undefined ? buildDemoSchool() : buildDemoSchoolOfSize(options.students));
  const before = await schoolSize(db);
  if (before.students + before.clubs + before.projects === 0)
    return { outcome: 'loaded', school: await writeSchool(db, build(), options.onProgress) };
  if (!options.reset) return { outcome: 'kept', school: before };
  return withSchoolLock(db, async () => {
    const replaced = await schoolSize(db);
    const batchId = randomUUID();
    const at = options.now ?? new Date();
    const school = build();
    const loaded = { students: school.students.length, clubs: school.clubs.length, projects: school.projects.length };
    await db.models.auditBatches.create({
      _id: batchId,
      at,
      actorKind: 'CLI',
      action: 'RESET',
      summary: `Demo school loaded (${sizeText(loaded)}), replacing ${sizeText(replaced)}`,
      source: 'campus seed --demo --reset',
      status: 'APPLIED',
      records: replaced.students + replaced.clubs + replaced.projects,
    });
    const superseded = await db.models.auditBatches.updateMany(
      { status: 'APPLIED', _id: { $ne: batchId } },
      { $set: { status: 'SUPERSEDED', supersededBy: batchId } },
    );
    await db.models.auditEntries.updateMany({ status: 'APPLIED' }, { $set: { status: 'SUPERSEDED' } });
    return {
      outcome: 'reset',
      school: await writeSchool(db, school, options.onProgress),
      replaced,
      batchId,
      superseded: superseded.modifiedCount,
    };
  });
}
