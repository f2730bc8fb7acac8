import { expect } from 'chai';
import { toStudentRecord } from '../../src/data/models/student.model.js';
import { compareText, foldLatin, pageOf } from '../../src/data/school/queries/page.js';
import { excludedRoles, studentMatcher, studentQuery, studentSort } from '../../src/data/school/queries/students.js';
import { RecordList } from '../../src/data/school/read-model.js';

describe('school records: the student record rule', () => {
  const base = {
    _id: 7,
    name: 'Kim',
    sex: 'MAN',
    email: 'Kim@School.test',
    grade: 2,
    classNum: 3,
    number: 12,
    major: 'AI',
    dormitoryFloor: 3,
    dormitoryRoom: 305,
    majorClubId: 1,
    autonomousClubId: null,
  } as const;

  it('derives studentNumber as grade, class, two-digit number', () => {
    const s = toStudentRecord({ ...base, role: 'GENERAL_STUDENT' });
    expect([s.studentNumber, s.email, s.enrolledRank, s.dormitoryRank]).to.deep.equal([2312, 'kim@school.test', 0, 0]);
  });

  it('refuses an enrolled student without grade, class, number or major', () => {
    expect(() => toStudentRecord({ ...base, grade: null, role: 'GENERAL_STUDENT' })).to.throw(
      'student 7: grade is required for an enrolled (GENERAL_STUDENT) student',
    );
    expect(() => toStudentRecord({ ...base, major: null, role: 'STUDENT_COUNCIL' })).to.throw('major is required');
  });

  for (const role of ['GRADUATE', 'WITHDRAWN'] as const) {
    it(`a ${role} student has null grade, classNum, number, studentNumber and major`, () => {
      const s = toStudentRecord({ ...base, role });
      expect([s.grade, s.classNum, s.number, s.studentNumber, s.major, s.enrolledRank]).to.deep.equal([null, null, null, null, null, 1]);
    });
  }
});

