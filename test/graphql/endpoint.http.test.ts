import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { MAX_COST, MAX_DEPTH } from '../../src/graphql/limits.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { buildClub, buildProject, buildStudent, insertSchool, issueKey } from '../helpers/factories.js';

/** POST /graphql with an API key: agreement with REST, scopes, limits and error messages. */

interface GraphQLBody<T = Record<string, unknown>> {
  data?: T | null;
  errors?: { message: string; path?: string[]; extensions?: { code?: string } }[];
}

const PARTICIPANT = 'id name email studentNumber major sex';
const CLUB_SUMMARY = 'id name type';
const STUDENT_FIELDS = `id name sex email grade classNum number studentNumber major role dormitoryFloor dormitoryRoom
  majorClub { ${CLUB_SUMMARY} } autonomousClub { ${CLUB_SUMMARY} } specialty githubId githubUrl`;

/** The depth limit docs/limits-and-security.md documents (its GraphQL table: `| Depth | 10 object levels | 400 |`). */
function documentedDepth(): number {
  const row = /^\| Depth \| (\d+) object levels \| 400 \|$/m.exec(readFileSync('docs/limits-and-security.md', 'utf8'));
  if (!row?.[1]) throw new Error('docs/limits-and-security.md has no "| Depth | N object levels | 400 |" row');
  return Number(row[1]);
}

