import type { Database } from '../database.js';
import type { ClubDoc } from '../models/club.model.js';
import type { ProjectDoc } from '../models/project.model.js';
import { toStudentRecord, type StudentDoc, type StudentInput } from '../models/student.model.js';

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
  '민준', '서연', '도윤', '지우', '하준', '서윤', '시우', '하은', '주원', '지민', '예준', '수아', '지호', '지유', '준서', '채원',
  '건우', '다은', '현우', '예린', '우진', '소율', '선우', '윤서', '유준', '하린', '연우', '지안', '은우', '서아',
];
const ROMAN_FAMILY: Record<string, string> = {
  김: 'kim', 이: 'lee', 박: 'park', 최: 'choi', 정: 'jung', 강: 'kang', 조: 'cho', 윤: 'yoon', 장: 'jang', 임: 'lim',
  한: 'han', 오: 'oh', 서: 'seo', 신: 'shin', 권: 'kwon', 황: 'hwang', 안: 'ahn', 송: 'song', 류: 'ryu', 홍: 'hong',
};
const SPECIALTIES = ['Backend', 'Frontend', 'Android', 'iOS', 'Embedded', 'Machine learning', 'DevOps', 'Game', 'Security', 'Design'];

const MAJOR_CLUBS = ['Quokka', 'Sixteen', 'Entry Point', 'Apptive', 'Spark', 'Byte Forge', 'Circuit Lab', 'Neural Nest'];
const AUTONOMOUS_CLUBS = ['밴드부 소리', '농구부 덩크', '독서토론 책갈피', '사진부 셔터', 'Algorithm Study', '보드게임 주사위', 'E-sports GG', '봉사단 햇살'];

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
          number === 1 && classNum === 1 ? 'STUDENT_COUNCIL' : number === 2 && classNum === 2 && inDorm ? 'DORMITORY_MANAGER' : 'GENERAL_STUDENT';
        inputs.push({
          _id: id,
          ...person(sex),
          grade,
          classNum,
          number,
          major,
          role,
          dormitoryFloor: inDorm ? floor : null,
          dormitoryRoom: inDorm ? floor * 100 + 1 + Math.floor(random() * 20) : null,
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

/** Replaces students, clubs and projects with the demo school and bumps the data version. */
export async function seedDemoSchool(db: Database): Promise<{ students: number; clubs: number; projects: number }> {
  const school = buildDemoSchool();
  await db.ensureIndexes();
  const { students, clubs, projects } = db.models;
  await Promise.all([students.deleteMany({}), clubs.deleteMany({}), projects.deleteMany({})]);
  await students.insertMany(school.students);
  await clubs.insertMany(school.clubs);
  await projects.insertMany(school.projects);
  await db.versions.bump('data');
  return { students: school.students.length, clubs: school.clubs.length, projects: school.projects.length };
}
