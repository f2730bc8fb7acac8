import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { describeDefaultPageSize, expectRefused, itChecksEnums, itChecksIntegers, itPages, itSorts } from '../helpers/parameters.js';
import { expectOk, expectPage } from '../helpers/expect.js';
import { buildClub, buildProject, buildStudent, insertSchool, issueKey } from '../helpers/factories.js';

/** GET /v1/projects over HTTP against a real database. */

interface Participant {
  id: number;
  name: string;
  email: string;
  studentNumber: number | null;
  major: string | null;
  sex: string;
}
interface Project {
  id: number;
  name: string;
  description: string;
  club: { id: number; name: string; type: string } | null;
  participants: Participant[];
  startYear: number | null;
  endYear: number | null;
  status: string;
}
interface ProjectPage {
  totalPages: number;
  totalElements: number;
  projects: Project[];
}

/*
 *  id name         club           participants (stored order)
 *   1 Smart Farm   10 Robotics    [2, 1]              -> listed by id
 *   2 Campus Map   none           []
 *   3 Smart Farm   20 Chess       [3]                 (a graduate)
 *   4 AI Tutor     10 Robotics    [4, 999]            (withdrawn; 999 does not exist)
 *   5 Zeta Game    77 (no such)   [1]                 ENDED 2023-2024
 */
const students = [
  buildStudent({
    _id: 1,
    name: 'Kim One',
    sex: 'MAN',
    email: 'one@school.test',
    grade: 2,
    classNum: 3,
    number: 4,
    major: 'AI',
    majorClubId: 10,
  }),
  buildStudent({ _id: 2, name: 'Lee Two', sex: 'WOMAN', email: 'two@school.test', grade: 1, classNum: 1, number: 1, major: 'SMART_IOT' }),
  buildStudent({
    _id: 3,
    name: 'Park Grad',
    sex: 'MAN',
    email: 'grad@school.test',
    role: 'GRADUATE',
    grade: null,
    classNum: null,
    number: null,
    major: null,
  }),
  buildStudent({
    _id: 4,
    name: 'Choi Left',
    sex: 'WOMAN',
    email: 'left@school.test',
    role: 'WITHDRAWN',
    grade: null,
    classNum: null,
    number: null,
    major: null,
  }),
];
const clubs = [
  buildClub({ _id: 10, name: 'Robotics', type: 'MAJOR_CLUB', leaderId: 1 }),
  buildClub({ _id: 20, name: 'Chess', type: 'AUTONOMOUS_CLUB' }),
];
const projects = [
  buildProject({
    _id: 1,
    name: 'Smart Farm',
    description: 'Sensors in the school garden',
    clubId: 10,
    participantIds: [2, 1],
    startYear: 2025,
  }),
  buildProject({ _id: 2, name: 'Campus Map', description: 'A map of the campus', clubId: null, participantIds: [] }),
  buildProject({ _id: 3, name: 'Smart Farm', description: 'The older farm', clubId: 20, participantIds: [3] }),
  buildProject({ _id: 4, name: 'AI Tutor', description: 'Homework help', clubId: 10, participantIds: [4, 999] }),
  buildProject({
    _id: 5,
    name: 'Zeta Game',
    description: 'A game',
    clubId: 77,
    participantIds: [1],
    startYear: 2023,
    endYear: 2024,
    status: 'ENDED',
  }),
];
const P: Record<number, Participant> = {
  1: { id: 1, name: 'Kim One', email: 'one@school.test', studentNumber: 2304, major: 'AI', sex: 'MAN' },
  2: { id: 2, name: 'Lee Two', email: 'two@school.test', studentNumber: 1101, major: 'SMART_IOT', sex: 'WOMAN' },
  3: { id: 3, name: 'Park Grad', email: 'grad@school.test', studentNumber: null, major: null, sex: 'MAN' },
  4: { id: 4, name: 'Choi Left', email: 'left@school.test', studentNumber: null, major: null, sex: 'WOMAN' },
};
const ROBOTICS = { id: 10, name: 'Robotics', type: 'MAJOR_CLUB' };
const ORDER: Record<string, { ASC: number[]; DESC: number[] }> = {
  ID: { ASC: [1, 2, 3, 4, 5], DESC: [5, 4, 3, 2, 1] },
  NAME: { ASC: [4, 2, 1, 3, 5], DESC: [5, 1, 3, 2, 4] },
};

