import { expect } from 'chai';
import { AccountStore } from '../../src/data/accounts/store.js';
import { ApiKeyService } from '../../src/data/keys/store.js';
import type { ApiScope, AccountRole } from '../../src/data/__generated__/enums.js';
import { undoBatch } from '../../src/data/school/audit.js';
import { applyImport } from '../../src/data/school/import.js';
import { SchoolWriter } from '../../src/data/school/writes.js';
import { CLI_ACTOR, type Actor } from '../../src/data/school/types.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { buildClub, buildProject, buildStudent, insertSchool, issueKey } from '../helpers/factories.js';

/**
 * GET /v1/changes over HTTP (src/data/events/feed.ts): the data API's envelope, keys,
 * validation and rate limit; events in commit order whose before/after are exactly what the REST
 * lists show; exact resume from a cursor; filtering by the key's scopes; 410 past the retention;
 * the same feed in GraphQL and in the OpenAPI document.
 */

interface Event {
  id: string;
  type: string;
  time: string;
  actor: { kind: string; accountId: number | null };
  batchId: string | null;
  data: { before: Record<string, unknown> | null; after: Record<string, unknown> | null };
}
interface Feed {
  events: Event[];
  nextCursor: string;
}

describe('events and webhooks: GET /v1/changes', function () {
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

    // NEIS_READ alone (the feed's neis.*.updated events are for it) sees none of the school's events.
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
    // A key or a machine token (client_credentials) with any of the scopes.
    const scopes = ['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ', 'NEIS_READ'];
    expect(op?.security).to.deep.equal([{ apiKey: scopes }, { machineToken: scopes }]);
    expect(op?.parameters.map((p) => p.name)).to.deep.equal(['after', 'limit', 'If-None-Match']);
    expect(Object.keys(op?.responses ?? {})).to.include('410');
    expect(doc.paths['/v1/students']?.get?.responses).not.to.have.property('410');
  });
});

