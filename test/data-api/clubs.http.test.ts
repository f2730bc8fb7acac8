import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import {
  describeDefaultPageSize,
  expectRefused,
  itChecksEnums,
  itChecksIntegers,
  itPages,
  itSorts,
  walkPages,
} from '../helpers/parameters.js';
import { expectOk, expectPage } from '../helpers/expect.js';
import { buildClub, buildStudent, insertSchool, issueKey } from '../helpers/factories.js';

/** GET /v1/clubs over HTTP against a real database. */

interface Participant {
  id: number;
  name: string;
  email: string;
  studentNumber: number | null;
  major: string | null;
  sex: string;
}
interface Club {
  id: number;
  name: string;
  type: string;
  leader: Participant | null;
  participants: Participant[];
  foundedYear: number | null;
  status: string;
  abolishedYear: number | null;
}
interface ClubPage {
  totalPages: number;
  totalElements: number;
  clubs: Club[];
}

/*
 * Clubs of this file (members are students whose majorClubId / autonomousClubId names the club):
 *
 *  id name           type        leader                         members
 *  10 Robotics Lab   MAJOR       1 (enrolled member)            1, 2
 *  20 Robotics Fans  AUTONOMOUS  4 (graduate, not a member)     1, 3
 *  30 Chess          AUTONOMOUS  none (ABOLISHED 2024)          -
 *  40 Alpha Coders   MAJOR       3 (enrolled member)            3, 5
 *  50 Robotics Lab   MAJOR       none                           7
 *  60 Zeta           AUTONOMOUS  6 (withdrawn, not a member)    7
 *  70 Omega          AUTONOMOUS  8 (graduate, still a member)   5, 8
 *  80 Ghost          MAJOR       999 (no such student)          -
 *  90 Outsider Club  AUTONOMOUS  2 (enrolled, not a member)     -
 */
const students = [
  buildStudent({
    _id: 1,
    name: 'Kim Leader',
    sex: 'MAN',
    email: 'kim@school.test',
    grade: 3,
    classNum: 1,
    number: 1,
    major: 'SW_DEVELOPMENT',
    majorClubId: 10,
    autonomousClubId: 20,
  }),
  buildStudent({
    _id: 2,
    name: 'Lee Member',
    sex: 'WOMAN',
    email: 'lee@school.test',
    grade: 2,
    classNum: 1,
    number: 2,
    major: 'AI',
    majorClubId: 10,
  }),
  buildStudent({
    _id: 3,
    name: 'Park Lead',
    sex: 'MAN',
    email: 'park@school.test',
    grade: 3,
    classNum: 2,
    number: 3,
    major: 'SMART_IOT',
    majorClubId: 40,
    autonomousClubId: 20,
  }),
  buildStudent({
    _id: 4,
    name: 'Choi Grad',
    sex: 'WOMAN',
    email: 'choi@school.test',
    role: 'GRADUATE',
    grade: null,
    classNum: null,
    number: null,
    major: null,
  }),
  buildStudent({
    _id: 5,
    name: 'Han Member',
    sex: 'WOMAN',
    email: 'han@school.test',
    grade: 1,
    classNum: 1,
    number: 5,
    major: 'SW_DEVELOPMENT',
    majorClubId: 40,
    autonomousClubId: 70,
  }),
  buildStudent({
    _id: 6,
    name: 'Jung Gone',
    sex: 'MAN',
    email: 'jung@school.test',
    role: 'WITHDRAWN',
    grade: null,
    classNum: null,
    number: null,
    major: null,
  }),
  buildStudent({
    _id: 7,
    name: 'Seo Solo',
    sex: 'MAN',
    email: 'seo@school.test',
    grade: 1,
    classNum: 4,
    number: 18,
    major: 'AI',
    majorClubId: 50,
    autonomousClubId: 60,
  }),
  buildStudent({
    _id: 8,
    name: 'Yoon Grad',
    sex: 'MAN',
    email: 'yoon@school.test',
    role: 'GRADUATE',
    grade: null,
    classNum: null,
    number: null,
    major: null,
    autonomousClubId: 70,
  }),
];
const clubs = [
  buildClub({ _id: 10, name: 'Robotics Lab', type: 'MAJOR_CLUB', leaderId: 1, foundedYear: 2019 }),
  buildClub({ _id: 20, name: 'Robotics Fans', type: 'AUTONOMOUS_CLUB', leaderId: 4 }),
  buildClub({ _id: 30, name: 'Chess', type: 'AUTONOMOUS_CLUB', foundedYear: 2015, status: 'ABOLISHED', abolishedYear: 2024 }),
  buildClub({ _id: 40, name: 'Alpha Coders', type: 'MAJOR_CLUB', leaderId: 3 }),
  buildClub({ _id: 50, name: 'Robotics Lab', type: 'MAJOR_CLUB' }),
  buildClub({ _id: 60, name: 'Zeta', type: 'AUTONOMOUS_CLUB', leaderId: 6 }),
  buildClub({ _id: 70, name: 'Omega', type: 'AUTONOMOUS_CLUB', leaderId: 8 }),
  buildClub({ _id: 80, name: 'Ghost', type: 'MAJOR_CLUB', leaderId: 999 }),
  buildClub({ _id: 90, name: 'Outsider Club', type: 'AUTONOMOUS_CLUB', leaderId: 2 }),
];

