import { isStaffRole } from '../../src/auth/policy.js';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import type { AccountRole } from '../../src/data/__generated__/enums.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { createContext } from '../../src/graphql/context.js';
import { buildSchema } from '../../src/graphql/schema.js';
import { createGraphQLServer, type GraphQLServer } from '../../src/graphql/server.js';
import { createLogger } from '../../src/logger.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { issueKey } from '../helpers/factories.js';
import { documentFor, rootFieldNames } from '../helpers/graphql.js';
import { createAccount, signInToConsole } from '../helpers/oauth.js';

/**
 * Who may change school data (schema/school-admin.graphql, src/auth/principal.ts
 * assertStaff): the mutations are refused to API keys over POST /graphql and to USER accounts,
 * with FORBIDDEN and nothing written; ADMIN and ROOT accounts write, refusals name the field, and
 * the data API shows each change under a new ETag. The REST data API stays read-only.
 */

interface GraphQLBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; path?: string[]; extensions?: { code?: string } }[];
}

describe('school records: writes, who may change what', function () {
  this.timeout(120000);
  let t: TestApp;
  let key: string;
  let graphql: GraphQLServer;
  const ids: Partial<Record<AccountRole, number>> = {};
  /**
   * Every mutation of the schema, each with placeholder arguments of its types (test/helpers/graphql.ts):
   * read from the schema, so a mutation added later is tried here without editing this file.
   */
  let mutations: (readonly [string, string])[] = [];

  /** The stored school (and the audit log), to show a refusal wrote nothing. */
  const snapshot = async () => ({
    students: await t.db.models.students.find().sort({ _id: 1 }).lean(),
    clubs: await t.db.models.clubs.find().sort({ _id: 1 }).lean(),
    projects: await t.db.models.projects.find().sort({ _id: 1 }).lean(),
    audit: await t.db.models.auditBatches.countDocuments(),
  });

  const overHttp = async (query: string, apiKey: string | null): Promise<{ status: number; body: GraphQLBody }> => {
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey ? { 'X-API-KEY': apiKey } : {}) },
      body: JSON.stringify({ query }),
    });
    return { status: res.status, body: (await res.json()) as GraphQLBody };
  };

  /** Runs a document as the console does (in-process), as the signed-in account of that role. */
  const asAccount = async (role: AccountRole, query: string, variables: Record<string, unknown> = {}): Promise<GraphQLBody> => {
    const accountId = ids[role] ?? 0;
    // As the pages build it (src/surfaces/web/web.ts, identify) under ADMIN_MFA=optional: a staff role holds staff privilege.
    const standing = { id: accountId, role, disabled: false, secondFactor: false };
    const principal = {
      kind: 'account' as const,
      accountId,
      email: `${role.toLowerCase()}@gsm.hs.kr`,
      role,
      standing,
      staff: isStaffRole(role),
    };
    const contextValue = createContext({ principal, db: t.db, log: createLogger('silent'), timeZone: 'Asia/Seoul', now: () => new Date() });
    const response = await graphql.executeOperation({ query, variables }, { contextValue });
    if (response.body.kind !== 'single') throw new Error('incremental response');
    return JSON.parse(JSON.stringify(response.body.singleResult)) as GraphQLBody;
  };

  const rest = async (path: string): Promise<{ data: Record<string, unknown[]>; etag: string }> => {
    const res = await t.request(path, { headers: { 'X-API-KEY': key } });
    expect(res.status, path).to.equal(200);
    return { data: ((await res.json()) as { data: Record<string, unknown[]> }).data, etag: res.headers.get('etag') ?? '' };
  };

  before(async () => {
    const schema = buildSchema();
    mutations = rootFieldNames(schema, 'Mutation').map((field) => [field, documentFor(schema, 'Mutation', field)] as const);
    // The walk is not empty: the school's writes, its imports and rollovers, the background applies, undo.
    expect(mutations.map(([field]) => field)).to.include.members([
      'createStudent',
      'deleteClub',
      'applyImport',
      'startApplyRollover',
      'undoAuditBatch',
    ]);
    t = await buildTestApp('school_admin_writes');
    await seedDemoSchool(t.db);
    key = await issueKey(t.db);
    for (const role of ['USER', 'ADMIN', 'ROOT'] as const) {
      ids[role] = await createAccount(t.db, `${role.toLowerCase()}@gsm.hs.kr`, `${role} has a long password`);
      await t.db.models.accounts.updateOne({ _id: ids[role] }, { $set: { role } });
    }
    const silent = new Writable({ write: (_chunk, _enc, done) => done() });
    graphql = await createGraphQLServer(createLogger('info', silent));
  });
  after(async () => {
    await graphql?.stop();
    await t?.close();
  });

  it('POST /graphql refuses every mutation to an API key (all scopes): FORBIDDEN, nothing written', async () => {
    const before = await snapshot();
    const etag = (await rest('/v1/students?page=0&size=1')).etag;
    for (const [field, query] of mutations) {
      const { status, body } = await overHttp(query, key);
      expect(status, field).to.equal(200);
      expect(body, field).to.deep.equal({
        data: null,
        errors: [
          {
            message: 'API keys are read-only: changes need a signed-in ADMIN or ROOT account.',
            path: [field],
            extensions: { code: 'FORBIDDEN' },
          },
        ],
      });
    }
    expect(await snapshot()).to.deep.equal(before);
    expect((await rest('/v1/students?page=0&size=1')).etag).to.equal(etag);
  });

  it('POST /graphql without a key: 401 before any mutation runs', async () => {
    // One document is enough: without a key the answer comes before the body is read (and
    // repeated failed authentications from one address are soon answered 429).
    const before = await snapshot();
    const { status, body } = await overHttp(mutations[0]?.[1] ?? '', null);
    expect(status).to.equal(401);
    expect(JSON.stringify(body)).to.include('X-API-KEY');
    expect(await snapshot()).to.deep.equal(before);
  });

  it('a USER account is refused every mutation (and the admin queries): FORBIDDEN naming the roles, nothing written', async () => {
    const before = await snapshot();
    for (const [field, query] of mutations) {
      expect(await asAccount('USER', query), field).to.deep.equal({
        data: null,
        errors: [{ message: 'This needs an account with the role ADMIN or ROOT.', path: [field], extensions: { code: 'FORBIDDEN' } }],
      });
    }
    const counts = await asAccount('USER', '{ schoolCounts { enrolled } }');
    expect(counts.errors?.[0]?.extensions?.code).to.equal('FORBIDDEN');
    expect(await snapshot()).to.deep.equal(before);
  });

  it("a USER account signed in to the console gets 403 on the admin console's school pages and forms", async () => {
    const user = await signInToConsole(t, { email: 'user@gsm.hs.kr', password: 'USER has a long password' }, '/console');
    const before = await snapshot();
    const job = '/admin/jobs/00000000-0000-4000-8000-000000000000';
    for (const path of ['/admin', '/admin/students', '/admin/students/new', '/admin/import', '/admin/school-year', '/admin/audit', job]) {
      expect((await user.get(path)).res.status, path).to.equal(403);
    }
    const created = await user.post('/admin/students', {
      name: '새',
      sex: 'MAN',
      email: 'x@gsm.hs.kr',
      grade: '2',
      classNum: '1',
      number: '17',
    });
    expect(created.res.status).to.equal(403);
    expect((await user.post('/admin/clubs', { name: 'New', type: 'MAJOR_CLUB' })).res.status).to.equal(403);
    expect(await snapshot()).to.deep.equal(before);
  });

  it('the REST data API stays read-only: writes are not routes', async () => {
    for (const [method, path] of [
      ['POST', '/v1/students'],
      ['PUT', '/v1/students/1'],
      ['PATCH', '/v1/clubs/1'],
      ['DELETE', '/v1/projects/1'],
    ] as const) {
      const res = await t.request(path, { method, headers: { 'X-API-KEY': key, 'content-type': 'application/json' }, body: '{}' });
      expect([404, 405], `${method} ${path}`).to.include(res.status);
    }
  });

  it('an ADMIN account writes: a refusal names the field and writes nothing; a change shows in the data API under a new ETag', async () => {
    const refused = await asAccount(
      'ADMIN',
      `mutation { createStudent(input: { name: "", sex: MAN, email: "bad", grade: 2, classNum: 1, number: 19 }) {
        student { id } errors { field code message(lang: KO) } batchId } }`,
    );
    expect(refused).to.deep.equal({
      data: {
        createStudent: {
          student: null,
          errors: [
            { field: 'name', code: 'REQUIRED', message: '이름: 필수 항목입니다' },
            { field: 'email', code: 'EMAIL', message: "이메일: name@school.kr 형식의 이메일 주소여야 합니다 (입력: 'bad')" },
            { field: 'number', code: 'RANGE', message: '번호: 1~18 사이의 정수여야 합니다 (입력: 19)' },
          ],
          batchId: null,
        },
      },
    });
    expect(await t.db.models.students.countDocuments({ email: 'bad' })).to.equal(0);

    const before = await rest('/v1/students?email=x%40gsm.hs.kr');
    expect(before.data['students']).to.deep.equal([]);
    const created = await asAccount(
      'ADMIN',
      'mutation { createStudent(input: { name: "새", sex: MAN, email: "x@gsm.hs.kr", grade: 2, classNum: 1, number: 17 }) { student { id studentNumber major } errors { field } batchId } }',
    );
    const payload = created.data?.['createStudent'] as {
      student: { id: number; studentNumber: number; major: string };
      errors: unknown[];
      batchId: string;
    };
    expect(payload.errors).to.deep.equal([]);
    expect(payload.student).to.include({ studentNumber: 2117, major: 'SW_DEVELOPMENT' });
    expect(payload.batchId).to.be.a('string');
    const after = await rest('/v1/students?email=x%40gsm.hs.kr');
    expect(after.data['students']).to.have.length(1);
    expect(after.etag).to.not.equal(before.etag);

    // A ROOT account writes too; the audit log names the account.
    const graduated = await asAccount(
      'ROOT',
      `mutation { graduateStudent(id: ${payload.student.id}) { student { role studentNumber } errors { field } } }`,
    );
    expect(graduated).to.deep.equal({ data: { graduateStudent: { student: { role: 'GRADUATE', studentNumber: null }, errors: [] } } });
    const later = await rest('/v1/students?email=x%40gsm.hs.kr&includeGraduates=true');
    expect(later.etag).to.not.equal(after.etag);
    expect((await rest('/v1/students?email=x%40gsm.hs.kr')).data['students']).to.deep.equal([]);
    expect((later.data['students']?.[0] as { role: string }).role).to.equal('GRADUATE');
    const batches = await t.db.models.auditBatches
      .find({ action: { $ne: 'IMPORT' } })
      .sort({ at: 1 })
      .lean();
    expect(batches.map((b) => [b.action, b.actorKind, b.actorEmail])).to.deep.equal([
      ['CREATE', 'ACCOUNT', 'admin@gsm.hs.kr'],
      ['GRADUATE', 'ACCOUNT', 'root@gsm.hs.kr'],
    ]);
  });
  it('previewImport through GraphQL: a file too large or not a spreadsheet is refused with its message; a good one applies by uploadId', async () => {
    const preview = async (fileName: string, bytes: Buffer) =>
      asAccount(
        'ADMIN',
        `mutation($input: ImportInput!) { previewImport(input: $input) {
          uploadId rows counts { created refused } issues { row column code message(lang: EN) } } }`,
        { input: { entity: 'STUDENT', fileName, contentBase64: bytes.toString('base64') } },
      );
    const big = await preview('big.csv', Buffer.alloc(5 * 1024 * 1024 + 10, 0x41));
    expect(big).to.deep.equal({
      data: {
        previewImport: {
          uploadId: null,
          rows: 0,
          counts: { created: 0, refused: 0 },
          issues: [{ row: null, column: null, code: 'TOO_LARGE', message: 'the file is too large: 5 MB (at most 5 MB)' }],
        },
      },
    });
    const png = await preview('students.xlsx', Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
    const issue = (png.data?.['previewImport'] as { issues: { code: string; message: string }[] }).issues;
    expect(issue.map((i) => i.code)).to.deep.equal(['NOT_SPREADSHEET']);

    const good = await preview('s.csv', Buffer.from('학생명,학번,이메일,성별\r\n새봄,2118,spring@gsm.hs.kr,여자\r\n'));
    const result = good.data?.['previewImport'] as { uploadId: string; counts: { created: number }; issues: unknown[] };
    expect(result.issues).to.deep.equal([]);
    expect(result.counts.created).to.equal(1);
    expect(await t.db.models.students.countDocuments({ email: 'spring@gsm.hs.kr' })).to.equal(0);
    const applied = await asAccount('ADMIN', `mutation { applyImport(uploadId: "${result.uploadId}") { applied issues { code } } }`);
    expect(applied).to.deep.equal({ data: { applyImport: { applied: true, issues: [] } } });
    expect(await t.db.models.students.countDocuments({ email: 'spring@gsm.hs.kr' })).to.equal(1);
  });

  it('background applies: the console starts a job and follows it; an unknown upload is 422, an unknown or foreign job 404', async () => {
    const bytes = Buffer.from('학생명,학번,이메일,성별,소속\r\n김가을,2418,autumn@gsm.hs.kr,여자,일반학생');
    const preview = await asAccount(
      'ADMIN',
      'mutation($input: ImportInput!) { previewImport(input: $input) { uploadId issues { code } } }',
      { input: { entity: 'STUDENT', fileName: 'autumn.csv', contentBase64: bytes.toString('base64'), removeMissing: false } },
    );
    const uploadId = (preview.data?.['previewImport'] as { uploadId: string }).uploadId;
    expect(preview.data?.['previewImport'], JSON.stringify(preview)).to.deep.include({ issues: [] });
    const admin = await signInToConsole(t, { email: 'admin@gsm.hs.kr', password: 'ADMIN has a long password' }, '/admin');

    const gone = await admin.post('/admin/import/apply', { uploadId: 'no-such-upload' });
    expect(gone.res.status).to.equal(422);
    expect(gone.html).to.include('미리 본 파일이 더 이상 보관되어 있지 않습니다');

    const started = await admin.post('/admin/import/apply', { uploadId });
    expect(started.res.status).to.equal(303);
    const jobPath = started.res.headers.get('location') ?? '';
    expect(jobPath).to.match(/^\/admin\/jobs\/[0-9a-f-]{36}$/);
    // The job page answers at once: running (200, reloading itself), or done (303 to its changes).
    const location = await (async () => {
      for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
        const shown = await admin.get(jobPath);
        if (shown.res.status === 303) return shown.res.headers.get('location') ?? '';
        expect(shown.res.status).to.equal(200);
        expect(shown.res.headers.get('refresh')).to.equal('1');
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('the job did not finish within 20 s');
    })();
    expect(location).to.match(/^\/admin\/audit\?batchId=[0-9a-f-]{36}$/);
    expect(await t.db.models.students.countDocuments({ email: 'autumn@gsm.hs.kr' })).to.equal(1);

    expect((await admin.get('/admin/jobs/00000000-0000-4000-8000-000000000000')).res.status).to.equal(404);
    expect((await admin.get('/admin/jobs/not-a-job')).res.status).to.equal(404);
    // Another account's job is not shown to it.
    const root = await signInToConsole(t, { email: 'root@gsm.hs.kr', password: 'ROOT has a long password' }, '/admin');
    expect((await root.get(jobPath)).res.status).to.equal(404);
  });
});
