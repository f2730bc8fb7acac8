import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk, expectPage } from '../helpers/expect.js';
import { itSorts, walkPages } from '../helpers/parameters.js';
import { buildClub, buildStudent, insertSchool, issueKey, STUDENT_RECORD_FIELDS } from '../helpers/factories.js';

/**
 * GET /v1/students over HTTP against a real database: every parameter (valid values, each
 * boundary, each kind of invalid value), the enrolment rules, filters, every sort in both
 * directions with paging, and the exact envelope and paging wrapper.
 */

interface ClubSummary {
  id: number;
  name: string;
  type: string;
}
interface Student {
  id: number;
  name: string;
  sex: string;
  email: string;
  grade: number | null;
  classNum: number | null;
  number: number | null;
  studentNumber: number | null;
  major: string | null;
  role: string;
  dormitoryFloor: number | null;
  dormitoryRoom: number | null;
  majorClub: ClubSummary | null;
  autonomousClub: ClubSummary | null;
  specialty: string | null;
  githubId: string | null;
  githubUrl: string | null;
}
interface StudentPage {
  totalPages: number;
  totalElements: number;
  students: Student[];
}

/*
 * The school of this file. Enrolled: 1, 2, 3, 5, 7, 8, 11, 12; graduates: 4, 9; withdrawn: 6, 10.
 * Names tie ('Kim Minsu' x3, 'Lee Jiwoo' x2), dormitory rooms tie (201 x2, 301 x2), three
 * enrolled students live outside the dormitory. Emails are chosen so that their order is its
 * own permutation.
 *
 *  id name            sex    email     g c n   major           role               room
 *   1 Kim Minsu       MAN    delta     2 1 5   SW_DEVELOPMENT  GENERAL_STUDENT    301
 *   2 Lee Jiwoo       WOMAN  alpha     1 3 18  AI              STUDENT_COUNCIL    -
 *   3 Kim Minsu       WOMAN  hotel     3 4 1   SMART_IOT       DORMITORY_MANAGER  412
 *   4 Park Graduate   MAN    india     -       -               GRADUATE           -
 *   5 Han Sora        WOMAN  charlie   1 1 1   SW_DEVELOPMENT  GENERAL_STUDENT    201
 *   6 Choi Withdrawn  MAN    juliet    -       -               WITHDRAWN          -
 *   7 Kim Minsu       MAN    bravo     2 1 4   AI              GENERAL_STUDENT    301
 *   8 Yoon Alone      MAN    golf      3 2 7   SMART_IOT       GENERAL_STUDENT    -     (autonomous club 99: no such club)
 *   9 Ahn Grad        WOMAN  kilo      -       -               GRADUATE           -
 *  10 Bae Withdrawn   WOMAN  lima      -       -               WITHDRAWN          -
 *  11 Seo Jun         MAN    echo      1 1 2   SW_DEVELOPMENT  STUDENT_COUNCIL    201
 *  12 Lee Jiwoo       MAN    foxtrot   3 4 18  AI              GENERAL_STUDENT    -
 */
const ENROLLED = [1, 2, 3, 5, 7, 8, 11, 12];
const GRADUATES = [4, 9];
const WITHDRAWN = [6, 10];
const ALL = [...ENROLLED, ...GRADUATES, ...WITHDRAWN].sort((a, b) => a - b);