const P: Record<number, Participant> = {
  1: { id: 1, name: 'Kim Leader', email: 'kim@school.test', studentNumber: 3101, major: 'SW_DEVELOPMENT', sex: 'MAN' },
  2: { id: 2, name: 'Lee Member', email: 'lee@school.test', studentNumber: 2102, major: 'AI', sex: 'WOMAN' },
  3: { id: 3, name: 'Park Lead', email: 'park@school.test', studentNumber: 3203, major: 'SMART_IOT', sex: 'MAN' },
  5: { id: 5, name: 'Han Member', email: 'han@school.test', studentNumber: 1105, major: 'SW_DEVELOPMENT', sex: 'WOMAN' },
  7: { id: 7, name: 'Seo Solo', email: 'seo@school.test', studentNumber: 1418, major: 'AI', sex: 'MAN' },
  8: { id: 8, name: 'Yoon Grad', email: 'yoon@school.test', studentNumber: null, major: null, sex: 'MAN' },
};
const ALL_IDS = [10, 20, 30, 40, 50, 60, 70, 80, 90];
const ORDER: Record<string, { ASC: number[]; DESC: number[] }> = {
  ID: { ASC: ALL_IDS, DESC: [90, 80, 70, 60, 50, 40, 30, 20, 10] },
  NAME: { ASC: [40, 30, 80, 70, 90, 20, 10, 50, 60], DESC: [60, 10, 50, 20, 90, 70, 80, 30, 40] },
  TYPE: { ASC: [20, 30, 60, 70, 90, 10, 40, 50, 80], DESC: [10, 40, 50, 80, 20, 30, 60, 70, 90] },
};