describe('GraphQL: POST /graphql', () => {
  let t: TestApp;
  let key: string;

  const gql = async <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, apiKey: string | null = key) => {
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey ? { 'X-API-KEY': apiKey } : {}) },
      body: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
    });
    return { res, body: (await res.json()) as GraphQLBody<T> };
  };
  /** Runs a query that must succeed and returns its data. */
  const data = async <T>(query: string, variables?: Record<string, unknown>) => {
    const { res, body } = await gql<T>(query, variables);
    expect(body.errors, JSON.stringify(body.errors)).to.equal(undefined);
    expect(res.status).to.equal(200);
    if (!body.data) throw new Error('no data');
    return body.data;
  };
  const rest = async <T>(path: string) => expectOk<T>(await t.request(path, { headers: { 'X-API-KEY': key } }));

  before(async () => {
    t = await buildTestApp('graphql', { surfaces: ['data'] });
    await insertSchool(t.db, {
      students: [
        buildStudent({
          _id: 1,
          name: 'Kim Minsu',
          grade: 1,
          classNum: 2,
          number: 3,
          majorClubId: 10,
          autonomousClubId: 20,
          dormitoryFloor: 2,
          dormitoryRoom: 204,
        }),
        buildStudent({
          _id: 2,
          name: 'Lee Jiwoo',
          sex: 'WOMAN',
          grade: 1,
          classNum: 1,
          number: 7,
          major: 'AI',
          majorClubId: 10,
          specialty: 'ML',
          githubId: 'lee',
          githubUrl: 'https://github.com/lee',
        }),
        buildStudent({
          _id: 3,
          name: 'Kim Minsu',
          grade: 2,
          classNum: 4,
          number: 18,
          major: 'SMART_IOT',
          role: 'STUDENT_COUNCIL',
          autonomousClubId: 20,
        }),
        buildStudent({
          _id: 4,
          name: 'Park Grad',
          role: 'GRADUATE',
          grade: null,
          classNum: null,
          number: null,
          major: null,
          autonomousClubId: 20,
        }),
        buildStudent({ _id: 5, name: 'Choi Left', role: 'WITHDRAWN', grade: null, classNum: null, number: null, major: null }),
      ],
      clubs: [
        buildClub({ _id: 10, name: 'Robotics', type: 'MAJOR_CLUB', leaderId: 2, foundedYear: 2020 }),
        buildClub({ _id: 20, name: 'Band', type: 'AUTONOMOUS_CLUB', leaderId: 4 }),
        buildClub({ _id: 30, name: 'Robotics', type: 'MAJOR_CLUB' }),
      ],
      projects: [
        buildProject({ _id: 1, name: 'Smart Farm', clubId: 10, participantIds: [2, 1, 4] }),
        buildProject({ _id: 2, name: 'Campus Map', participantIds: [3] }),
        buildProject({ _id: 3, name: 'smart mirror', clubId: 20, participantIds: [] }),
      ],
    });
    key = await issueKey(t.db, { rateLimit: { points: 100000, durationSeconds: 60 } });
  });
  after(() => t.close());

  describe('agrees with REST on the same query', () => {
    const studentCases: [string, string][] = [
      ['', ''],
      ['?name=kim&sortBy=NAME&sortDirection=DESC', 'filter: { name: "kim" }, sortBy: NAME, sortDirection: DESC'],
      [
        '?includeGraduates=true&includeWithdrawn=true&sortBy=STUDENT_NUMBER&size=2&page=1',
        'filter: { includeGraduates: true, includeWithdrawn: true }, sortBy: STUDENT_NUMBER, size: 2, page: 1',
      ],
      ['?grade=1&sortBy=NUMBER&sortDirection=DESC', 'filter: { grade: 1 }, sortBy: NUMBER, sortDirection: DESC'],
      ['?role=GRADUATE&includeGraduates=true', 'filter: { role: GRADUATE, includeGraduates: true }'],
      [
        '?onlyEnrolled=true&includeGraduates=true&sortBy=DORMITORY_ROOM',
        'filter: { onlyEnrolled: true, includeGraduates: true }, sortBy: DORMITORY_ROOM',
      ],
      ['?page=5', 'page: 5'],
    ];
    for (const [query, args] of studentCases) {
      it(`students${query || ' (defaults)'}`, async () => {
        const viaRest = await rest<unknown>(`/v1/students${query}`);
        const viaGraphql = await data<{ students: unknown }>(
          `{ students${args ? `(${args})` : ''} { totalPages totalElements students { ${STUDENT_FIELDS} } } }`,
        );
        expect(viaGraphql.students).to.deep.equal(viaRest);
      });
    }

    it('students, through variables', async () => {
      const viaRest = await rest<unknown>('/v1/students?email=SCHOOL&sex=MAN&sortBy=EMAIL&sortDirection=DESC&size=1');
      const viaGraphql = await data<{ students: unknown }>(
        `query Q($filter: StudentFilter, $size: Int, $sortBy: StudentSortBy, $dir: SortDirection) {
          students(filter: $filter, size: $size, sortBy: $sortBy, sortDirection: $dir) { totalPages totalElements students { ${STUDENT_FIELDS} } }
        }`,
        { filter: { email: 'SCHOOL', sex: 'MAN' }, size: 1, sortBy: 'EMAIL', dir: 'DESC' },
      );
      expect(viaGraphql.students).to.deep.equal(viaRest);
      expect((viaRest as { totalElements: number }).totalElements).to.equal(2);
    });

    const clubCases: [string, string, boolean][] = [
      ['', '', false],
      ['?includeLeaderInParticipants=true', '', true],
      ['?clubName=ROBO&sortBy=NAME&sortDirection=DESC', 'filter: { clubName: "ROBO" }, sortBy: NAME, sortDirection: DESC', false],
      ['?clubType=AUTONOMOUS_CLUB&includeLeaderInParticipants=true', 'filter: { clubType: AUTONOMOUS_CLUB }', true],
      ['?clubId=10&size=1', 'filter: { clubId: 10 }, size: 1', false],
    ];
    for (const [query, args, includeLeader] of clubCases) {
      it(`clubs${query || ' (defaults)'}`, async () => {
        const viaRest = await rest<unknown>(`/v1/clubs${query}`);
        const viaGraphql = await data<{ clubs: unknown }>(`{ clubs${args ? `(${args})` : ''} { totalPages totalElements clubs {
          id name type leader { ${PARTICIPANT} } participants(includeLeader: ${includeLeader}) { ${PARTICIPANT} } foundedYear status abolishedYear } } }`);
        expect(viaGraphql.clubs).to.deep.equal(viaRest);
      });
    }

    const projectCases: [string, string][] = [
      ['', ''],
      ['?projectName=SMART&sortBy=NAME', 'filter: { projectName: "SMART" }, sortBy: NAME'],
      ['?clubId=10', 'filter: { clubId: 10 }'],
      ['?sortDirection=DESC&size=2&page=0', 'sortDirection: DESC, size: 2, page: 0'],
    ];
    for (const [query, args] of projectCases) {
      it(`projects${query || ' (defaults)'}`, async () => {
        const viaRest = await rest<unknown>(`/v1/projects${query}`);
        const viaGraphql = await data<{ projects: unknown }>(`{ projects${args ? `(${args})` : ''} { totalPages totalElements projects {
          id name description club { ${CLUB_SUMMARY} } participants { ${PARTICIPANT} } startYear endYear status } } }`);
        expect(viaGraphql.projects).to.deep.equal(viaRest);
      });
    }

    it('nested records are the same records REST shows at the top level', async () => {
      const nested = await data<{ projects: { projects: { id: number; club: { leader: unknown; participants: unknown[] } | null }[] } }>(
        `{ projects(filter: { projectId: 1 }) { projects { id club { leader { ${PARTICIPANT} } participants { ${PARTICIPANT} } } } } }`,
      );
      const club = (await rest<{ clubs: { leader: unknown; participants: unknown[] }[] }>('/v1/clubs?clubId=10')).clubs[0];
      expect(nested.projects.projects[0]?.club).to.deep.equal({ leader: club?.leader, participants: club?.participants });
      // The graduate leader of Band reads as null through any path.
      const band = await data<{ students: { students: { autonomousClub: { leader: unknown } | null }[] } }>(
        '{ students(filter: { studentId: 1 }) { students { autonomousClub { leader { id } } } } }',
      );
      expect(band.students.students[0]?.autonomousClub).to.deep.equal({ leader: null });
    });
  });

  describe('authentication and scopes', () => {
    it('401 envelope without a key, or with a bad one', async () => {
      const { res } = await gql('{ viewerScopes }', undefined, null);
      expect(res.status).to.equal(401);
      const malformed = await t.request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-API-KEY': 'x' },
        body: '{"query":"{ viewerScopes }"}',
      });
      await expectEnvelope(malformed, 401, 'UNAUTHORIZED', 'Malformed API key');
      const missing = await t.request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ viewerScopes }"}',
      });
      await expectEnvelope(missing, 401, 'UNAUTHORIZED', 'Missing API key');
    });

    it('each root field needs its scope: FORBIDDEN naming the scope, other fields unaffected', async () => {
      const studentsOnly = await issueKey(t.db, { scopes: ['STUDENT_READ'] });
      expect((await gql<{ viewerScopes: string[] }>('{ viewerScopes }', undefined, studentsOnly)).body).to.deep.equal({
        data: { viewerScopes: ['STUDENT_READ'] },
      });
      const ok = await gql<{ students: { totalElements: number } }>('{ students { totalElements } }', undefined, studentsOnly);
      expect(ok.body).to.deep.equal({ data: { students: { totalElements: 3 } } });

      for (const [field, scope] of [
        ['clubs', 'CLUB_READ'],
        ['projects', 'PROJECT_READ'],
      ] as const) {
        const { res, body } = await gql(`{ ${field} { totalElements } }`, undefined, studentsOnly);
        expect(res.status).to.equal(200);
        expect(body.data).to.equal(null);
        expect(body.errors).to.have.length(1);
        expect(body.errors?.[0]).to.deep.equal({
          message: `This API key lacks the ${scope} scope that this endpoint requires.`,
          path: [field],
          extensions: { code: 'FORBIDDEN' },
        });
      }
      const noStudents = await issueKey(t.db, { scopes: ['CLUB_READ', 'PROJECT_READ'] });
      const { body } = await gql('{ students { totalElements } }', undefined, noStudents);
      expect(body.errors?.[0]?.extensions?.code).to.equal('FORBIDDEN');
      expect(body.errors?.[0]?.message).to.include('STUDENT_READ');
    });

    it('answers carry the rate-limit headers', async () => {
      const { res } = await gql('{ viewerScopes }');
      expect(res.headers.get('ratelimit-policy')).to.equal('"default";q=100000;w=60');
      expect(res.headers.get('x-ratelimit-limit')).to.equal('100000');
    });
  });

  describe('depth and cost limits', () => {
    /** students { students { majorClub { leader { majorClub { leader ... { id } } } } } } with `depth` object levels. */
    function deepQuery(depth: number): string {
      let inner = 'id';
      for (let level = depth; level > 2; level--) inner = `${level % 2 === 1 ? 'majorClub' : 'leader'} { ${inner} }`;
      return `{ students { students { ${inner} } } }`;
    }

    it(`depth ${MAX_DEPTH} is served; depth ${MAX_DEPTH + 1} is refused with a clear message`, async () => {
      // The depth README.md promises, whatever src/graphql/limits.ts says: a change to either one fails here.
      const depth = documentedDepth();
      await data(deepQuery(depth));
      const { res, body } = await gql(deepQuery(depth + 1));
      expect(res.status).to.equal(400);
      expect(body.data).to.equal(undefined);
      expect(body.errors?.[0]?.message).to.equal(`Query is too deep: depth ${depth + 1}, at most ${depth} allowed.`);
      expect(body.errors?.[0]?.extensions?.code).to.equal('BAD_REQUEST');
    });

    it('a query that could fetch too much is refused before running, with a clear message', async () => {
      const { res, body } = await gql(
        '{ students(size: 1000) { students { majorClub { participants { majorClub { participants { id } } } } } } }',
      );
      expect(res.status).to.equal(400);
      expect(body.errors).to.have.length(1);
      expect(body.errors?.[0]?.message).to.match(
        new RegExp(
          `^Query is too costly: estimated cost \\d+, at most ${MAX_COST} allowed; ask for smaller pages, shorter date ranges or fewer nested lists\\.$`,
        ),
      );
      expect(body.errors?.[0]?.extensions?.code).to.equal('BAD_REQUEST');
      // The size comes from variables too.
      const viaVariables = await gql(
        'query($n: Int) { students(size: $n) { students { majorClub { participants { majorClub { participants { id } } } } } } }',
        { n: 1000 },
      );
      expect(viaVariables.res.status).to.equal(400);
      expect(viaVariables.body.errors?.[0]?.message).to.match(/^Query is too costly/);
      // The same shape over a small page is served.
      await data('{ students(size: 1) { students { majorClub { participants { majorClub { participants { id } } } } } } }');
    });

    it('the largest REST pages stay within the limits', async () => {
      for (const path of ['/v1/students?size=1000', '/v1/clubs?size=1000&includeLeaderInParticipants=true', '/v1/projects?size=1000']) {
        await rest(path);
      }
    });
  });

  describe('errors have clear messages', () => {
    it('an argument of the wrong type is a validation error', async () => {
      const { res, body } = await gql('{ students(size: "abc") { totalElements } }');
      expect(res.status).to.equal(400);
      expect(body.errors?.[0]?.extensions?.code).to.equal('GRAPHQL_VALIDATION_FAILED');
      expect(body.errors?.[0]?.message).to.equal('Int cannot represent non-integer value: "abc"');
    });

    it('an unknown enum value or field names it', async () => {
      const sort = await gql('{ students(sortBy: HEIGHT) { totalElements } }');
      expect(sort.res.status).to.equal(400);
      expect(sort.body.errors?.[0]?.message).to.equal('Value "HEIGHT" does not exist in "StudentSortBy" enum.');
      const field = await gql('{ clubs { clubs { motto } } }');
      expect(field.res.status).to.equal(400);
      expect(field.body.errors?.[0]?.message).to.equal('Cannot query field "motto" on type "Club".');
    });

    it('an out-of-range argument is BAD_REQUEST naming the parameter and its range', async () => {
      const cases: [string, string][] = [
        ['students(filter: { grade: 4 })', "Invalid parameter 'grade': must be an integer from 1 to 3 (got 4)."],
        ['students(filter: { classNum: 0 })', "Invalid parameter 'classNum': must be an integer from 1 to 4 (got 0)."],
        ['students(filter: { number: 19 })', "Invalid parameter 'number': must be an integer from 1 to 18 (got 19)."],
        ['students(size: 1001)', "Invalid parameter 'size': must be an integer from 1 to 1000 (got 1001)."],
        ['students(page: -1)', "Invalid parameter 'page': must be an integer from 0 to 2147483647 (got -1)."],
        ['students(filter: { studentId: 0 })', "Invalid parameter 'studentId': must be an integer from 1 to 9007199254740991 (got 0)."],
      ];
      for (const [field, message] of cases) {
        const { body } = await gql(`{ ${field} { totalElements } }`);
        expect(body.data, field).to.equal(null);
        expect(body.errors?.[0], field).to.deep.equal({ message, path: ['students'], extensions: { code: 'BAD_REQUEST' } });
      }
      const { body } = await gql('{ clubs(size: 0) { totalElements } }');
      expect(body.errors?.[0]?.message).to.equal("Invalid parameter 'size': must be an integer from 1 to 1000 (got 0).");
    });

    it('a syntax error or a body that is not JSON is a 400', async () => {
      const { res, body } = await gql('{ students { totalElements }');
      expect(res.status).to.equal(400);
      expect(body.errors?.[0]?.extensions?.code).to.equal('GRAPHQL_PARSE_FAILED');
      expect(body.errors?.[0]?.message).to.match(/^Syntax Error: /);
      const notJson = await t.request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-API-KEY': key },
        body: '{not json',
      });
      await expectEnvelope(notJson, 400, 'BAD_REQUEST');
    });
  });
});