function school() {
  const enrolled = (
    id: number,
    name: string,
    sex: 'MAN' | 'WOMAN',
    email: string,
    g: number,
    c: number,
    n: number,
    major: 'SW_DEVELOPMENT' | 'SMART_IOT' | 'AI',
    role: 'GENERAL_STUDENT' | 'STUDENT_COUNCIL' | 'DORMITORY_MANAGER',
    room: number | null,
  ) =>
    buildStudent({
      _id: id,
      name,
      sex,
      email,
      grade: g,
      classNum: c,
      number: n,
      major,
      role,
      dormitoryFloor: room == null ? null : Math.floor(room / 100),
      dormitoryRoom: room,
    });
  const left = (id: number, name: string, sex: 'MAN' | 'WOMAN', email: string, role: 'GRADUATE' | 'WITHDRAWN') =>
    buildStudent({ _id: id, name, sex, email, role, grade: null, classNum: null, number: null, major: null });
  return [
    {
      ...enrolled(1, 'Kim Minsu', 'MAN', 'delta@school.test', 2, 1, 5, 'SW_DEVELOPMENT', 'GENERAL_STUDENT', 301),
      majorClubId: 10,
      autonomousClubId: 20,
    },
    { ...enrolled(2, 'Lee Jiwoo', 'WOMAN', 'Alpha@School.test', 1, 3, 18, 'AI', 'STUDENT_COUNCIL', null), autonomousClubId: 20 },
    {
      ...enrolled(3, 'Kim Minsu', 'WOMAN', 'hotel@school.test', 3, 4, 1, 'SMART_IOT', 'DORMITORY_MANAGER', 412),
      specialty: 'Backend',
      githubId: 'kim3',
      githubUrl: 'https://github.com/kim3',
    },
    left(4, 'Park Graduate', 'MAN', 'india@school.test', 'GRADUATE'),
    enrolled(5, 'Han Sora', 'WOMAN', 'charlie@school.test', 1, 1, 1, 'SW_DEVELOPMENT', 'GENERAL_STUDENT', 201),
    left(6, 'Choi Withdrawn', 'MAN', 'juliet@school.test', 'WITHDRAWN'),
    enrolled(7, 'Kim Minsu', 'MAN', 'bravo@school.test', 2, 1, 4, 'AI', 'GENERAL_STUDENT', 301),
    { ...enrolled(8, 'Yoon Alone', 'MAN', 'golf@school.test', 3, 2, 7, 'SMART_IOT', 'GENERAL_STUDENT', null), autonomousClubId: 99 },
    left(9, 'Ahn Grad', 'WOMAN', 'kilo@school.test', 'GRADUATE'),
    left(10, 'Bae Withdrawn', 'WOMAN', 'lima@school.test', 'WITHDRAWN'),
    enrolled(11, 'Seo Jun', 'MAN', 'echo@school.test', 1, 1, 2, 'SW_DEVELOPMENT', 'STUDENT_COUNCIL', 201),
    enrolled(12, 'Lee Jiwoo', 'MAN', 'foxtrot@school.test', 3, 4, 18, 'AI', 'GENERAL_STUDENT', null),
  ];
}

/** Expected orders, stated by hand from the table above (ties broken by id ascending). */
const ORDER_ENROLLED: Record<string, { ASC: number[]; DESC: number[] }> = {
  ID: { ASC: [1, 2, 3, 5, 7, 8, 11, 12], DESC: [12, 11, 8, 7, 5, 3, 2, 1] },
  NAME: { ASC: [5, 1, 3, 7, 2, 12, 11, 8], DESC: [8, 11, 2, 12, 1, 3, 7, 5] },
  EMAIL: { ASC: [2, 7, 5, 1, 11, 12, 8, 3], DESC: [3, 8, 12, 11, 1, 5, 7, 2] },
  STUDENT_NUMBER: { ASC: [5, 11, 2, 7, 1, 8, 3, 12], DESC: [12, 3, 8, 1, 7, 2, 11, 5] },
  GRADE: { ASC: [2, 5, 11, 1, 7, 3, 8, 12], DESC: [3, 8, 12, 1, 7, 2, 5, 11] },
  CLASS_NUM: { ASC: [1, 5, 7, 11, 8, 2, 3, 12], DESC: [3, 12, 2, 8, 1, 5, 7, 11] },
  NUMBER: { ASC: [3, 5, 11, 7, 1, 8, 2, 12], DESC: [2, 12, 8, 1, 7, 11, 3, 5] },
  MAJOR: { ASC: [2, 7, 12, 3, 8, 1, 5, 11], DESC: [1, 5, 11, 3, 8, 2, 7, 12] },
  ROLE: { ASC: [3, 1, 5, 7, 8, 12, 2, 11], DESC: [2, 11, 1, 5, 7, 8, 12, 3] },
  SEX: { ASC: [1, 7, 8, 11, 12, 2, 3, 5], DESC: [2, 3, 5, 1, 7, 8, 11, 12] },
  DORMITORY_ROOM: { ASC: [5, 11, 1, 7, 3, 2, 8, 12], DESC: [3, 1, 7, 5, 11, 2, 8, 12] },
};

