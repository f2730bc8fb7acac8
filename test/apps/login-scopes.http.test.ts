import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'chai';
import type { UserinfoFields } from '../../clients/typescript/src/index.js';
import { AccountStore } from '../../src/data/accounts/store.js';
import { API_SCOPES } from '../../src/data/keys/store.js';
import { hashPassword } from '../../src/oauth/secrets.js';
import { LOGIN_SCOPES, OAUTH_SCOPES, STUDENT_RECORD_REF, USERINFO_FIELDS, type UserinfoKey } from '../../src/oauth/login-scopes.js';
import type { UserinfoResponse } from '../../src/oauth/userinfo.js';
import { buildOpenApiDocument } from '../../src/rest/openapi.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildClub, buildProject, buildStudent, insertSchool } from '../helpers/factories.js';
import { authorize, createAccount, createClient, postJson, REDIRECT_URI } from '../helpers/oauth.js';

/**
 * Fine-grained login scopes: userinfo returns exactly the fields its token's scopes
 * release, for each scope and combination; self:read is what it was (plus `teacher`); the consent
 * page names every field userinfo returns.
 */

const STUDENT = { email: 'minji@school.test', password: 'login scopes student' };
const TEACHER = { email: 'kim.teacher@school.test', password: 'login scopes teacher' };
/** An account with no student or teacher record: the school has no name for it. */
const NAMELESS = { email: 'nameless@school.test', password: 'login scopes nameless' };

/** What each scope releases, written out here (not read from the table it tests). */
const RELEASES: Record<string, string[]> = {
  'account:read': ['id', 'email', 'role', 'isStudent'],
  'student:read': ['student', 'teacher'],
  'club:read': ['clubs'],
  'project:read': ['projects'],
  'self:read': ['id', 'email', 'role', 'isStudent', 'student', 'teacher'],
  profile: ['name', 'preferred_username'],
  email: ['email', 'email_verified'],
  openid: [],
};
const ORDER = [
  'sub',
  'id',
  'email',
  'role',
  'isStudent',
  'student',
  'teacher',
  'clubs',
  'projects',
  'email_verified',
  'name',
  'preferred_username',
];

function expectedKeys(scopes: string[]): string[] {
  const released = new Set(['sub', ...scopes.flatMap((s) => RELEASES[s] ?? [])]);
  return ORDER.filter((k) => released.has(k));
}

/** The keys the consent page must name for an answer: `key`, or `key.inner` for a record or a list of records. */
function fieldKeys(answer: Record<string, unknown>): string[] {
  const keys: string[] = [];
  for (const [key, value] of Object.entries(answer)) {
    const record = Array.isArray(value) ? (value[0] as unknown) : value;
    if (record && typeof record === 'object') keys.push(...Object.keys(record).map((inner) => `${key}.${inner}`));
    // A record the person does not have (a student's `teacher`) is null: its fields are named all the same.
    else if (value === null) keys.push(`${key}.`);
    else if (!Array.isArray(value)) keys.push(key);
  }
  return keys;
}

// ajv-formats is CommonJS whose default export is the plugin; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** The value at a path of keys in a JSON document; throws when there is none. */
function at(value: unknown, path: readonly string[]): object {
  let node = value;
  for (const key of path) node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  if (typeof node !== 'object' || node === null) throw new Error(`nothing at ${path.join('/')}`);
  return node;
}

/**
 * The userinfo answer as the table's JSON Schemas describe it (what the client's type is generated
 * from), with the student record's schema from the OpenAPI document, where GET /v1/students has it.
 */
function userinfoValidator(): ValidateFunction {
  const students = ['paths', '/v1/students', 'get', 'responses', '200', 'content', 'application/json', 'schema'];
  const student = at(buildOpenApiDocument(), [...students, 'properties', 'data', 'properties', 'students', 'items']);
  expect(STUDENT_RECORD_REF).to.equal('#/$defs/Student');
  const schema = {
    type: 'object',
    properties: USERINFO_FIELDS,
    required: ['sub'],
    additionalProperties: false,
    $defs: { Student: student },
  };
  return addFormats(new Ajv2020({ strict: true, allErrors: true })).compile(schema);
}

// The generated client type follows the table: the same keys, and the server's answer fits it (`npm
// run typecheck` fails when clients/typescript/src/__generated__/userinfo.ts is stale).
const sameKeys: [keyof UserinfoFields] extends [UserinfoKey] ? ([UserinfoKey] extends [keyof UserinfoFields] ? true : false) : false = true;
const answerFitsClient: UserinfoResponse extends UserinfoFields ? true : false = true;

