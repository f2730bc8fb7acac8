import { expect } from 'chai';
import { SchoolWriter } from '../../src/data/school/writes.js';
import { CLI_ACTOR } from '../../src/data/school/types.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { buildClub, buildProject, buildStudent, insertSchool, issueKey } from '../helpers/factories.js';

/**
 * GET /v1/changes over HTTP (issue 24; src/data/school/feed.ts): the data API's envelope, keys,
 * validation and rate limit; events in commit order whose before/after are exactly what the REST
 * lists show; exact resume from a cursor; filtering by the key's scopes; 410 past the retention;
 * the same feed in GraphQL and in the OpenAPI document.
 */

interface Event {
  id: string;
  type: string;
  time: string;
  actor: { kind: string; accountId?: number };
  batchId: string | null;
  data: { before: Record<string, unknown> | null; after: Record<string, unknown> | null };
}
interface Feed {
  events: Event[];
  nextCursor: string;
}

describe('GET /v1/changes', function () {
  this.timeout(120000);
  let t: TestApp;
  let all: string;
  let clubsOnly: string;
  let neisOnly: string;
  const now = new Date('2026-03-02T09:00:00+09:00');
  const get = (path: string, key: string) => t.request(path, { headers: { 'X-API-KEY': key } });
  const feed = async (query: string, key = all) => expectOk<Feed>(await get(`/v1/changes${query}`, key));

  before(async () => {
    t = await buildTestApp('changes', { surfaces: ['data'] });
    await insertSchool(t.db, {
      students: [
        buildStudent({ _id: 1, name: 'Kim One', email: 'one@school.test', grade: 2, classNum: 3, number: 4, major: 'AI', majorClubId: 10 }),
        buildStudent({ _id: 2, name: 'Lee Two', email: 'two@school.test', grade: 1, classNum: 1, number: 1, major: 'SMART_IOT' }),
      ],
      clubs: [buildClub({ _id: 10, name: 'Robotics', type: 'MAJOR_CLUB' }), buildClub({ _id: 20, name: 'Chess', type: 'AUTONOMOUS_CLUB' })],
      projects: [buildProject({ _id: 1, name: 'Smart Farm', description: 'Garden', clubId: 10, participantIds: [1], startYear: 2025 })],
    });
    const rateLimit = { points: 100000, durationSeconds: 60 };
    all = await issueKey(t.db, { rateLimit });
    clubsOnly = await issueKey(t.db, { scopes: ['CLUB_READ'], rateLimit });
    neisOnly = await issueKey(t.db, { scopes: ['NEIS_READ'], rateLimit });
  });
  after(async () => {
    await t.close();
  });

  it('serves the events of each change in commit order, their before/after exactly as the REST lists show them', async () => {
    expect(await feed('')).to.deep.equal({ events: [], nextCursor: '0' });
    const writer = new SchoolWriter(t.db, CLI_ACTOR, { timeZone: 'Asia/Seoul', now: () => now });
    // Student 2 joins Robotics: the student and the club change.
    expect((await writer.updateStudent(2, { majorClubId: 10 })).issues).to.deep.equal([]);
    const res = await get('/v1/changes', all);
    expect(res.headers.get('etag')).to.match(/^"/);
    expect(res.headers.get('ratelimit')).to.match(/^"default";r=\d+;t=\d+$/);
    const first = await expectOk<Feed>(res);
    expect(first.events.map((e) => [e.id, e.type])).to.deep.equal([
      ['1', 'student.updated'],
      ['2', 'club.updated'],
    ]);
    expect(first.nextCursor).to.equal('2');
    const [moved, club] = first.events as [Event, Event];
    expect(moved).to.deep.include({ time: now.toISOString(), actor: { kind: 'CLI', accountId: null } });
    expect(moved.batchId).to.be.a('string');
    expect(club.batchId).to.equal(moved.batchId);
    const students = await expectOk<{ students: unknown[] }>(await get('/v1/students?studentId=2', all));
    expect(moved.data.after).to.deep.equal(students.students[0]);
    expect(moved.data.before?.['majorClub']).to.equal(null);
    const clubs = await expectOk<{ clubs: unknown[] }>(await get('/v1/clubs?clubId=10', all));
    expect(club.data.after).to.deep.equal(clubs.clubs[0]);

    // A new project, then its deletion: created has before null, deleted has after null.
    const created = await writer.createProject({ name: 'Weather Station', clubId: 20 });
    const projects = await expectOk<{ projects: unknown[] }>(await get(`/v1/projects?projectId=${created.id}`, all));
    await writer.deleteProject(created.id ?? 0);
    const next = await feed('?after=2');
    expect(next.events.map((e) => e.type)).to.deep.equal(['project.created', 'project.deleted']);
    expect(next.events[0]?.data).to.deep.equal({ before: null, after: projects.projects[0] });
    expect(next.events[1]?.data).to.deep.equal({ before: projects.projects[0], after: null });
    expect(next.nextCursor).to.equal('4');

    // Exact resume: pages of one from any cursor give the events after it.
    const whole = (await feed('?after=0')).events;
    for (let from = 0; from <= whole.length; from++) {
      const read: Event[] = [];
      for (let cursor = String(from); ;) {
        const page = await feed(`?after=${cursor}&limit=1`);
        if (page.events.length === 0) {
          expect(page.nextCursor).to.equal(cursor);
          break;
        }
        read.push(...page.events);
        cursor = page.nextCursor;
      }
      expect(read).to.deep.equal(whole.slice(from));
    }

    // The same feed in GraphQL.
    const graphql = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-KEY': all },
      body: JSON.stringify({ query: '{ changes(after: "1", limit: 1) { events { id type data } nextCursor } }' }),
    });
    expect(await graphql.json()).to.deep.equal({
      data: { changes: { events: [{ id: '2', type: 'club.updated', data: club.data }], nextCursor: '2' } },
    });
  });

  it("filters by the key's scopes: CLUB_READ alone sees the club events, with participant summaries; NEIS_READ alone sees none of them", async () => {
    const clubEvents = await feed('', clubsOnly);
    expect(clubEvents.events.map((e) => e.type)).to.deep.equal(['club.updated']);
    expect(clubEvents.nextCursor).to.equal('4');
    const participants = (clubEvents.events[0]?.data.after?.['participants'] ?? []) as object[];
    expect(participants.map((p) => Object.keys(p))).to.deep.equal([
      ['id', 'name', 'email', 'studentNumber', 'major', 'sex'],
      ['id', 'name', 'email', 'studentNumber', 'major', 'sex'],
    ]);
    // The answer is per set of scopes: the all-scopes key's cached answer is not served to it.
    expect((await feed('', all)).events.length).to.equal(4);
    expect((await feed('', clubsOnly)).events.length).to.equal(1);

    // NEIS_READ alone (issue 24: the feed carries neis.*.updated) sees none of the school's events.
    expect(await feed('', neisOnly)).to.deep.equal({ events: [], nextCursor: '4' });
    await expectEnvelope(await t.request('/v1/changes'), 401, 'UNAUTHORIZED', 'Missing API key');
  });

  it('refuses malformed parameters with 400 naming them, and a cursor past the retention with 410', async () => {
    await expectEnvelope(
      await get('/v1/changes?limit=0', all),
      400,
      'BAD_REQUEST',
      "Invalid parameter 'limit': must be an integer from 1 to 1000",
    );
    await expectEnvelope(await get('/v1/changes?limit=abc', all), 400, 'BAD_REQUEST', "Invalid parameter 'limit'");
    await expectEnvelope(await get('/v1/changes?after=abc', all), 400, 'BAD_REQUEST', 'after: must be a cursor the feed gave');
    await expectEnvelope(
      await get('/v1/changes?after=99', all),
      400,
      'BAD_REQUEST',
      'after: cursor 99 names no event yet (the newest is 4).',
    );

    // 31 days on, a change commits and prunes the old events.
    const later = new Date(now.getTime() + 31 * 24 * 3600 * 1000);
    await new SchoolWriter(t.db, CLI_ACTOR, { timeZone: 'Asia/Seoul', now: () => later }).updateClub(20, { name: 'Chess Club' });
    await expectEnvelope(
      await get('/v1/changes?after=1', all),
      410,
      'GONE',
      'after: cursor 1 is older than the 30 days of events the feed keeps',
    );
    const fresh = await feed('');
    expect(fresh.events.map((e) => [e.id, e.type, e.time])).to.deep.equal([['5', 'club.updated', later.toISOString()]]);
    expect((await feed('?after=4')).events).to.deep.equal(fresh.events);
  });

  it('is in the OpenAPI document with its parameters, scopes and 410', async () => {
    const doc = await expectOpenApi(t);
    const op = doc.paths['/v1/changes']?.get;
    expect(op?.security).to.deep.equal([{ apiKey: ['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ', 'NEIS_READ'] }]);
    expect(op?.parameters.map((p) => p.name)).to.deep.equal(['after', 'limit', 'If-None-Match']);
    expect(Object.keys(op?.responses ?? {})).to.include('410');
    expect(doc.paths['/v1/students']?.get?.responses).not.to.have.property('410');
  });
});

interface OpenApiOperation {
  security: unknown;
  parameters: { name: string }[];
  responses: Record<string, unknown>;
}

async function expectOpenApi(t: TestApp): Promise<{ paths: Record<string, { get?: OpenApiOperation }> }> {
  const res = await t.request('/v1/openapi.json');
  expect(res.status).to.equal(200);
  return (await res.json()) as { paths: Record<string, { get?: OpenApiOperation }> };
}
