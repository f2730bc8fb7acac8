import { expect } from 'chai';
import { issueMessage } from '../../src/data/school/messages.js';
import {
  deleteClub,
  deleteProject,
  deleteStudent,
  majorOfClass,
  putClub,
  putProject,
  putStudent,
  reactivateStudent,
  retireStudent,
  type ClubPatch,
  type ProjectPatch,
  type StepResult,
  type StudentPatch,
} from '../../src/data/school/operations.js';
import { validateState } from '../../src/data/school/rules.js';
import { SchoolState } from '../../src/data/school/state.js';
import type { Issue } from '../../src/data/school/types.js';
import { buildClub, buildProject, buildStudent } from '../helpers/factories.js';

/**
 * Every validation rule of school records, on the pure planning state the mutations,
 * imports and rollover share (src/data/school/operations.ts, rules.ts): each case names the field
 * and the code of the problem, and the message names the field.
 */

const YEAR = 2026;

function school(): SchoolState {
  return SchoolState.of({
    students: [
      buildStudent({ _id: 1, name: '가', email: 'a@school.kr', grade: 1, classNum: 1, number: 1, majorClubId: 10 }),
      buildStudent({
        _id: 2,
        name: '나',
        email: 'b@school.kr',
        grade: 2,
        classNum: 3,
        number: 4,
        major: 'SMART_IOT',
        autonomousClubId: 20,
      }),
      buildStudent({ _id: 3, name: '다', email: 'c@school.kr', grade: 3, classNum: 4, number: 9, major: 'AI', majorClubId: 10 }),
      buildStudent({
        _id: 4,
        name: '졸',
        email: 'grad@school.kr',
        role: 'GRADUATE',
        grade: null,
        classNum: null,
        number: null,
        major: null,
      }),
    ],
    clubs: [
      buildClub({ _id: 10, name: 'Quokka', type: 'MAJOR_CLUB', leaderId: 3 }),
      buildClub({ _id: 11, name: 'Spark', type: 'MAJOR_CLUB' }),
      buildClub({ _id: 20, name: '밴드부', type: 'AUTONOMOUS_CLUB' }),
      buildClub({ _id: 30, name: 'Old', type: 'MAJOR_CLUB', status: 'ABOLISHED', abolishedYear: 2020 }),
    ],
    projects: [buildProject({ _id: 100, name: 'Timer', clubId: 10, participantIds: [1, 3], startYear: 2024 })],
  });
}

/** Runs a step and the rules: every issue, from the step or from the whole planned state. */
function problems(state: SchoolState, step: (s: SchoolState) => StepResult): Issue[] {
  const result = step(state);
  return [...result.issues, ...validateState(state).map((p) => p.issue)];
}

const codes = (issues: Issue[]) => issues.map((i) => `${i.field}:${i.code}`);
const valid: StudentPatch = { name: '새', sex: 'MAN', email: 'new@school.kr', grade: 1, classNum: 2, number: 5 };
const newStudent = (patch: StudentPatch) => problems(school(), (s) => putStudent(s, null, { ...valid, ...patch }));
const changeStudent = (id: number, patch: StudentPatch) => problems(school(), (s) => putStudent(s, id, patch));
const newClub = (patch: ClubPatch) => problems(school(), (s) => putClub(s, null, { name: 'New', type: 'MAJOR_CLUB', ...patch }, YEAR));
const changeClub = (id: number, patch: ClubPatch) => problems(school(), (s) => putClub(s, id, patch, YEAR));
const newProject = (patch: ProjectPatch) => problems(school(), (s) => putProject(s, null, { name: 'New project', ...patch }));