/** With graduates and withdrawn students included: their null fields sort last both ways. */
const ORDER_ALL: Record<string, { ASC: number[]; DESC: number[] }> = {
  ID: { ASC: ALL, DESC: [...ALL].reverse() },
  NAME: { ASC: [9, 10, 6, 5, 1, 3, 7, 2, 12, 4, 11, 8], DESC: [8, 11, 4, 2, 12, 1, 3, 7, 5, 6, 10, 9] },
  EMAIL: { ASC: [2, 7, 5, 1, 11, 12, 8, 3, 4, 6, 9, 10], DESC: [10, 9, 6, 4, 3, 8, 12, 11, 1, 5, 7, 2] },
  STUDENT_NUMBER: { ASC: [5, 11, 2, 7, 1, 8, 3, 12, 4, 6, 9, 10], DESC: [12, 3, 8, 1, 7, 2, 11, 5, 4, 6, 9, 10] },
  GRADE: { ASC: [2, 5, 11, 1, 7, 3, 8, 12, 4, 6, 9, 10], DESC: [3, 8, 12, 1, 7, 2, 5, 11, 4, 6, 9, 10] },
  CLASS_NUM: { ASC: [1, 5, 7, 11, 8, 2, 3, 12, 4, 6, 9, 10], DESC: [3, 12, 2, 8, 1, 5, 7, 11, 4, 6, 9, 10] },
  NUMBER: { ASC: [3, 5, 11, 7, 1, 8, 2, 12, 4, 6, 9, 10], DESC: [2, 12, 8, 1, 7, 11, 3, 5, 4, 6, 9, 10] },
  MAJOR: { ASC: [2, 7, 12, 3, 8, 1, 5, 11, 4, 6, 9, 10], DESC: [1, 5, 11, 3, 8, 2, 7, 12, 4, 6, 9, 10] },
  ROLE: { ASC: [3, 1, 5, 7, 8, 12, 4, 9, 2, 11, 6, 10], DESC: [6, 10, 2, 11, 4, 9, 1, 5, 7, 8, 12, 3] },
  SEX: { ASC: [1, 4, 6, 7, 8, 11, 12, 2, 3, 5, 9, 10], DESC: [2, 3, 5, 9, 10, 1, 4, 6, 7, 8, 11, 12] },
  DORMITORY_ROOM: { ASC: [5, 11, 1, 7, 3, 2, 4, 6, 8, 9, 10, 12], DESC: [3, 1, 7, 5, 11, 2, 4, 6, 8, 9, 10, 12] },
};