describe('OAuth apps: login scopes, userinfo releases exactly what the consent page lists', () => {
  let t: TestApp;
  let client: { id: string; secret: string };
  const matchesTable = userinfoValidator();

  before(async () => {
    t = await buildTestApp('login_scopes');
    await insertSchool(t.db, {
      students: [buildStudent({ _id: 7, email: STUDENT.email, name: '박민지', majorClubId: 3, autonomousClubId: 4, dormitoryRoom: 301 })],
      clubs: [buildClub({ _id: 3, name: 'Byte Forge', type: 'MAJOR_CLUB' }), buildClub({ _id: 4, name: 'Band', type: 'AUTONOMOUS_CLUB' })],
      projects: [
        buildProject({ _id: 9, name: 'Smart Farm', participantIds: [7] }),
        buildProject({ _id: 10, name: 'Other', participantIds: [] }),
      ],
    });
    await createAccount(t.db, STUDENT.email, STUDENT.password);
    await createAccount(t.db, NAMELESS.email, NAMELESS.password);
    await new AccountStore(t.db).create({
      email: TEACHER.email,
      passwordHash: await hashPassword(TEACHER.password),
      role: 'TEACHER',
      name: '김선생',
      department: '소프트웨어과',
    });
    // An operator's app (the school's own), not first-party: the consent page is shown every first time.
    const c = await createClient(t.db, { scopes: [...OAUTH_SCOPES] });
    client = { id: c.client.id, secret: c.secret ?? '' };
  });
  after(() => t.close());

  async function login(user: { email: string; password: string }, scope: string) {
    const result = await authorize(t, { client_id: client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's', scope }, user);
    expect(result.code, result.location.href).to.be.a('string');
    const res = await postJson(t, '/v1/oauth/token', {
      grant_type: 'authorization_code',
      code: result.code,
      client_id: client.id,
      client_secret: client.secret,
      redirect_uri: REDIRECT_URI,
      code_verifier: result.verifier,
    });
    expect(res.status).to.equal(200);
    const tokens = (await res.json()) as { access_token: string; scope: string };
    const consent = result.pages.find((p) => p.includes('name="decision"')) ?? '';
    return { tokens, consent };
  }

  async function userinfo(token: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await t.request('/userinfo', { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  const fine = ['account:read', 'student:read', 'club:read', 'project:read'];
  const combinations: string[][] = [];
  for (let mask = 1; mask < 1 << fine.length; mask++) combinations.push(fine.filter((_s, i) => mask & (1 << i)));
  combinations.push(
    ['self:read'],
    ['self:read', 'club:read', 'project:read'],
    ['openid', 'account:read'],
    ['self:read', 'openid'],
    ['openid', 'profile', 'email'],
    ['openid', 'profile'],
    ['email'],
    ['account:read', 'email', 'profile'],
  );

  for (const scopes of combinations) {
    it(`${scopes.join(' ')}: exactly its fields, each named on the consent page`, async () => {
      // A fresh account each time, so the consent page asks for every scope.
      const email = `s${scopes.join('-').replace(/[^a-z-]/g, '')}@school.test`;
      await createAccount(t.db, email, 'a long enough password');
      await t.db.models.students.updateOne({ _id: 7 }, { $set: { email } });
      await t.db.versions.bump('data');
      try {
        const { tokens, consent } = await login({ email, password: 'a long enough password' }, scopes.join(' '));
        // The access token holds the userinfo scopes; openid is the ID token's.
        expect(tokens.scope.split(' ').sort()).to.deep.equal(scopes.filter((s) => s !== 'openid').sort());
        const { status, body } = await userinfo(tokens.access_token);
        expect(status).to.equal(200);
        expect(Object.keys(body)).to.deep.equal(expectedKeys(scopes));
        expect(matchesTable(body) ? [] : matchesTable.errors).to.deep.equal([]);
        for (const key of fieldKeys(body)) {
          expect(consent, `consent names ${key}`).to.include(key.endsWith('.') ? `data-field="${key}` : `data-field="${key}"`);
        }
        for (const scope of scopes) expect(consent).to.include(`<code>${scope}</code>`);
        expect(consent).to.include('학교가 운영하는 앱입니다.');
      } finally {
        await t.db.models.students.updateOne({ _id: 7 }, { $set: { email: STUDENT.email } });
        await t.db.versions.bump('data');
      }
    });
  }

  it('the records: clubs and projects are the person’s own; a teacher gets the teacher record under student:read and self:read', async () => {
    const { tokens } = await login(STUDENT, 'club:read project:read student:read');
    const { body } = await userinfo(tokens.access_token);
    expect(body['clubs']).to.deep.equal([
      { id: 3, name: 'Byte Forge', type: 'MAJOR_CLUB' },
      { id: 4, name: 'Band', type: 'AUTONOMOUS_CLUB' },
    ]);
    expect(body['projects']).to.deep.equal([{ id: 9, name: 'Smart Farm', status: 'ACTIVE' }]);
    expect(body['teacher']).to.equal(null);
    expect((body['student'] as Record<string, unknown>)['dormitoryRoom']).to.equal(301);

    expect(matchesTable(body) ? [] : matchesTable.errors).to.deep.equal([]);

    for (const scope of ['student:read', 'self:read']) {
      const teacher = await userinfo((await login(TEACHER, scope)).tokens.access_token);
      expect(teacher.body['teacher'], scope).to.deep.equal({ name: '김선생', department: '소프트웨어과' });
      expect(teacher.body['student'], scope).to.equal(null);
      expect(matchesTable(teacher.body) ? [] : matchesTable.errors, scope).to.deep.equal([]);
    }
    const account = await userinfo((await login(TEACHER, 'account:read')).tokens.access_token);
    expect(account.body).to.include({ role: 'TEACHER', isStudent: false, email: TEACHER.email });
    expect(matchesTable(account.body) ? [] : matchesTable.errors).to.deep.equal([]);
  });

  it("the client's generated Userinfo type has the table's keys, and the server's answer type fits it (checked when type-checking)", () => {
    expect({ sameKeys, answerFitsClient }).to.deep.equal({ sameKeys: true, answerFitsClient: true });
  });

  it('openid alone releases no data: 403 insufficient_scope', async () => {
    const { tokens } = await login(STUDENT, 'openid');
    expect((await userinfo(tokens.access_token)).status).to.equal(403);
  });

  it('one table: discovery, the consent page words and the console form all come from it', async () => {
    const discovery = (await (await t.request('/.well-known/openid-configuration')).json()) as { scopes_supported: string[] };
    // The login scopes come first; the data scopes of machine tokens follow them.
    const login = discovery.scopes_supported.slice(0, LOGIN_SCOPES.length);
    expect(discovery.scopes_supported).to.deep.equal([...LOGIN_SCOPES.map((s) => s.name), ...API_SCOPES]);
    expect(login).to.deep.equal(['account:read', 'student:read', 'club:read', 'project:read', 'self:read', 'profile', 'email', 'openid']);
    const claims = (await (await t.request('/.well-known/openid-configuration')).json()) as { claims_supported: string[] };
    expect(claims.claims_supported).to.include.members(['sub', 'name', 'preferred_username', 'email', 'email_verified']);
  });

  it('openid profile email: the ID token carries the standard claims (name, preferred_username, email, email_verified), as libraries expect', async () => {
    const { tokens } = await login(STUDENT, 'openid profile email');
    const idToken = (tokens as { id_token?: string }).id_token ?? '';
    const claims = JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(claims).to.include({ name: '박민지', preferred_username: 'minji', email: STUDENT.email, email_verified: true });
    const { body } = await userinfo(tokens.access_token);
    expect(body).to.deep.equal({
      sub: claims['sub'],
      email: STUDENT.email,
      email_verified: true,
      name: '박민지',
      preferred_username: 'minji',
    });
    // Without profile and email the ID token names only who signed in.
    const plain = (await login(STUDENT, 'openid account:read')).tokens as { id_token?: string };
    const only = JSON.parse(Buffer.from((plain.id_token ?? '').split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
    expect(only).to.not.have.any.keys('name', 'email', 'email_verified', 'preferred_username');
    // A teacher's name is their own; an account the school has no name for has none (left out of the ID token, null in userinfo).
    const teacher = (await login(TEACHER, 'openid profile')).tokens as { id_token?: string; access_token: string };
    expect(JSON.parse(Buffer.from((teacher.id_token ?? '').split('.')[1] ?? '', 'base64url').toString('utf8'))).to.include({
      name: '김선생',
      preferred_username: 'kim.teacher',
    });
    const nameless = (await login(NAMELESS, 'openid profile')).tokens as { id_token?: string; access_token: string };
    const namelessClaims = JSON.parse(Buffer.from((nameless.id_token ?? '').split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
    expect(namelessClaims).to.include({ preferred_username: 'nameless' });
    expect(namelessClaims).to.not.have.property('name');
    expect((await userinfo(nameless.access_token)).body).to.include({ name: null, preferred_username: 'nameless' });
  });
});