describe('data API: GET /v1/clubs', () => {
  let t: TestApp;
  let key: string;
  const get = (query = '') => t.request(`/v1/clubs${query}`, { headers: { 'X-API-KEY': key } });
  const ok = async (query = '') => expectOk<ClubPage>(await get(query));
  const ids = async (query = '') => (await ok(query)).clubs.map((c) => c.id);
  const byId = async (query = '') => new Map((await ok(query)).clubs.map((c) => [c.id, c]));
  before(async () => {
    t = await buildTestApp('clubs', { surfaces: ['data'] });
    await insertSchool(t.db, { students, clubs });
    key = await issueKey(t.db, { scopes: ['CLUB_READ'], rateLimit: { points: 100000, durationSeconds: 60 } });
  });
  after(() => t.close());

  describe('envelope, record shape and leaders', () => {
    it('answers the exact envelope, wrapper and club record', async () => {
      const res = await get('?clubId=10');
      const data = await expectPage<ClubPage>(res, 'clubs');
      expect(data).to.deep.equal({
        totalPages: 1,
        totalElements: 1,
        clubs: [
          {
            id: 10,
            name: 'Robotics Lab',
            type: 'MAJOR_CLUB',
            leader: P[1],
            participants: [P[2]],
            foundedYear: 2019,
            status: 'ACTIVE',
            abolishedYear: null,
          },
        ],
      });
      const club = data.clubs[0];
      expect(Object.keys(club ?? {})).to.deep.equal([
        'id',
        'name',
        'type',
        'leader',
        'participants',
        'foundedYear',
        'status',
        'abolishedYear',
      ]);
      expect(Object.keys(club?.leader ?? {})).to.deep.equal(['id', 'name', 'email', 'studentNumber', 'major', 'sex']);
    });

    it('includeLeaderInParticipants defaults to false: the leader is left out of participants', async () => {
      const implicit = await byId();
      const explicit = await byId('?includeLeaderInParticipants=false');
      expect([...implicit.values()]).to.deep.equal([...explicit.values()]);
      expect(implicit.get(10)?.participants).to.deep.equal([P[2]]);
      expect(implicit.get(40)?.participants).to.deep.equal([P[5]]);
      expect(implicit.get(10)?.leader).to.deep.equal(P[1]);
      expect(implicit.get(40)?.leader).to.deep.equal(P[3]);
    });

    it('includeLeaderInParticipants=true lists the leader among participants (ordered by id); leader stays', async () => {
      const clubsById = await byId('?includeLeaderInParticipants=true');
      expect(clubsById.get(10)?.participants).to.deep.equal([P[1], P[2]]);
      expect(clubsById.get(40)?.participants).to.deep.equal([P[3], P[5]]);
      expect(clubsById.get(10)?.leader).to.deep.equal(P[1]);
      expect(clubsById.get(40)?.leader).to.deep.equal(P[3]);
      expect((await byId('?includeLeaderInParticipants=TRUE')).get(10)?.participants).to.deep.equal([P[1], P[2]]);
    });

    it('a leader who is not a member is listed among participants only when asked for', async () => {
      expect((await byId()).get(90)?.leader).to.deep.equal(P[2]);
      expect((await byId()).get(90)?.participants).to.deep.equal([]);
      expect((await byId('?includeLeaderInParticipants=true')).get(90)?.participants).to.deep.equal([P[2]]);
    });

    it('a graduate, withdrawn, missing or absent leader reads as null; participants do not depend on the flag then', async () => {
      for (const flag of ['', '?includeLeaderInParticipants=false', '?includeLeaderInParticipants=true']) {
        const clubsById = await byId(flag);
        for (const id of [20, 30, 50, 60, 70, 80]) expect(clubsById.get(id)?.leader, `club ${id} ${flag}`).to.equal(null);
        expect(clubsById.get(20)?.participants, flag).to.deep.equal([P[1], P[3]]);
        expect(clubsById.get(30)?.participants, flag).to.deep.equal([]);
        expect(clubsById.get(50)?.participants, flag).to.deep.equal([P[7]]);
        expect(clubsById.get(60)?.participants, flag).to.deep.equal([P[7]]);
        // The graduate who led club 70 is no longer its leader, but is still listed as a member.
        expect(clubsById.get(70)?.participants, flag).to.deep.equal([P[5], P[8]]);
        expect(clubsById.get(80)?.participants, flag).to.deep.equal([]);
      }
    });

    it('shows the optional extras (foundedYear, status, abolishedYear)', async () => {
      const [chess] = (await ok('?clubId=30')).clubs;
      expect(chess).to.deep.equal({
        id: 30,
        name: 'Chess',
        type: 'AUTONOMOUS_CLUB',
        leader: null,
        participants: [],
        foundedYear: 2015,
        status: 'ABOLISHED',
        abolishedYear: 2024,
      });
    });

    it('defaults: page 0, id ascending, every club', async () => {
      const data = await ok();
      expect({ totalPages: data.totalPages, totalElements: data.totalElements }).to.deep.equal({ totalPages: 1, totalElements: 9 });
      expect(data.clubs.map((c) => c.id)).to.deep.equal(ALL_IDS);
    });

    itPages(get, 'clubs', 9, [1, 3, 8, 9, 1000], '?clubName=nothing');
  });

  describe('filters', () => {
    it('clubType, clubName (substring, case-insensitive), clubId, clubStatus', async () => {
      expect(await ids('?clubType=MAJOR_CLUB')).to.deep.equal([10, 40, 50, 80]);
      expect(await ids('?clubType=AUTONOMOUS_CLUB')).to.deep.equal([20, 30, 60, 70, 90]);
      expect(await ids('?clubName=robotics')).to.deep.equal([10, 20, 50]);
      expect(await ids('?clubName=ROBOTICS%20L')).to.deep.equal([10, 50]);
      expect(await ids('?clubName=a')).to.deep.equal([10, 20, 40, 50, 60, 70]);
      expect(await ids('?clubName=lab&clubType=MAJOR_CLUB')).to.deep.equal([10, 50]);
      expect(await ids('?clubName=lab&clubType=AUTONOMOUS_CLUB')).to.deep.equal([]);
      expect(await ids(`?clubName=${encodeURIComponent('.*')}`)).to.deep.equal([]);
      expect(await ids('?clubId=30')).to.deep.equal([30]);
      expect(await ids('?clubId=999')).to.deep.equal([]);
      expect(await ids('?clubId=40&clubType=AUTONOMOUS_CLUB')).to.deep.equal([]);
      expect(await ids('?clubStatus=ABOLISHED')).to.deep.equal([30]);
      expect(await ids('?clubStatus=ACTIVE')).to.deep.equal([10, 20, 40, 50, 60, 70, 80, 90]);
      expect(await ids('?clubName=')).to.deep.equal(ALL_IDS);
    });

    it('unknown parameters (e.g. status, which real clients send) are ignored', async () => {
      expect(await ids('?status=ACTIVE&foo=1&ClubType=MAJOR_CLUB')).to.deep.equal(ALL_IDS);
    });
  });

  describe('sorting and paging', () => {
    itSorts(get, 'clubs', ORDER, [3, 1]);
    it('sortDirection defaults to ASC; without sortBy the order is id ascending', async () => {
      expect(await ids('?sortBy=NAME')).to.deep.equal(ORDER['NAME']?.ASC);
      expect(await ids('?sortDirection=DESC')).to.deep.equal(ORDER['ID']?.DESC);
      expect(await walkPages(get, 'clubs', '?sortBy=NAME&sortDirection=DESC&clubName=o', 2)).to.deep.equal([10, 50, 20, 90, 70, 80, 40]);
    });
  });

  describe('parameter validation', () => {
    itChecksIntegers(
      get,
      [
        ['page=-1', 400],
        ['page=0', 200],
        ['page=2147483648', 400],
        ['size=0', 400],
        ['size=1', 200],
        ['size=1000', 200],
        ['size=1001', 400],
        ['clubId=0', 400],
        ['clubId=1', 200],
        ['clubId=9007199254740991', 200],
        ['clubId=99999999999999999999', 400],
      ],
      ['abc', '1.5', '', ' ', '1,2'],
    );
    for (const raw of ['yes', '1', '', 'null']) {
      it(`includeLeaderInParticipants='${raw}' -> 400`, () =>
        expectRefused(get, `?includeLeaderInParticipants=${raw}`, 'includeLeaderInParticipants', 'must be true or false'));
    }
    it('includeLeaderInParticipants given twice -> 400', () =>
      expectRefused(
        get,
        '?includeLeaderInParticipants=true&includeLeaderInParticipants=false',
        'includeLeaderInParticipants',
        'must be given only once',
      ));

    itChecksEnums(get, [
      ['clubType', 'MAJOR_CLUB, AUTONOMOUS_CLUB', ['major_club', 'MAJOR', 'JOB_CLUB', '']],
      ['clubStatus', 'ACTIVE, ABOLISHED', ['active', 'CLOSED']],
      ['sortBy', 'ID, NAME, TYPE', ['name', 'STUDENT_NUMBER', 'LEADER', '']],
      ['sortDirection', 'ASC, DESC', ['desc', 'Asc', '']],
    ]);
    it('clubName over 100 characters -> 400; given twice -> 400', async () => {
      await expectRefused(get, `?clubName=${'x'.repeat(101)}`, 'clubName', 'at most 100 characters');
      await expectRefused(get, '?clubName=a&clubName=b', 'clubName', 'must be given only once');
    });
  });
});

describeDefaultPageSize({
  path: '/v1/clubs',
  list: 'clubs',
  scope: 'CLUB_READ',
  pageSize: 100,
  insert: (db, count) => insertSchool(db, { clubs: Array.from({ length: count }, (_, i) => buildClub({ _id: i + 1 })) }),
});
