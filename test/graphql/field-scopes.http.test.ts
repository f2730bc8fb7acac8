import { expect } from 'chai';
import type { ApiScope } from '../../src/data/__generated__/enums.js';
import { API_SCOPES } from '../../src/data/keys/store.js';
import { FIELD_SCOPES } from '../../src/graphql/field-scopes.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildClub, buildProject, buildStudent, insertSchool, issueKey } from '../helpers/factories.js';

/**
 * GraphQL answers what REST answers (src/graphql/field-scopes.ts): a record reached through another one shows only
 * its summary unless the caller holds the record's own scope, at every depth. Every combination of
 * the four scopes is tried on every nested path, once with the summary and once with a field
 * beyond it.
 */

interface Body {
  data?: unknown;
  errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string } }[];
}

type RecordType = keyof typeof FIELD_SCOPES;

/** A nested path: the root field (and its scope), the query around the probed record, and that record's type. */
interface NestedPath {
  readonly name: string;
  readonly root: ApiScope;
  readonly type: RecordType;
  readonly query: (selection: string) => string;
  /** The scope of a record passed on the way (its field beyond the summary leads on). */
  readonly via?: ApiScope;
}

const PATHS: readonly NestedPath[] = [
  { name: 'club leader', root: 'CLUB_READ', type: 'Student', query: (s) => `{ clubs(size: 2) { clubs { leader { ${s} } } } }` },
  {
    name: 'club participants',
    root: 'CLUB_READ',
    type: 'Student',
    query: (s) => `{ clubs(size: 2) { clubs { participants(includeLeader: true) { ${s} } } } }`,
  },
  {
    name: 'project participants',
    root: 'PROJECT_READ',
    type: 'Student',
    query: (s) => `{ projects(size: 2) { projects { participants { ${s} } } } }`,
  },
  { name: "project's club", root: 'PROJECT_READ', type: 'Club', query: (s) => `{ projects(size: 2) { projects { club { ${s} } } } }` },
  {
    name: "student's major club",
    root: 'STUDENT_READ',
    type: 'Club',
    query: (s) => `{ students(size: 2) { students { majorClub { ${s} } } } }`,
  },
  {
    name: "student's autonomous club",
    root: 'STUDENT_READ',
    type: 'Club',
    query: (s) => `{ students(size: 2) { students { autonomousClub { ${s} } } } }`,
  },
  {
    name: "project's club's leader",
    root: 'PROJECT_READ',
    type: 'Student',
    query: (s) => `{ projects(size: 2) { projects { club { id leader { ${s} } } } } }`,
    via: 'CLUB_READ',
  },
  {
    name: "club participant's major club",
    root: 'CLUB_READ',
    type: 'Club',
    query: (s) => `{ clubs(size: 2) { clubs { participants { id majorClub { ${s} } } } } }`,
    via: 'STUDENT_READ',
  },
];

/** A field outside each type's summary (and, for Student, its private ones: room, GitHub id, specialty). */
const BEYOND: Readonly<Record<RecordType, readonly string[]>> = {
  Student: ['dormitoryRoom', 'githubId', 'specialty', 'grade', 'role'],
  Club: ['foundedYear', 'status', 'participants { id }', 'leader { id }'],
  Project: ['description'],
};

/** Every non-empty combination of the four scopes. */
function combinations(): ApiScope[][] {
  const all: ApiScope[][] = [];
  for (let mask = 1; mask < 1 << API_SCOPES.length; mask++) all.push(API_SCOPES.filter((_s, i) => mask & (1 << i)));
  return all;
}