describe('data API: GET /v1/students', () => {
  let t: TestApp;
  let key: string;

  const get = (query = '') => t.request(`/v1/students${query}`, { headers: { 'X-API-KEY': key } });
  const ok = async (query = '') => expectOk<StudentPage>(await get(query));
  const ids = async (query = '') => (await ok(query)).students.map((s) => s.id);
  const expect400 = async (query: string, parameter: string, allowed: string) => {
    const body = await expectEnvelope(await get(query), 400, 'BAD_REQUEST', `'${parameter}'`);
    expect(body.message, `${query}`).to.include(allowed);
    return body;
  };

  before(async () => {
    t = await buildTestApp('students', { surfaces: ['data'] });
    await insertSchool(t.db, {
      clubs: [
        buildClub({ _id: 10, name: 'Robotics', type: 'MAJOR_CLUB', leaderId: 1 }),
        buildClub({ _id: 20, name: 'Band', type: 'AUTONOMOUS_CLUB' }),
      ],
      students: school(),
    });
    key = await issueKey(t.db, { scopes: ['STUDENT_READ'], rateLimit: { points: 100000, durationSeconds: 60 } });
  });
  after(() => t.close());

  describe('envelope and paging wrapper', () => {
    it('answers the exact envelope, wrapper and record shape', async () => {
      const res = await get('?studentId=1');
      const data = await expectPage<StudentPage>(res, 'students');
      expect(data).to.deep.equal({
        totalPages: 1,
        totalElements: 1,
        students: [
          {
            id: 1,
            name: 'Kim Minsu',
            sex: 'MAN',
            email: 'delta@school.test',
            grade: 2,
            classNum: 1,
            number: 5,
            studentNumber: 2105,
            major: 'SW_DEVELOPMENT',
            role: 'GENERAL_STUDENT',
            dormitoryFloor: 3,
            dormitoryRoom: 301,
            majorClub: { id: 10, name: 'Robotics', type: 'MAJOR_CLUB' },
            autonomousClub: { id: 20, name: 'Band', type: 'AUTONOMOUS_CLUB' },
            specialty: null,
            githubId: null,
            githubUrl: null,
          },
        ],
      });
      // Field order of the record is that of the spec's StudentResDto, extras after.
      expect(Object.keys(data.students[0] ?? {})).to.deep.equal(STUDENT_RECORD_FIELDS);
    });

    it('shows the optional extras when a student has them', async () => {
      const [s] = (await ok('?studentId=3')).students;
      expect(s).to.include({
        specialty: 'Backend',
        githubId: 'kim3',
        githubUrl: 'https://github.com/kim3',
        majorClub: null,
        autonomousClub: null,
      });
    });

    it('a student outside the dormitory, and a reference to a club that does not exist, read as null', async () => {
      const [s] = (await ok('?studentId=8')).students;
      expect(s).to.include({ dormitoryFloor: null, dormitoryRoom: null, majorClub: null, autonomousClub: null, studentNumber: 3207 });
    });

    it('graduates and withdrawn students have null grade, classNum, number, studentNumber and major', async () => {
      const data = await ok('?includeGraduates=true&includeWithdrawn=true&role=GRADUATE');
      expect(data.students.map((s) => s.id)).to.deep.equal(GRADUATES);
      for (const s of [...data.students, ...(await ok('?includeWithdrawn=true&role=WITHDRAWN')).students]) {
        expect(s, `student ${s.id}`).to.include({ grade: null, classNum: null, number: null, studentNumber: null, major: null });
        expect(s.dormitoryRoom).to.equal(null);
      }
      expect((await ok('?includeWithdrawn=true&role=WITHDRAWN')).students.map((s) => s.id)).to.deep.equal(WITHDRAWN);
    });

    it('defaults: page 0, id ascending, graduates and withdrawn excluded', async () => {
      const data = await ok();
      expect(data.totalElements).to.equal(8);
      expect(data.totalPages).to.equal(1);
      expect(data.students.map((s) => s.id)).to.deep.equal(ENROLLED);
    });

    it('totalPages is ceil(totalElements / size)', async () => {
      for (const [size, pages] of [
        [1, 8],
        [3, 3],
        [7, 2],
        [8, 1],
        [9, 1],
        [1000, 1],
      ] as const) {
        const data = await ok(`?size=${size}`);
        expect({ size, totalPages: data.totalPages, totalElements: data.totalElements }).to.deep.equal({
          size,
          totalPages: pages,
          totalElements: 8,
        });
        expect(data.students).to.have.length(Math.min(size, 8));
      }
    });

    it('a page past the end is an empty list, not an error', async () => {
      expect(await ok('?page=3&size=3')).to.deep.equal({ totalPages: 3, totalElements: 8, students: [] });
      expect(await ok('?page=2&size=3'))
        .to.have.property('students')
        .with.length(2);
      expect(await ok('?page=1')).to.deep.equal({ totalPages: 1, totalElements: 8, students: [] });
      expect(await ok('?page=2147483647&size=1000')).to.deep.equal({ totalPages: 1, totalElements: 8, students: [] });
    });

    it('no match: totalPages 0, totalElements 0, empty list', async () => {
      expect(await ok('?name=nobody')).to.deep.equal({ totalPages: 0, totalElements: 0, students: [] });
    });
  });

  describe('parameter boundaries', () => {
    const cases: [string, string | number, number][] = [
      // [parameter, value, expected HTTP status]
      ['grade', 0, 400],
      ['grade', 1, 200],
      ['grade', 3, 200],
      ['grade', 4, 400],
      ['grade', -1, 400],
      ['classNum', 0, 400],
      ['classNum', 1, 200],
      ['classNum', 4, 200],
      ['classNum', 5, 400],
      ['number', 0, 400],
      ['number', 1, 200],
      ['number', 18, 200],
      ['number', 19, 400],
      ['page', -1, 400],
      ['page', 0, 200],
      ['page', 2147483647, 200],
      ['page', 2147483648, 400],
      ['size', 0, 400],
      ['size', 1, 200],
      ['size', 1000, 200],
      ['size', 1001, 400],
      ['size', -1, 400],
      ['studentId', 0, 400],
      ['studentId', 1, 200],
      ['studentId', '9007199254740991', 200],
      ['studentId', '9007199254740992', 400],
      ['studentId', '99999999999999999999', 400],
      ['dormitoryRoom', 0, 400],
      ['dormitoryRoom', 1, 200],
    ];
    for (const [name, value, status] of cases) {
      it(`${name}=${value} -> ${status}`, async () => {
        const res = await get(`?${name}=${value}`);
        if (status === 200) {
          await expectOk(res);
        } else {
          const body = await expectEnvelope(res, 400, 'BAD_REQUEST');
          expect(body.message).to.match(
            new RegExp(`^Invalid parameter '${name}': must be an integer from -?\\d+ to \\d+ \\(got '${value}'\\)\\.$`),
          );
        }
      });
    }

    it('each boundary value selects what it names', async () => {
      expect(await ids('?grade=1')).to.deep.equal([2, 5, 11]);
      expect(await ids('?grade=3')).to.deep.equal([3, 8, 12]);
      expect(await ids('?classNum=1')).to.deep.equal([1, 5, 7, 11]);
      expect(await ids('?classNum=4')).to.deep.equal([3, 12]);
      expect(await ids('?number=1')).to.deep.equal([3, 5]);
      expect(await ids('?number=18')).to.deep.equal([2, 12]);
      expect(await ids('?size=1')).to.deep.equal([1]);
      expect(await ids('?studentId=9007199254740991')).to.deep.equal([]);
    });

    it('names the parameter and the allowed range in the 400 message', async () => {
      const body = await expectEnvelope(await get('?grade=4'), 400, 'BAD_REQUEST');
      expect(body.message).to.equal("Invalid parameter 'grade': must be an integer from 1 to 3 (got '4').");
      expect((await expectEnvelope(await get('?size=1001'), 400, 'BAD_REQUEST')).message).to.equal(
        "Invalid parameter 'size': must be an integer from 1 to 1000 (got '1001').",
      );
      expect((await expectEnvelope(await get('?page=-1'), 400, 'BAD_REQUEST')).message).to.equal(
        "Invalid parameter 'page': must be an integer from 0 to 2147483647 (got '-1').",
      );
    });
  });

  describe('invalid values of each kind', () => {
    const integers = ['studentId', 'grade', 'classNum', 'number', 'dormitoryRoom', 'page', 'size'];
    for (const name of integers) {
      for (const raw of ['abc', '1.5', '', '1e2', '0x1', '2abc']) {
        it(`${name}='${raw}' -> 400 naming ${name}`, async () => {
          await expect400(`?${name}=${encodeURIComponent(raw)}`, name, 'must be an integer from');
        });
      }
      it(`${name} given twice -> 400 naming ${name}`, async () => {
        await expect400(`?${name}=1&${name}=2`, name, 'must be given only once');
      });
    }

    const booleans = ['includeGraduates', 'includeWithdrawn', 'onlyEnrolled'];
    for (const name of booleans) {
      for (const raw of ['yes', '1', '0', '', 'on', 'truee']) {
        it(`${name}='${raw}' -> 400 naming ${name}`, async () => {
          await expect400(`?${name}=${raw}`, name, 'must be true or false');
        });
      }
      it(`${name} given twice -> 400`, async () => {
        await expect400(`?${name}=true&${name}=false`, name, 'must be given only once');
      });
    }

    it('booleans are true/false in any case', async () => {
      expect(await ids('?includeGraduates=TRUE')).to.deep.equal([1, 2, 3, 4, 5, 7, 8, 9, 11, 12]);
      expect(await ids('?includeGraduates=True&onlyEnrolled=FALSE')).to.deep.equal([1, 2, 3, 4, 5, 7, 8, 9, 11, 12]);
      expect(await ids('?includeGraduates=fAlSe')).to.deep.equal(ENROLLED);
    });

    const enums: [string, string, string[]][] = [
      ['sex', 'MAN, WOMAN', ['man', 'Man', 'MALE', '', 'MAN,WOMAN']],
      ['role', 'STUDENT_COUNCIL, DORMITORY_MANAGER, GENERAL_STUDENT, GRADUATE, WITHDRAWN', ['graduate', 'STUDENT', '']],
      ['major', 'SW_DEVELOPMENT, SMART_IOT, AI', ['ai', 'EMBEDDED', '']],
      ['sortBy', 'ID, NAME, EMAIL, STUDENT_NUMBER, GRADE, CLASS_NUM, NUMBER, MAJOR, ROLE, SEX, DORMITORY_ROOM', ['name', 'TYPE', 'id', '']],
      ['sortDirection', 'ASC, DESC', ['asc', 'desc', 'DOWN', '']],
    ];
    for (const [name, allowed, values] of enums) {
      for (const raw of values) {
        it(`${name}='${raw}' -> 400 listing the allowed values`, async () => {
          const body = await expect400(`?${name}=${encodeURIComponent(raw)}`, name, `must be one of ${allowed}`);
          expect(body.message).to.equal(`Invalid parameter '${name}': must be one of ${allowed} (got '${raw}').`);
        });
      }
      it(`${name} given twice -> 400`, async () => {
        const first = values[0] ?? '';
        await expect400(`?${name}=${first}&${name}=${first}`, name, 'must be given only once');
      });
    }

    it('text filters given twice -> 400; over 100 characters -> 400', async () => {
      await expect400('?name=Kim&name=Lee', 'name', 'must be given only once');
      await expect400('?email=a&email=b', 'email', 'must be given only once');
      await expect400(`?name=${'a'.repeat(101)}`, 'name', 'at most 100 characters');
      expect(await ids(`?name=${'a'.repeat(100)}`)).to.deep.equal([]);
    });

    it('an empty text filter is not applied', async () => {
      expect(await ids('?name=&email=')).to.deep.equal(ENROLLED);
    });

    it('the first invalid parameter is reported, never a 500', async () => {
      const res = await get('?grade=x&classNum=y');
      const body = await expectEnvelope(res, 400, 'BAD_REQUEST');
      expect(body.message).to.match(/'(grade|classNum)'/);
    });

    it('an error answer carries no ETag', async () => {
      const res = await get('?grade=9');
      expect(res.status).to.equal(400);
      expect(res.headers.get('etag')).to.equal(null);
      await res.body?.cancel();
    });

    it('unknown parameters are ignored', async () => {
      expect(await ids('?status=ACTIVE&foo=bar&GRADE=9&clubType=X')).to.deep.equal(ENROLLED);
      const plain = await get();
      const extra = await get('?unknown=1');
      expect(extra.headers.get('etag')).to.equal(plain.headers.get('etag'));
      expect(await extra.text()).to.equal(await plain.text());
    });
  });

  describe('enrolment rules', () => {
    const combos: [boolean, boolean, boolean, number[]][] = [
      // onlyEnrolled, includeGraduates, includeWithdrawn -> ids
      [false, false, false, ENROLLED],
      [false, true, false, [1, 2, 3, 4, 5, 7, 8, 9, 11, 12]],
      [false, false, true, [1, 2, 3, 5, 6, 7, 8, 10, 11, 12]],
      [false, true, true, ALL],
      [true, false, false, ENROLLED],
      [true, true, false, ENROLLED],
      [true, false, true, ENROLLED],
      [true, true, true, ENROLLED],
    ];
    for (const [onlyEnrolled, includeGraduates, includeWithdrawn, expected] of combos) {
      it(`onlyEnrolled=${onlyEnrolled} includeGraduates=${includeGraduates} includeWithdrawn=${includeWithdrawn}`, async () => {
        const data = await ok(
          `?onlyEnrolled=${onlyEnrolled}&includeGraduates=${includeGraduates}&includeWithdrawn=${includeWithdrawn}&size=5`,
        );
        expect(data.totalElements).to.equal(expected.length);
        expect(data.totalPages).to.equal(Math.ceil(expected.length / 5));
        expect(
          await ids(`?onlyEnrolled=${onlyEnrolled}&includeGraduates=${includeGraduates}&includeWithdrawn=${includeWithdrawn}`),
        ).to.deep.equal(expected);
      });
    }

    it('each parameter alone: omitted ones take their default false', async () => {
      expect(await ids('?includeGraduates=true')).to.deep.equal([1, 2, 3, 4, 5, 7, 8, 9, 11, 12]);
      expect(await ids('?includeWithdrawn=true')).to.deep.equal([1, 2, 3, 5, 6, 7, 8, 10, 11, 12]);
      expect(await ids('?onlyEnrolled=true')).to.deep.equal(ENROLLED);
      expect(await ids('?onlyEnrolled=false')).to.deep.equal(ENROLLED);
    });

    it('role=GRADUATE needs includeGraduates (the enrolment rules still apply to an explicit role)', async () => {
      expect(await ok('?role=GRADUATE')).to.deep.equal({ totalPages: 0, totalElements: 0, students: [] });
      expect(await ids('?role=GRADUATE&includeGraduates=true')).to.deep.equal(GRADUATES);
      expect(await ids('?role=GRADUATE&includeGraduates=true&onlyEnrolled=true')).to.deep.equal([]);
      expect(await ids('?role=GRADUATE&includeWithdrawn=true')).to.deep.equal([]);
      expect(await ids('?role=WITHDRAWN')).to.deep.equal([]);
      expect(await ids('?role=WITHDRAWN&includeWithdrawn=true')).to.deep.equal(WITHDRAWN);
      expect(await ids('?role=WITHDRAWN&includeGraduates=true&includeWithdrawn=true')).to.deep.equal(WITHDRAWN);
      expect(await ids('?role=GENERAL_STUDENT&includeGraduates=true&includeWithdrawn=true')).to.deep.equal([1, 5, 7, 8, 12]);
    });

    it('a studentId filter still respects the enrolment rules', async () => {
      expect(await ids('?studentId=4')).to.deep.equal([]);
      expect(await ids('?studentId=4&includeGraduates=true')).to.deep.equal([4]);
      expect(await ids('?studentId=6&includeWithdrawn=true')).to.deep.equal([6]);
    });
  });

  describe('filters', () => {
    it('exact filters', async () => {
      expect(await ids('?studentId=3')).to.deep.equal([3]);
      expect(await ids('?studentId=999')).to.deep.equal([]);
      expect(await ids('?classNum=2')).to.deep.equal([8]);
      expect(await ids('?grade=3&classNum=4&number=18')).to.deep.equal([12]);
      expect(await ids('?grade=2&classNum=4')).to.deep.equal([]);
      expect(await ids('?sex=WOMAN')).to.deep.equal([2, 3, 5]);
      expect(await ids('?sex=WOMAN&includeGraduates=true&includeWithdrawn=true')).to.deep.equal([2, 3, 5, 9, 10]);
      expect(await ids('?sex=MAN')).to.deep.equal([1, 7, 8, 11, 12]);
      expect(await ids('?role=STUDENT_COUNCIL')).to.deep.equal([2, 11]);
      expect(await ids('?role=DORMITORY_MANAGER')).to.deep.equal([3]);
      expect(await ids('?dormitoryRoom=301')).to.deep.equal([1, 7]);
      expect(await ids('?dormitoryRoom=201')).to.deep.equal([5, 11]);
      expect(await ids('?dormitoryRoom=30')).to.deep.equal([]);
      expect(await ids('?major=AI')).to.deep.equal([2, 7, 12]);
      expect(await ids('?major=SMART_IOT&grade=3')).to.deep.equal([3, 8]);
    });

    it('name and email match substrings, case-insensitively', async () => {
      expect(await ids('?name=Kim Minsu')).to.deep.equal([1, 3, 7]);
      expect(await ids('?name=minsu')).to.deep.equal([1, 3, 7]);
      expect(await ids('?name=KIM%20M')).to.deep.equal([1, 3, 7]);
      expect(await ids('?name=ee%20j')).to.deep.equal([2, 12]);
      expect(await ids('?name=o')).to.deep.equal([2, 5, 8, 11, 12]);
      expect(await ids('?name=grad')).to.deep.equal([]);
      expect(await ids('?name=grad&includeGraduates=true')).to.deep.equal([4, 9]);
      expect(await ids('?email=ALPHA')).to.deep.equal([2]);
      expect(await ids('?email=alpha@school.test')).to.deep.equal([2]);
      expect(await ids('?email=@SCHOOL.TEST')).to.deep.equal(ENROLLED);
      expect(await ids('?email=trot')).to.deep.equal([12]);
      expect(await ids('?name=kim&email=EL')).to.deep.equal([1, 3]);
    });

    it('filter text is taken literally, never as a pattern', async () => {
      for (const raw of ['.*', 'Kim.Minsu', '(', '[a-z]', '^Kim', '\\', '$', '%', '_']) {
        expect(await ids(`?name=${encodeURIComponent(raw)}`), raw).to.deep.equal([]);
      }
      expect(await ids(`?email=${encodeURIComponent('delta@school.test')}`)).to.deep.equal([1]);
      expect(await ids(`?email=${encodeURIComponent('delta@school?test')}`)).to.deep.equal([]);
    });

    it('filters combine with paging: totals count the filtered set', async () => {
      expect(await ok('?name=kim&size=2&page=1')).to.deep.equal({
        totalPages: 2,
        totalElements: 3,
        students: [(await ok('?studentId=7')).students[0]],
      });
    });
  });

  describe('sorting and paging', () => {
    const walk = (query: string, size: number) => walkPages(get, 'students', query, size);
    itSorts(get, 'students', ORDER_ENROLLED, [3]);

    for (const sortBy of Object.keys(ORDER_ALL)) {
      for (const dir of ['ASC', 'DESC'] as const) {
        it(`sortBy=${sortBy} sortDirection=${dir} with graduates and withdrawn: nulls last, pages of 5`, async () => {
          const expected = ORDER_ALL[sortBy]?.[dir] ?? [];
          const query = `?includeGraduates=true&includeWithdrawn=true&sortBy=${sortBy}&sortDirection=${dir}`;
          expect(await ids(query)).to.deep.equal(expected);
          expect(await walk(query, 5)).to.deep.equal(expected);
          // Pages of one record, where every tie decides a page boundary.
          if (['NAME', 'STUDENT_NUMBER', 'ROLE', 'DORMITORY_ROOM'].includes(sortBy)) expect(await walk(query, 1)).to.deep.equal(expected);
        });
      }
    }

    it('sortDirection defaults to ASC; without sortBy the order is id ascending', async () => {
      expect(await ids('?sortBy=NAME')).to.deep.equal(ORDER_ENROLLED['NAME']?.ASC);
      expect(await ids('?sortDirection=DESC')).to.deep.equal([12, 11, 8, 7, 5, 3, 2, 1]);
      expect(await ids('?sortDirection=ASC')).to.deep.equal(ENROLLED);
    });

    it('nulls last holds for the sorted field itself in both directions', async () => {
      for (const [sortBy, field] of [
        ['STUDENT_NUMBER', 'studentNumber'],
        ['GRADE', 'grade'],
        ['CLASS_NUM', 'classNum'],
        ['NUMBER', 'number'],
        ['MAJOR', 'major'],
        ['DORMITORY_ROOM', 'dormitoryRoom'],
      ] as const) {
        for (const dir of ['ASC', 'DESC']) {
          const list = (await ok(`?includeGraduates=true&includeWithdrawn=true&sortBy=${sortBy}&sortDirection=${dir}`)).students;
          const firstNull = list.findIndex((s) => s[field] === null);
          expect(firstNull, `${sortBy} ${dir}`).to.be.greaterThan(0);
          expect(
            list.slice(firstNull).every((s) => s[field] === null),
            `${sortBy} ${dir}: a value after a null`,
          ).to.equal(true);
        }
      }
    });

    it('a sort combines with filters and paging', async () => {
      expect(await walk('?sortBy=NAME&sortDirection=DESC&name=i', 2)).to.deep.equal([2, 12, 1, 3, 7]);
      expect(await walk('?sortBy=STUDENT_NUMBER&sortDirection=DESC&grade=1', 2)).to.deep.equal([2, 11, 5]);
    });
  });
});