describe('school records: validation rules', () => {
  describe('students', () => {
    it('accepts a valid student; the student number and the major follow from the class', () => {
      const state = school();
      const result = putStudent(state, null, { ...valid, classNum: 3 });
      expect(result.issues).to.deep.equal([]);
      expect(validateState(state)).to.deep.equal([]);
      const doc = state.get('STUDENT', result.id ?? 0);
      expect(doc).to.include({ studentNumber: 1305, major: 'SMART_IOT', role: 'GENERAL_STUDENT', enrolledRank: 0 });
      expect(result.id).to.equal(5);
    });

    it('major from the class: 1-2 SW_DEVELOPMENT, 3 SMART_IOT, 4 AI, unless given', () => {
      expect([1, 2, 3, 4].map(majorOfClass)).to.deep.equal(['SW_DEVELOPMENT', 'SW_DEVELOPMENT', 'SMART_IOT', 'AI']);
      const state = school();
      const given = putStudent(state, null, { ...valid, classNum: 1, major: 'AI' });
      expect(state.get('STUDENT', given.id ?? 0)?.major).to.equal('AI');
      // A new class brings its major along; an unchanged class keeps a given one.
      putStudent(state, 2, { classNum: 4 });
      expect(state.get('STUDENT', 2)?.major).to.equal('AI');
      putStudent(state, given.id ?? 0, { name: '다른 이름' });
      expect(state.get('STUDENT', given.id ?? 0)?.major).to.equal('AI');
    });

    it('name: 1 to 30 characters', () => {
      expect(codes(newStudent({ name: '   ' }))).to.deep.equal(['name:REQUIRED']);
      expect(codes(newStudent({ name: 'x'.repeat(31) }))).to.deep.equal(['name:LENGTH']);
      expect(codes(newStudent({ name: '가'.repeat(30) }))).to.deep.equal([]);
    });

    it('email: well formed and unique (any case)', () => {
      expect(codes(newStudent({ email: 'no-at-sign' }))).to.deep.equal(['email:EMAIL']);
      expect(codes(newStudent({ email: 'a@b' }))).to.deep.equal(['email:EMAIL']);
      expect(codes(newStudent({ email: 'A@School.KR' }))).to.deep.equal(['email:TAKEN']);
      const [taken] = newStudent({ email: 'a@school.kr' });
      expect(issueMessage(taken ?? { field: '', code: 'REQUIRED' }, 'en')).to.equal("email: 'a@school.kr' is already used by 가 (1101)");
    });

    it('sex and role: one of the enum values; sex is required', () => {
      expect(codes(newStudent({ sex: null }))).to.deep.equal(['sex:REQUIRED']);
      expect(codes(newStudent({ sex: 'X' as never }))).to.deep.equal(['sex:ONE_OF']);
      expect(codes(newStudent({ role: 'KING' as never }))).to.deep.equal(['role:ONE_OF']);
    });

    it('grade 1-3, class 1-4, number 1-18, all required while enrolled', () => {
      expect(codes(newStudent({ grade: null, number: null }))).to.deep.equal(['grade:REQUIRED', 'number:REQUIRED']);
      expect(codes(newStudent({ grade: 4 }))).to.deep.equal(['grade:RANGE']);
      expect(codes(newStudent({ grade: 0 }))).to.deep.equal(['grade:RANGE']);
      expect(codes(newStudent({ classNum: 5 }))).to.deep.equal(['classNum:RANGE']);
      expect(codes(newStudent({ number: 19 }))).to.deep.equal(['number:RANGE']);
      expect(codes(newStudent({ number: 18 }))).to.deep.equal([]);
      const [issue] = newStudent({ number: 19 });
      expect(issueMessage(issue ?? { field: '', code: 'REQUIRED' }, 'ko')).to.equal('번호: 1~18 사이의 정수여야 합니다 (입력: 19)');
    });

    it('a missing field does not hide the problems of the given ones (a form shows them all at once)', () => {
      expect(codes(newStudent({ name: null, email: 'bad', number: 19, githubId: '-x' }))).to.deep.equal([
        'name:REQUIRED',
        'email:EMAIL',
        'number:RANGE',
        'githubId:GITHUB_ID',
      ]);
      expect(codes(newStudent({ sex: null, email: 'A@school.kr', grade: 2, classNum: 3, number: 4 }))).to.deep.equal([
        'sex:REQUIRED',
        'email:TAKEN',
        'studentNumber:SEAT_TAKEN',
      ]);
      // Nothing was planned: the state is as it was.
      const state = school();
      expect(putStudent(state, null, { ...valid, name: null, email: 'bad' }).id).to.equal(null);
      expect([...state.touchedRecords()]).to.deep.equal([]);
    });

    it('grade, class and number are unique together among enrolled students (a graduate frees the seat)', () => {
      expect(codes(newStudent({ grade: 2, classNum: 3, number: 4 }))).to.deep.equal(['studentNumber:SEAT_TAKEN']);
      const state = school();
      retireStudent(state, 2, 'GRADUATE');
      putStudent(state, null, { ...valid, grade: 2, classNum: 3, number: 4 });
      expect(validateState(state)).to.deep.equal([]);
      // Two students may swap seats in one change.
      const swap = school();
      putStudent(swap, 1, { grade: 2, classNum: 3, number: 4 });
      putStudent(swap, 2, { grade: 1, classNum: 1, number: 1 });
      expect(validateState(swap)).to.deep.equal([]);
    });

    it('dormitory room 201 to 518, the floor following from it', () => {
      expect(codes(newStudent({ dormitoryRoom: 200 }))).to.deep.equal(['dormitoryRoom:RANGE']);
      expect(codes(newStudent({ dormitoryRoom: 519 }))).to.deep.equal(['dormitoryRoom:RANGE']);
      const state = school();
      const { id } = putStudent(state, null, { ...valid, dormitoryRoom: 318 });
      expect(state.get('STUDENT', id ?? 0)).to.include({ dormitoryRoom: 318, dormitoryFloor: 3, dormitoryRank: 0 });
      expect(validateState(state)).to.deep.equal([]);
    });

    it('clubs exist, are of the right type and active', () => {
      expect(codes(newStudent({ majorClubId: 99 }))).to.deep.equal(['majorClubId:UNKNOWN_CLUB']);
      expect(codes(newStudent({ majorClubId: 20 }))).to.deep.equal(['majorClubId:CLUB_TYPE']);
      expect(codes(newStudent({ autonomousClubId: 10 }))).to.deep.equal(['autonomousClubId:CLUB_TYPE']);
      expect(codes(newStudent({ majorClubId: 30 }))).to.deep.equal(['majorClubId:CLUB_ABOLISHED']);
      expect(codes(newStudent({ majorClubId: 11, autonomousClubId: 20 }))).to.deep.equal([]);
    });

    it('specialty up to 50 characters; GitHub id in GitHub syntax (with its URL)', () => {
      expect(codes(newStudent({ specialty: 'x'.repeat(51) }))).to.deep.equal(['specialty:LENGTH']);
      expect(codes(newStudent({ specialty: 'x'.repeat(50) }))).to.deep.equal([]);
      for (const bad of ['-octo', 'octo-', 'oc--to', 'oc_to', 'x'.repeat(40), 'a b']) {
        expect(codes(newStudent({ githubId: bad })), bad).to.deep.equal(['githubId:GITHUB_ID']);
      }
      const state = school();
      const { id } = putStudent(state, null, { ...valid, githubId: 'octo-cat9' });
      expect(state.get('STUDENT', id ?? 0)).to.include({ githubId: 'octo-cat9', githubUrl: 'https://github.com/octo-cat9' });
    });

    it('a rule of a field applies when the field changes: an older record can be edited in its other fields', () => {
      const state = SchoolState.of({ students: [buildStudent({ _id: 1, dormitoryRoom: 520, dormitoryFloor: 5 })] });
      putStudent(state, 1, { name: '새 이름' });
      expect(validateState(state)).to.deep.equal([]);
      putStudent(state, 1, { dormitoryRoom: 521 });
      expect(codes(validateState(state).map((p) => p.issue))).to.deep.equal(['dormitoryRoom:RANGE']);
    });
  });

  describe('student state changes', () => {
    it('graduating clears what the spec nulls, the dormitory, the clubs and club leadership', () => {
      const state = school();
      expect(retireStudent(state, 3, 'GRADUATE').issues).to.deep.equal([]);
      expect(state.get('STUDENT', 3)).to.include({
        role: 'GRADUATE',
        grade: null,
        classNum: null,
        number: null,
        studentNumber: null,
        major: null,
        dormitoryRoom: null,
        majorClubId: null,
        enrolledRank: 1,
      });
      expect(state.get('CLUB', 10)?.leaderId).to.equal(null);
      // Project participation is history: it stays.
      expect(state.get('PROJECT', 100)?.participantIds).to.deep.equal([1, 3]);
      expect(validateState(state)).to.deep.equal([]);
      expect(codes(retireStudent(state, 3, 'GRADUATE').issues)).to.deep.equal(['role:ALREADY']);
    });

    it('withdrawing clears the same; reactivating needs a class', () => {
      const state = school();
      retireStudent(state, 1, 'WITHDRAWN');
      expect(state.get('STUDENT', 1)).to.include({ role: 'WITHDRAWN', studentNumber: null, majorClubId: null });
      expect(codes(reactivateStudent(state, 1, {}).issues)).to.deep.equal(['grade:REQUIRED', 'classNum:REQUIRED', 'number:REQUIRED']);
      expect(reactivateStudent(state, 1, { grade: 1, classNum: 4, number: 7 }).issues).to.deep.equal([]);
      expect(state.get('STUDENT', 1)).to.include({ role: 'GENERAL_STUDENT', studentNumber: 1407, major: 'AI' });
      expect(codes(reactivateStudent(state, 1, { grade: 1, classNum: 4, number: 7 }).issues)).to.deep.equal(['role:ALREADY']);
    });

    it("a graduate's class or clubs cannot be set (they would be dropped silently)", () => {
      expect(codes(changeStudent(4, { majorClubId: 10 }))).to.deep.equal(['majorClubId:ENROLLED_ONLY']);
      expect(codes(changeStudent(4, { specialty: 'Backend' }))).to.deep.equal([]);
    });

    it('deleting a student removes them from projects and club leadership', () => {
      const state = school();
      deleteStudent(state, 3);
      expect(state.get('STUDENT', 3)).to.equal(undefined);
      expect(state.get('CLUB', 10)?.leaderId).to.equal(null);
      expect(state.get('PROJECT', 100)?.participantIds).to.deep.equal([1]);
      expect(codes(deleteStudent(state, 3).issues)).to.deep.equal(['id:NOT_FOUND']);
    });
  });

  describe('clubs', () => {
    it('name: 1 to 30 characters, unique whatever the case', () => {
      expect(codes(newClub({ name: '' }))).to.deep.equal(['name:REQUIRED']);
      expect(codes(newClub({ name: 'x'.repeat(31) }))).to.deep.equal(['name:LENGTH']);
      expect(codes(newClub({ name: ' quokka ' }))).to.deep.equal(['name:TAKEN']);
      expect(codes(newClub({ type: null }))).to.deep.equal(['type:REQUIRED']);
    });

    it('leader: an enrolled student (email, student number or #id) who leads no other club of the same type', () => {
      expect(codes(newClub({ leader: 'nobody@school.kr' }))).to.deep.equal(['leader:UNKNOWN_STUDENT']);
      expect(codes(newClub({ leader: 'grad@school.kr' }))).to.deep.equal(['leader:NOT_ENROLLED']);
      expect(codes(newClub({ leader: '3409' }))).to.deep.equal(['leader:LEADS_ANOTHER']);
      // The same student may lead a club of the other type.
      expect(codes(newClub({ type: 'AUTONOMOUS_CLUB', leader: '#3' }))).to.deep.equal([]);
      expect(codes(newClub({ leader: 'b@school.kr' }))).to.deep.equal([]);
      // Moving the leadership in one change is fine.
      const state = school();
      putClub(state, 10, { leader: null }, YEAR);
      putClub(state, 11, { leader: 'c@school.kr' }, YEAR);
      expect(validateState(state)).to.deep.equal([]);
    });

    it('members replace the list; a member of another club of the type moves; graduates cannot join', () => {
      const state = school();
      expect(putClub(state, 11, { members: ['a@school.kr', '2304'] }, YEAR).issues).to.deep.equal([]);
      expect(state.get('STUDENT', 1)?.majorClubId).to.equal(11);
      expect(state.get('STUDENT', 2)?.majorClubId).to.equal(11);
      expect(state.get('STUDENT', 3)?.majorClubId).to.equal(10);
      expect(validateState(state)).to.deep.equal([]);
      expect(codes(changeClub(11, { members: ['nobody@school.kr'] }))).to.deep.equal(['members:UNKNOWN_STUDENT']);
      expect(codes(changeClub(11, { members: ['grad@school.kr'] }))).to.deep.equal(['members:NOT_ENROLLED']);
    });

    it('an abolished club has no leader and no members; abolishing removes them', () => {
      const state = school();
      expect(putClub(state, 10, { status: 'ABOLISHED' }, YEAR).issues).to.deep.equal([]);
      expect(state.get('CLUB', 10)).to.include({ status: 'ABOLISHED', leaderId: null, abolishedYear: YEAR });
      expect(state.get('STUDENT', 1)?.majorClubId).to.equal(null);
      expect(state.get('STUDENT', 3)?.majorClubId).to.equal(null);
      expect(validateState(state)).to.deep.equal([]);
      expect(codes(changeClub(11, { status: 'ABOLISHED', leader: 'b@school.kr' }))).to.deep.equal(['leader:ABOLISHED_LEADER']);
      expect(codes(changeClub(11, { status: 'ABOLISHED', members: ['b@school.kr'] }))).to.deep.equal(['members:ABOLISHED_MEMBERS']);
      // Active again: no abolished year.
      putClub(state, 10, { status: 'ACTIVE' }, YEAR);
      expect(state.get('CLUB', 10)?.abolishedYear).to.equal(null);
    });

    it('a type change takes the members along; deleting a club clears its members and projects', () => {
      const state = school();
      putClub(state, 11, { members: ['b@school.kr'] }, YEAR);
      putClub(state, 11, { type: 'AUTONOMOUS_CLUB' }, YEAR);
      expect(state.get('STUDENT', 2)).to.include({ majorClubId: null, autonomousClubId: 11 });
      deleteClub(state, 10);
      expect(state.get('STUDENT', 1)?.majorClubId).to.equal(null);
      expect(state.get('PROJECT', 100)?.clubId).to.equal(null);
    });
  });

  describe('projects', () => {
    it('name: 1 to 100 characters and unique; description up to 500', () => {
      expect(codes(newProject({ name: '' }))).to.deep.equal(['name:REQUIRED']);
      expect(codes(newProject({ name: 'x'.repeat(101) }))).to.deep.equal(['name:LENGTH']);
      expect(codes(newProject({ name: 'TIMER' }))).to.deep.equal(['name:TAKEN']);
      expect(codes(newProject({ description: 'x'.repeat(501) }))).to.deep.equal(['description:LENGTH']);
      expect(codes(newProject({ description: 'x'.repeat(500) }))).to.deep.equal([]);
    });

    it('club and participants exist', () => {
      expect(codes(newProject({ clubId: 99 }))).to.deep.equal(['clubId:UNKNOWN_CLUB']);
      expect(codes(newProject({ participants: ['a@school.kr', 'ghost@school.kr'] }))).to.deep.equal(['participants:UNKNOWN_STUDENT']);
      const state = school();
      const { id } = putProject(state, null, { name: 'P', participants: ['#3', 'a@school.kr', '#3'] });
      expect(state.get('PROJECT', id ?? 0)?.participantIds).to.deep.equal([1, 3]);
    });

    it('ENDED needs an end year not before the start year; ACTIVE has none; end and reopen', () => {
      expect(codes(newProject({ status: 'ENDED' }))).to.deep.equal(['endYear:END_YEAR_REQUIRED']);
      expect(codes(newProject({ status: 'ENDED', startYear: 2025, endYear: 2024 }))).to.deep.equal(['endYear:END_BEFORE_START']);
      expect(codes(newProject({ status: 'ACTIVE', endYear: 2025 }))).to.deep.equal(['endYear:END_WHILE_ACTIVE']);
      expect(codes(newProject({ startYear: 1800 }))).to.deep.equal(['startYear:RANGE']);
      expect(codes(newProject({ status: 'ENDED', startYear: 2025, endYear: 2025 }))).to.deep.equal([]);
      const state = school();
      putProject(state, 100, { status: 'ENDED', endYear: 2026 });
      expect(state.get('PROJECT', 100)).to.include({ status: 'ENDED', endYear: 2026 });
      putProject(state, 100, { status: 'ACTIVE' });
      expect(state.get('PROJECT', 100)).to.include({ status: 'ACTIVE', endYear: null });
      deleteProject(state, 100);
      expect(state.get('PROJECT', 100)).to.equal(undefined);
    });
  });

  it('every message names its field, in Korean and in English', () => {
    const issue: Issue = { field: 'specialty', code: 'LENGTH', params: { min: 0, max: 50, got: 51 } };
    expect(issueMessage(issue, 'en')).to.equal('specialty: must be at most 50 characters (got 51)');
    expect(issueMessage(issue, 'ko')).to.equal('전문분야: 50자 이하여야 합니다 (지금 51자)');
  });
});