describe('school records: enrolment rules and sorts', () => {
  const cases: [boolean, boolean, boolean, string[]][] = [
    [false, false, false, ['GRADUATE', 'WITHDRAWN']],
    [false, true, false, ['WITHDRAWN']],
    [false, false, true, ['GRADUATE']],
    [false, true, true, []],
    [true, false, false, ['GRADUATE', 'WITHDRAWN']],
    [true, true, false, ['GRADUATE', 'WITHDRAWN']],
    [true, false, true, ['GRADUATE', 'WITHDRAWN']],
    [true, true, true, ['GRADUATE', 'WITHDRAWN']],
  ];
  for (const [onlyEnrolled, includeGraduates, includeWithdrawn, excluded] of cases) {
    it(`onlyEnrolled=${onlyEnrolled} includeGraduates=${includeGraduates} includeWithdrawn=${includeWithdrawn} excludes [${excluded.join(', ')}]`, () => {
      expect(excludedRoles({ onlyEnrolled, includeGraduates, includeWithdrawn })).to.deep.equal(excluded);
    });
  }

  const student = (id: number, overrides: Partial<Parameters<typeof toStudentRecord>[0]> = {}) =>
    toStudentRecord({
      _id: id,
      name: `Student ${id}`,
      sex: 'MAN',
      email: `s${id}@school.test`,
      grade: 1,
      classNum: 1,
      number: id,
      major: 'AI',
      role: 'GENERAL_STUDENT',
      dormitoryFloor: null,
      dormitoryRoom: null,
      majorClubId: null,
      autonomousClubId: null,
      ...overrides,
    });
  const graduate = (id: number) => student(id, { role: 'GRADUATE', grade: null, classNum: null, number: null, major: null });
  const ids = (list: { _id: number }[]) => list.map((s) => s._id);

  it('an explicit role that the rules exclude matches nothing', () => {
    expect(studentMatcher({ role: 'GRADUATE' })(graduate(1))).to.equal(false);
    expect(studentMatcher({ role: 'GRADUATE', includeGraduates: true })(graduate(1))).to.equal(true);
    expect(studentMatcher({ role: 'GRADUATE', includeGraduates: true })(student(2))).to.equal(false);
    expect(studentMatcher({})(graduate(1))).to.equal(false);
    expect(studentMatcher({ onlyEnrolled: true, includeGraduates: true })(graduate(1))).to.equal(false);
  });

  it('nullable sorts keep nulls last in both directions and end with the id', () => {
    const school = [
      graduate(1),
      student(2, { grade: 2, number: 5 }),
      student(3, { grade: 1, number: 9 }),
      graduate(4),
      student(5, { grade: 2, number: 5 }),
    ];
    const sorted = (sortBy: Parameters<typeof studentSort>[0], d: 1 | -1) => ids([...school].sort(studentSort(sortBy, d).compare));
    expect(sorted('STUDENT_NUMBER', 1)).to.deep.equal([3, 2, 5, 1, 4]);
    expect(sorted('STUDENT_NUMBER', -1)).to.deep.equal([2, 5, 3, 1, 4]);
    expect(sorted('GRADE', -1)).to.deep.equal([2, 5, 3, 1, 4]);
    expect(sorted(undefined, 1)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(sorted('ID', -1)).to.deep.equal([5, 4, 3, 2, 1]);
    const rooms = [student(1, { dormitoryRoom: 301 }), student(2), student(3, { dormitoryRoom: 201 }), student(4, { dormitoryRoom: 301 })];
    expect(ids([...rooms].sort(studentSort('DORMITORY_ROOM', 1).compare))).to.deep.equal([3, 1, 4, 2]);
    expect(ids([...rooms].sort(studentSort('DORMITORY_ROOM', -1).compare))).to.deep.equal([1, 4, 3, 2]);
    expect(studentSort('NAME', -1).key).to.not.equal(studentSort('NAME', 1).key);
  });

  it('substring filters take the text literally, case-insensitively for Latin letters only', () => {
    const kim = student(1, { name: 'Kim.Minsu*', email: 'Kim@School.test' });
    expect(studentMatcher({ name: 'm.m' })(kim)).to.equal(true);
    expect(studentMatcher({ name: 'a.b*' })(kim)).to.equal(false);
    expect(studentMatcher({ name: 'n.M' })(kim)).to.equal(false);
    expect(studentMatcher({ name: '.*' })(kim)).to.equal(false);
    expect(studentMatcher({ email: 'KIM@' })(kim)).to.equal(true);
    expect(foldLatin('ÉCOLE Straße ΣΟΦΙΑ 김ABC İ')).to.equal('école straße ΣΟΦΙΑ 김abc İ');
  });

  it("text sorts in code point order (the databases' binary order), not UTF-16 order", () => {
    expect(['b', 'B', 'a', '가', '\u{1F600}', '\uFF21'].sort(compareText)).to.deep.equal(['B', 'a', 'b', '가', '\uFF21', '\u{1F600}']);
  });

  it('a page walks the ordered records once: the matching slice and the total', () => {
    const records = [1, 2, 3, 4, 5, 6, 7];
    const odd = (n: number) => n % 2 === 1;
    expect(pageOf(records, odd, 0, 3)).to.deep.equal({ items: [1, 3, 5], total: 4 });
    expect(pageOf(records, odd, 1, 3)).to.deep.equal({ items: [7], total: 4 });
    expect(pageOf(records, odd, 2, 3)).to.deep.equal({ items: [], total: 4 });
  });

  it('the read model tests each record once per filter and order: later pages of the same filter are slices', () => {
    const list = new RecordList([1, 2, 3, 4, 5, 6, 7].map((id) => ({ _id: id })));
    let tested = 0;
    const odd = (record: { _id: number }) => {
      tested += 1;
      return record._id % 2 === 1;
    };
    const descending = { key: 'ID:-1', compare: (a: { _id: number }, b: { _id: number }) => b._id - a._id };
    const query = { matches: odd, filterKey: '["odd"]', sort: descending };
    const ids = (result: { items: { _id: number }[]; total: number }) => ({ items: result.items.map((r) => r._id), total: result.total });
    expect(ids(list.page(query, 0, 3))).to.deep.equal({ items: [7, 5, 3], total: 4 });
    expect(ids(list.page(query, 1, 3))).to.deep.equal({ items: [1], total: 4 });
    expect(ids(list.page({ ...query }, 2, 3))).to.deep.equal({ items: [], total: 4 });
    expect(tested).to.equal(7);
    // Another filter, or the same filter in another order, is tested again.
    expect(ids(list.page({ ...query, filterKey: '["odd",2]' }, 0, 2))).to.deep.equal({ items: [7, 5], total: 4 });
    expect(tested).to.equal(14);
  });

  it('a query key holds every criterion, so queries that test differently never share one', () => {
    const base = studentQuery({ grade: 2 }, 'NAME', 1);
    expect(studentQuery({ grade: 2, includeGraduates: null }, 'NAME', 1).filterKey).to.equal(base.filterKey);
    expect(studentQuery({ grade: 3 }, 'NAME', 1).filterKey).to.not.equal(base.filterKey);
    expect(studentQuery({ grade: 2, includeGraduates: true }, 'NAME', 1).filterKey).to.not.equal(base.filterKey);
    expect(studentQuery({ grade: 2, onlyEnrolled: true }, 'NAME', 1).filterKey).to.not.equal(base.filterKey);
    expect(studentQuery({ name: '2' }, 'NAME', 1).filterKey).to.not.equal(studentQuery({ grade: 2 }, 'NAME', 1).filterKey);
  });
});