describe('data API: GET /v1/projects', () => {
  let t: TestApp;
  let key: string;
  const get = (query = '') => t.request(`/v1/projects${query}`, { headers: { 'X-API-KEY': key } });
  const ok = async (query = '') => expectOk<ProjectPage>(await get(query));
  const ids = async (query = '') => (await ok(query)).projects.map((p) => p.id);
  before(async () => {
    t = await buildTestApp('projects', { surfaces: ['data'] });
    await insertSchool(t.db, { students, clubs, projects });
    key = await issueKey(t.db, { scopes: ['PROJECT_READ'], rateLimit: { points: 100000, durationSeconds: 60 } });
  });
  after(() => t.close());

  describe('envelope and records', () => {
    it('answers the exact envelope, wrapper and project records', async () => {
      const res = await get();
      const data = await expectPage<ProjectPage>(res, 'projects');
      expect(data).to.deep.equal({
        totalPages: 1,
        totalElements: 5,
        projects: [
          {
            id: 1,
            name: 'Smart Farm',
            description: 'Sensors in the school garden',
            club: ROBOTICS,
            participants: [P[1], P[2]],
            startYear: 2025,
            endYear: null,
            status: 'ACTIVE',
          },
          {
            id: 2,
            name: 'Campus Map',
            description: 'A map of the campus',
            club: null,
            participants: [],
            startYear: null,
            endYear: null,
            status: 'ACTIVE',
          },
          {
            id: 3,
            name: 'Smart Farm',
            description: 'The older farm',
            club: { id: 20, name: 'Chess', type: 'AUTONOMOUS_CLUB' },
            participants: [P[3]],
            startYear: null,
            endYear: null,
            status: 'ACTIVE',
          },
          {
            id: 4,
            name: 'AI Tutor',
            description: 'Homework help',
            club: ROBOTICS,
            participants: [P[4]],
            startYear: null,
            endYear: null,
            status: 'ACTIVE',
          },
          {
            id: 5,
            name: 'Zeta Game',
            description: 'A game',
            club: null,
            participants: [P[1]],
            startYear: 2023,
            endYear: 2024,
            status: 'ENDED',
          },
        ],
      });
      const [first] = data.projects;
      expect(Object.keys(first ?? {})).to.deep.equal([
        'id',
        'name',
        'description',
        'club',
        'participants',
        'startYear',
        'endYear',
        'status',
      ]);
      expect(Object.keys(first?.club ?? {})).to.deep.equal(['id', 'name', 'type']);
      expect(Object.keys(first?.participants[0] ?? {})).to.deep.equal(['id', 'name', 'email', 'studentNumber', 'major', 'sex']);
    });

    itPages(get, 'projects', 5, [1, 2, 4, 5, 1000], '?projectName=none');
  });

  describe('filters', () => {
    it('projectId, projectName (substring, case-insensitive), clubId, status', async () => {
      expect(await ids('?projectId=2')).to.deep.equal([2]);
      expect(await ids('?projectId=999')).to.deep.equal([]);
      expect(await ids('?projectName=smart')).to.deep.equal([1, 3]);
      expect(await ids('?projectName=SMART%20FARM')).to.deep.equal([1, 3]);
      expect(await ids('?projectName=a')).to.deep.equal([1, 2, 3, 4, 5]);
      expect(await ids('?projectName=tut')).to.deep.equal([4]);
      expect(await ids(`?projectName=${encodeURIComponent('Smart.Farm')}`)).to.deep.equal([]);
      expect(await ids('?projectName=')).to.deep.equal([1, 2, 3, 4, 5]);
      expect(await ids('?clubId=10')).to.deep.equal([1, 4]);
      expect(await ids('?clubId=20')).to.deep.equal([3]);
      expect(await ids('?clubId=77')).to.deep.equal([5]);
      expect(await ids('?clubId=30')).to.deep.equal([]);
      expect(await ids('?clubId=10&projectName=farm')).to.deep.equal([1]);
      expect(await ids('?clubId=10&projectId=3')).to.deep.equal([]);
      expect(await ids('?status=ENDED')).to.deep.equal([5]);
      expect(await ids('?status=ACTIVE')).to.deep.equal([1, 2, 3, 4]);
    });

    it('unknown parameters are ignored', async () => {
      expect(await ids('?clubName=Chess&x=1&ProjectId=2')).to.deep.equal([1, 2, 3, 4, 5]);
    });
  });

  describe('sorting and paging', () => {
    itSorts(get, 'projects', ORDER, [2, 1]);
    it('sortDirection defaults to ASC; without sortBy the order is id ascending', async () => {
      expect(await ids('?sortBy=NAME')).to.deep.equal(ORDER['NAME']?.ASC);
      expect(await ids('?sortDirection=DESC')).to.deep.equal([5, 4, 3, 2, 1]);
    });
  });

  describe('parameter validation', () => {
    itChecksIntegers(
      get,
      [
        ['page=-1', 400],
        ['page=0', 200],
        ['size=0', 400],
        ['size=1', 200],
        ['size=1000', 200],
        ['size=1001', 400],
        ['projectId=0', 400],
        ['projectId=1', 200],
        ['projectId=9007199254740991', 200],
        ['projectId=99999999999999999999', 400],
        ['clubId=0', 400],
        ['clubId=1', 200],
        ['clubId=99999999999999999999', 400],
      ],
      ['abc', '1.5', '', '-0.0', 'Infinity'],
    );
    itChecksEnums(get, [
      ['sortBy', 'ID, NAME', ['name', 'TYPE', 'CLUB', '']],
      ['sortDirection', 'ASC, DESC', ['desc', '']],
      ['status', 'ACTIVE, ENDED', ['ended', 'DONE']],
    ]);
    it('projectName over 100 characters or given twice -> 400', async () => {
      await expectRefused(get, `?projectName=${'p'.repeat(101)}`, 'projectName', 'at most 100 characters');
      await expectRefused(get, '?projectName=a&projectName=b', 'projectName', 'must be given only once');
    });
  });
});

describeDefaultPageSize({
  path: '/v1/projects',
  list: 'projects',
  scope: 'PROJECT_READ',
  pageSize: 100,
  insert: (db, count) => insertSchool(db, { projects: Array.from({ length: count }, (_, i) => buildProject({ _id: i + 1 })) }),
});