describe('events and webhooks: GET /v1/changes shows each event as its subscriber may see it', function () {
  this.timeout(120000);
  let t: TestApp;
  /** Keys: an operator's (no owner) and an account's with every scope; an account's with CLUB_READ, with STUDENT_READ. */
  const keys = { operator: '', owned: '', clubs: '', students: '' };
  const now = new Date('2026-03-02T09:00:00+09:00');
  const ADMIN: Actor = { kind: 'ACCOUNT', accountId: 7, email: 'admin@school.test' };
  const feed = async (key: string) =>
    (
      await expectOk<{ events: (Omit<Event, 'data'> & { data: unknown })[] }>(
        await t.request('/v1/changes', { headers: { 'X-API-KEY': key } }),
      )
    ).events;
  const completed = async (key: string) => (await feed(key)).filter((e) => e.type === 'batch.completed');

  /** An account of `role` holding one key with `scopes`. */
  async function ownedKey(email: string, role: AccountRole, scopes: ApiScope[]): Promise<string> {
    const account = await new AccountStore(t.db).create({ email, passwordHash: 'x', role });
    return (await new ApiKeyService(t.db, t.config.policy).issue({ scopes, ownerAccountId: account._id })).key;
  }

  before(async () => {
    t = await buildTestApp('changes_subscribers', { surfaces: ['data'] });
    await insertSchool(t.db, {
      students: [buildStudent({ _id: 1, name: '홍건우', email: 'gunwoo@gsm.hs.kr', grade: 2, classNum: 3, number: 4, majorClubId: 10 })],
      clubs: [buildClub({ _id: 10, name: 'Robotics', type: 'MAJOR_CLUB' })],
    });
    keys.operator = await issueKey(t.db);
    keys.owned = await ownedKey('teacher.all@school.test', 'TEACHER', ['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ', 'NEIS_READ']);
    keys.clubs = await ownedKey('club.app@school.test', 'USER', ['CLUB_READ']);
    keys.students = await ownedKey('teacher.students@school.test', 'TEACHER', ['STUDENT_READ']);
    // An administrator's change, then its undo (its summary names the student); then an import (its file's name).
    const changed = await new SchoolWriter(t.db, ADMIN, { timeZone: 'Asia/Seoul', now: () => now }).updateStudent(1, {
      dormitoryRoom: 318,
    });
    expect((await undoBatch(t.db, ADMIN, changed.batchId ?? '', now)).issues).to.deep.equal([]);
    const csv = Buffer.from('학생명,학번,이메일,성별,학과,소속\r\n새학생,1101,new.student@gsm.hs.kr,여자,SW개발과,일반학생\r\n');
    const imported = await applyImport(t.db, CLI_ACTOR, 'STUDENT', '3반-비밀명단.csv', csv, {
      timeZone: 'Asia/Seoul',
      now,
      removeMissing: false,
    });
    expect(imported.issues).to.deep.equal([]);
  });
  after(async () => {
    await t.close();
  });

  it('gives a CLUB_READ key the batch.completed events with counts only: no student name, no file name', async () => {
    const shown = await completed(keys.clubs);
    expect(shown.map((e) => e.data)).to.deep.equal([
      { kind: 'UNDO', summary: null, records: 1, counts: { created: 0, updated: 1, deleted: 0 } },
      { kind: 'IMPORT', summary: null, records: 1, counts: { created: 1, updated: 0, deleted: 0 } },
    ]);
    expect(shown.every((e) => typeof e.batchId === 'string')).to.equal(true);
    const text = JSON.stringify(shown);
    for (const secret of ['홍건우', '새학생', '비밀명단', '.csv']) expect(text).not.to.include(secret);
    // A STUDENT_READ key reads the summaries whole.
    expect((await completed(keys.students)).map((e) => (e.data as { summary: string }).summary)).to.deep.equal([
      'undo of UPDATE student #1 홍건우',
      'import 3반-비밀명단.csv: 1 created, 0 updated, 0 removed, 0 unchanged',
    ]);
    // GraphQL presents them the same way.
    const graphql = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-KEY': keys.clubs },
      body: JSON.stringify({ query: '{ changes { events { type data } } }' }),
    });
    const body = (await graphql.json()) as { data: { changes: { events: { type: string; data: unknown }[] } } };
    expect(body.data.changes.events.filter((e) => e.type === 'batch.completed').map((e) => e.data)).to.deep.equal(shown.map((e) => e.data));
  });

  it("shows the actor's account id to an operator's key only, the field null for an account's key (cached apart)", async () => {
    const actors = async (key: string) => (await feed(key)).map((e) => [e.type, e.actor.kind, e.actor.accountId]);
    const byOperator = await actors(keys.operator);
    expect(byOperator.filter(([, kind]) => kind === 'ACCOUNT').length).to.be.greaterThan(2);
    expect(byOperator.filter(([, kind]) => kind === 'ACCOUNT').every(([, , id]) => id === 7)).to.equal(true);
    // The same scopes, an account's key: the same events, no account id (not the operator's cached answer).
    const byAccount = await actors(keys.owned);
    expect(byAccount).to.deep.equal(byOperator.map(([type, kind]) => [type, kind, null]));
    expect(await actors(keys.operator)).to.deep.equal(byOperator);
    for (const key of [keys.clubs, keys.students]) expect((await actors(key)).every(([, , id]) => id === null)).to.equal(true);
    const graphql = async (key: string) =>
      (await (
        await t.request('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'X-API-KEY': key },
          body: JSON.stringify({ query: '{ changes(limit: 1) { events { actor { kind accountId } } } }' }),
        })
      ).json()) as unknown;
    expect(await graphql(keys.owned)).to.deep.equal({ data: { changes: { events: [{ actor: { kind: 'ACCOUNT', accountId: null } }] } } });
    expect(await graphql(keys.operator)).to.deep.equal({ data: { changes: { events: [{ actor: { kind: 'ACCOUNT', accountId: 7 } }] } } });
  });

  it('the OpenAPI document describes actor.accountId as nullable, for operators only', async () => {
    const res = await t.request('/v1/openapi.json');
    const text = await res.text();
    const doc = JSON.parse(text) as {
      paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: unknown }> }> } }>;
    };
    const schema = doc.paths['/v1/changes']?.get.responses['200']?.content['application/json']?.schema as {
      properties: { data: { properties: { events: { items: { properties: { actor: { properties: { accountId: unknown } } } } } } } };
    };
    expect(schema.properties.data.properties.events.items.properties.actor.properties.accountId).to.deep.equal({
      type: ['integer', 'null'],
      format: 'int64',
      description:
        "The administrator's account id, shown only to operator keys (keys without an owner account); null otherwise, and for CLI.",
    });
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
