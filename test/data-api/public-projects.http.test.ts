import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { buildClub, buildProject, buildStudent, insertSchool } from '../helpers/factories.js';
import { SchoolWriter } from '../../src/data/school/writes.js';
import { CLI_ACTOR } from '../../src/data/school/types.js';

/**
 * GET /v1/public/projects and /v1/public/projects/{id} without a key: exactly the
 * public fields (no person), paging, ETag and 304, and a rate limit per client address (told
 * apart through the trusted proxy 127.0.0.1 and X-Forwarded-For).
 */

const PUBLIC_FIELDS = ['id', 'name', 'description', 'clubName', 'startYear', 'endYear', 'status', 'participantCount'];

const students = [
  buildStudent({ _id: 1, name: 'Kim One', email: 'one@school.test', grade: 2, classNum: 3, number: 4, majorClubId: 10 }),
  buildStudent({ _id: 2, name: 'Lee Two', email: 'two@school.test', grade: 1, classNum: 1, number: 1 }),
];
const clubs = [buildClub({ _id: 10, name: 'Robotics', type: 'MAJOR_CLUB', leaderId: 1 })];
const projects = [
  buildProject({ _id: 1, name: 'Smart Farm', description: 'Sensors', clubId: 10, participantIds: [2, 1], startYear: 2025 }),
  buildProject({ _id: 2, name: 'Campus Map', description: 'A map', clubId: null, participantIds: [] }),
  buildProject({
    _id: 3,
    name: 'Zeta Game',
    description: 'A game',
    clubId: 10,
    participantIds: [1],
    startYear: 2023,
    endYear: 2024,
    status: 'ENDED',
  }),
];

interface PublicPage {
  totalPages: number;
  totalElements: number;
  projects: Record<string, unknown>[];
}