describe('data API: GET /v1/students default page size', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await buildTestApp('students_default_size', { surfaces: ['data'] });
    const students = Array.from({ length: 1001 }, (_, i) =>
      buildStudent({ _id: i + 1, grade: (i % 3) + 1, classNum: (i % 4) + 1, number: (i % 18) + 1 }),
    );
    await insertSchool(t.db, { students });
    key = await issueKey(t.db, { scopes: ['STUDENT_READ'] });
  });
  after(() => t.close());

  it('is 300; size=1000 is the maximum page', async () => {
    const get = (q: string) => t.request(`/v1/students${q}`, { headers: { 'X-API-KEY': key } });
    const first = await expectOk<StudentPage>(await get(''));
    expect({ totalPages: first.totalPages, totalElements: first.totalElements, n: first.students.length }).to.deep.equal({
      totalPages: 4,
      totalElements: 1001,
      n: 300,
    });
    expect(first.students[0]?.id).to.equal(1);
    expect(first.students[299]?.id).to.equal(300);
    const last = await expectOk<StudentPage>(await get('?page=3'));
    expect(last.students.map((s) => s.id)).to.deep.equal(Array.from({ length: 101 }, (_, i) => 901 + i));
    const max = await expectOk<StudentPage>(await get('?size=1000'));
    expect({ totalPages: max.totalPages, n: max.students.length }).to.deep.equal({ totalPages: 2, n: 1000 });
    const rest = await expectOk<StudentPage>(await get('?size=1000&page=1'));
    expect(rest.students.map((s) => s.id)).to.deep.equal([1001]);
  });
});