describe('GraphQL: nested records show what REST shows (every combination of scopes)', () => {
  let t: TestApp;
  const keys = new Map<string, string>();

  const gql = async (key: string, query: string): Promise<{ status: number; body: Body }> => {
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-KEY': key },
      body: JSON.stringify({ query }),
    });
    return { status: res.status, body: (await res.json()) as Body };
  };

  before(async () => {
    t = await buildTestApp('graphql-field-scopes', { surfaces: ['data'] });
    await insertSchool(t.db, {
      students: [
        buildStudent({ _id: 1, name: 'Kim', majorClubId: 10, autonomousClubId: 20, dormitoryRoom: 204, githubId: 'kim', specialty: 'ML' }),
        buildStudent({ _id: 2, name: 'Lee', majorClubId: 10, autonomousClubId: 20 }),
      ],
      clubs: [
        buildClub({ _id: 10, name: 'Robotics', type: 'MAJOR_CLUB', leaderId: 1, foundedYear: 2020 }),
        buildClub({ _id: 20, name: 'Band', type: 'AUTONOMOUS_CLUB', leaderId: 2 }),
      ],
      projects: [buildProject({ _id: 1, name: 'Smart Farm', clubId: 10, participantIds: [1, 2] })],
    });
    for (const scopes of combinations()) {
      keys.set(scopes.join('+'), await issueKey(t.db, { scopes, rateLimit: { points: 100000, durationSeconds: 60 } }));
    }
  });
  after(() => t.close());

  it('the summaries are exactly the fields REST shows inside another resource', async () => {
    const all = keys.get(API_SCOPES.join('+')) ?? '';
    const rest = async <T>(path: string): Promise<T> => {
      const res = await t.request(path, { headers: { 'X-API-KEY': all } });
      expect(res.status, path).to.equal(200);
      return ((await res.json()) as { data: T }).data;
    };
    const { clubs } = await rest<{ clubs: { leader: object | null; participants: object[] }[] }>(
      '/v1/clubs?includeLeaderInParticipants=true',
    );
    const { projects } = await rest<{ projects: { club: object | null; participants: object[] }[] }>('/v1/projects');
    const { students } = await rest<{ students: { majorClub: object | null; autonomousClub: object | null }[] }>('/v1/students');
    const fieldsOf = (records: (object | null)[]) => [
      ...new Set(
        records.map((r) =>
          Object.keys(r ?? {})
            .sort()
            .join(' '),
        ),
      ),
    ];
    const nestedStudents = [...clubs.flatMap((c) => [c.leader, ...c.participants]), ...projects.flatMap((p) => p.participants)];
    const nestedClubs = [...students.flatMap((s) => [s.majorClub, s.autonomousClub]), ...projects.map((p) => p.club)];
    // The fixture fills every nested place: two leaders, their two clubs' members, the project's two participants and club.
    expect([nestedStudents.length, nestedClubs.length]).to.deep.equal([8, 5]);
    expect(fieldsOf(nestedStudents)).to.deep.equal([[...FIELD_SCOPES.Student.summary].sort().join(' ')]);
    expect(fieldsOf(nestedClubs)).to.deep.equal([[...FIELD_SCOPES.Club.summary].sort().join(' ')]);
  });

  for (const scopes of combinations()) {
    const label = scopes.join('+');
    it(`scopes ${label}`, async () => {
      const key = keys.get(label) ?? '';
      for (const path of PATHS) {
        const rootHeld = scopes.includes(path.root);
        const viaHeld = !path.via || scopes.includes(path.via);
        const own = FIELD_SCOPES[path.type];
        // The summary: answered whenever the root field is.
        const summary = await gql(key, path.query(own.summary.join(' ')));
        expect(summary.status, `${path.name} summary`).to.equal(200);
        if (!rootHeld) expect(summary.body.errors?.[0]?.message, path.name).to.contain(`lacks the ${path.root} scope`);
        else if (viaHeld) expect(summary.body.errors, `${path.name} summary`).to.equal(undefined);
        else expect(summary.body.errors?.[0]?.message, path.name).to.contain(`needs the ${path.via ?? ''} scope`);
        if (!rootHeld || !viaHeld) continue;
        // Beyond the summary: only with the record's own scope.
        for (const field of BEYOND[path.type]) {
          const beyond = await gql(key, path.query(`id ${field}`));
          const what = `${path.name} ${field} with ${label}: ${JSON.stringify(beyond.body.errors)}`;
          if (scopes.includes(own.scope)) {
            expect(beyond.body.errors, what).to.equal(undefined);
          } else {
            const error = beyond.body.errors?.[0];
            expect(error?.extensions?.code, what).to.equal('FORBIDDEN');
            const name = field.split(' ')[0] ?? field;
            expect(error?.message, what).to.equal(
              `${path.type}.${name} needs the ${own.scope} scope: without it a ${path.type.toLowerCase()} reached through another record shows only ${own.summary.join(', ')}.`,
            );
          }
        }
      }
    });
  }

  it('a CLUB_READ key cannot read the private fields the issue names through participants', async () => {
    const { body } = await gql(
      keys.get('CLUB_READ') ?? '',
      '{ clubs { clubs { participants { email dormitoryRoom specialty githubId } } } }',
    );
    // The refused fields are nullable: they read as null, each with its error.
    expect(body.data).to.deep.equal({
      clubs: {
        clubs: [
          { participants: [{ email: 's2@school.test', dormitoryRoom: null, specialty: null, githubId: null }] },
          { participants: [{ email: 's1@school.test', dormitoryRoom: null, specialty: null, githubId: null }] },
        ],
      },
    });
    expect(body.errors?.map((e) => e.message.split(' ')[0])).to.include.members([
      'Student.dormitoryRoom',
      'Student.specialty',
      'Student.githubId',
    ]);
    expect(JSON.stringify(body)).not.to.contain('204');
  });
});