describe('data API: GET /v1/public/projects (no key)', () => {
  let t: TestApp;
  const from = (address: string, headers: Record<string, string> = {}) => ({ headers: { 'x-forwarded-for': address, ...headers } });

  before(async () => {
    t = await buildTestApp('public_projects', { surfaces: ['data'], env: { TRUSTED_PROXIES: '127.0.0.1', PUBLIC_RATE_LIMIT: '5/60' } });
    await insertSchool(t.db, { students, clubs, projects });
  });
  after(() => t.close());

  it('lists every project with exactly the public fields, no person, without a key', async () => {
    const res = await t.request('/v1/public/projects', from('10.0.0.1'));
    const body = (await res.clone().json()) as Record<string, unknown>;
    expect(Object.keys(body)).to.deep.equal(['status', 'code', 'message', 'data']);
    const page = await expectOk<PublicPage>(res);
    expect(Object.keys(page)).to.deep.equal(['totalPages', 'totalElements', 'projects']);
    for (const project of page.projects) expect(Object.keys(project)).to.deep.equal(PUBLIC_FIELDS);
    expect(page).to.deep.equal({
      totalPages: 1,
      totalElements: 3,
      projects: [
        {
          id: 1,
          name: 'Smart Farm',
          description: 'Sensors',
          clubName: 'Robotics',
          startYear: 2025,
          endYear: null,
          status: 'ACTIVE',
          participantCount: 2,
        },
        {
          id: 2,
          name: 'Campus Map',
          description: 'A map',
          clubName: null,
          startYear: null,
          endYear: null,
          status: 'ACTIVE',
          participantCount: 0,
        },
        {
          id: 3,
          name: 'Zeta Game',
          description: 'A game',
          clubName: 'Robotics',
          startYear: 2023,
          endYear: 2024,
          status: 'ENDED',
          participantCount: 1,
        },
      ],
    });
    // Nothing of a person anywhere in the answer.
    const text = JSON.stringify(body);
    for (const personal of ['Kim One', 'Lee Two', 'one@school.test', 'two@school.test', 'participants', 'email', 'leader'])
      expect(text).to.not.include(personal);
  });

  it('pages like the other lists, and refuses bad paging with a 400 naming the parameter', async () => {
    const page = await expectOk<PublicPage>(await t.request('/v1/public/projects?page=1&size=2', from('10.0.0.2')));
    expect(page.totalPages).to.equal(2);
    expect(page.totalElements).to.equal(3);
    expect(page.projects.map((p) => p['id'])).to.deep.equal([3]);
    await expectEnvelope(await t.request('/v1/public/projects?size=0', from('10.0.0.2')), 400, 'BAD_REQUEST', "Invalid parameter 'size'");
  });

  it('answers one project by id with the same fields, 404 for an unknown id, 400 for a malformed one', async () => {
    const one = await expectOk<Record<string, unknown>>(await t.request('/v1/public/projects/1', from('10.0.0.3')));
    expect(Object.keys(one)).to.deep.equal(PUBLIC_FIELDS);
    expect(one['participantCount']).to.equal(2);
    await expectEnvelope(await t.request('/v1/public/projects/99', from('10.0.0.3')), 404, 'NOT_FOUND', 'No project has this id.');
    await expectEnvelope(await t.request('/v1/public/projects/abc', from('10.0.0.3')), 400, 'BAD_REQUEST', "Invalid parameter 'id'");
    const post = await t.request('/v1/public/projects/1', { method: 'POST', ...from('10.0.0.3') });
    expect(post.status).to.equal(405);
    expect(post.headers.get('allow')).to.equal('HEAD, GET');
  });

  it('carries an ETag, answers 304 to If-None-Match without spending the limit, and a change moves the ETag', async () => {
    const first = await t.request('/v1/public/projects', from('10.0.0.4'));
    const etag = first.headers.get('etag') ?? '';
    expect(etag).to.match(/^"[^"]+"$/);
    expect(first.headers.get('cache-control')).to.equal('private, no-cache');
    expect(first.headers.get('ratelimit-policy')).to.equal('"default";q=5;w=60');
    expect(first.headers.get('x-ratelimit-remaining')).to.equal('4');
    for (let i = 0; i < 6; i += 1) {
      const again = await t.request('/v1/public/projects', from('10.0.0.4', { 'If-None-Match': etag }));
      expect(again.status).to.equal(304);
      expect(again.headers.get('etag')).to.equal(etag);
    }
    // Six 304s later the address still has its four requests.
    const after = await t.request('/v1/public/projects?size=100', from('10.0.0.4'));
    expect(after.headers.get('x-ratelimit-remaining')).to.equal('3');
    const result = await new SchoolWriter(t.db, CLI_ACTOR).updateProject(2, { description: 'A new map' });
    expect(result.issues).to.deep.equal([]);
    const changed = await t.request('/v1/public/projects', from('10.0.0.4', { 'If-None-Match': etag }));
    expect(changed.status).to.equal(200);
    expect(changed.headers.get('etag')).to.not.equal(etag);
  });

  it('limits each client address on its own: the sixth request is 429 with Retry-After, another address is served', async () => {
    for (let i = 0; i < 5; i += 1) expect((await t.request('/v1/public/projects/2', from('10.0.0.9'))).status).to.equal(200);
    const refused = await t.request('/v1/public/projects', from('10.0.0.9'));
    await expectEnvelope(refused.clone(), 429, 'TOO_MANY_REQUESTS');
    expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
    expect(refused.headers.get('x-ratelimit-remaining')).to.equal('0');
    expect((await t.request('/v1/public/projects', from('10.0.0.10'))).status).to.equal(200);
  });

  it('is in the OpenAPI document without a key, with its path parameter and its 404', async () => {
    const doc = (await (await t.request('/v1/openapi.json')).json()) as {
      paths: Record<
        string,
        { get: { security: unknown[]; parameters: { name: string; in: string; required: boolean }[]; responses: Record<string, unknown> } }
      >;
    };
    const list = doc.paths['/v1/public/projects']?.get;
    const one = doc.paths['/v1/public/projects/{id}']?.get;
    expect(list?.security).to.deep.equal([]);
    expect(list?.parameters.map((p) => p.name)).to.deep.equal(['page', 'size', 'If-None-Match']);
    expect(Object.keys(list?.responses ?? {})).to.not.include.members(['401', '403']);
    expect(one?.parameters[0]).to.include({ name: 'id', in: 'path', required: true });
    expect(Object.keys(one?.responses ?? {})).to.include('404');
  });
});
