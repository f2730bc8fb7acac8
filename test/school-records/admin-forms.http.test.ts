import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { signInToConsole, type ConsoleSession } from '../helpers/oauth.js';
import { AccountService } from '../../src/oauth/accounts.js';

/**
 * The admin console's create and update forms of students, clubs and projects, over HTTP: each
 * takes the one path (src/surfaces/admin/ui.ts, saveRecord): a value the form cannot take and a
 * value the data layer refuses are both the form again (422) with the error under its input and
 * nothing written; a create goes to the new record's page with its flash; an update to the
 * record's page, saying whether it changed anything.
 */

interface Kind {
  readonly path: 'students' | 'clubs' | 'projects';
  /** A record the form creates. */
  readonly fields: Readonly<Record<string, string>>;
  /** A field that is no integer, and the input that shows it. */
  readonly notInteger: readonly [string, string];
  /** A value the data layer refuses, and the input that shows the refusal. */
  readonly refused: readonly [string, string, string];
  /** A change, and the stored field it changes (with its value). */
  readonly change: readonly [string, string, string, unknown];
  readonly created: string;
}

const KINDS: readonly Kind[] = [
  {
    path: 'students',
    fields: {
      name: '새별',
      email: 'star@gsm.hs.kr',
      sex: 'WOMAN',
      grade: '1',
      classNum: '2',
      number: '17',
      major: '',
      role: 'GENERAL_STUDENT',
      dormitoryRoom: '',
      majorClubId: '',
      autonomousClubId: '',
      specialty: '',
      githubId: '',
    },
    notInteger: ['dormitoryRoom', 'dormitoryRoom'],
    refused: ['email', 'not-an-email', 'email'],
    change: ['specialty', 'robots', 'specialty', 'robots'],
    created: '학생을 추가했습니다.',
  },
  {
    path: 'clubs',
    fields: { name: 'Rocket Lab', type: 'MAJOR_CLUB', status: 'ACTIVE', leader: '', members: '', foundedYear: '2026' },
    notInteger: ['foundedYear', 'foundedYear'],
    refused: ['name', 'x'.repeat(31), 'name'],
    change: ['foundedYear', '2025', 'foundedYear', 2025],
    created: '동아리를 추가했습니다.',
  },
  {
    path: 'projects',
    fields: { name: 'Rover', description: 'a small rover', clubId: '', participants: '', startYear: '2026', status: 'ACTIVE', endYear: '' },
    notInteger: ['startYear', 'startYear'],
    refused: ['name', '', 'name'],
    change: ['description', 'a bigger rover', 'description', 'a bigger rover'],
    created: '프로젝트를 추가했습니다.',
  },
];

const flashOf = (html: string) => /<p class="flash (?:ok|error)" role="(?:status|alert)">([^<]*)<\/p>/.exec(html)?.[1] ?? '';
const errorAt = (html: string, input: string) =>
  new RegExp(`<p class="field-error" id="f-${input}-error">([^<]+)</p>`).exec(html)?.[1] ?? '';

describe('school records: the admin forms of students, clubs and projects (create, update)', function () {
  this.timeout(120000);
  let t: TestApp;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let admin: ConsoleSession;

  before(async () => {
    db = await createTestDatabase('admin_forms');
    t = await buildTestApp('admin_forms', { db });
    const boss = { email: 'admin@school.test', password: 'the admin of the school' };
    await new AccountService(t.db).create({ ...boss, role: 'ADMIN' });
    admin = await signInToConsole(t, boss, '/admin/students');
  });
  after(async () => {
    await t?.close();
    await db?.drop();
  });

  /** The stored records of a kind (the collection itself: the three models have no common type). */
  const records = (kind: Kind) =>
    t.db.connection.collection<{ _id: number; [field: string]: unknown }>(t.db.models[kind.path].collection.collectionName);
  const count = (kind: Kind) => records(kind).countDocuments();
  const stored = (kind: Kind, id: number) => records(kind).findOne({ _id: id });

  for (const kind of KINDS) {
    it(`${kind.path}: a refused create is the form again (422) with the error at its input; a create goes to the record`, async () => {
      const before = await count(kind);
      const [field, input] = kind.notInteger;
      const notInteger = await admin.post(`/admin/${kind.path}`, { ...kind.fields, [field]: 'soon' });
      expect(notInteger.res.status).to.equal(422);
      expect(errorAt(notInteger.html, input)).to.include('soon');
      const [refusedField, refusedValue, refusedInput] = kind.refused;
      const refused = await admin.post(`/admin/${kind.path}`, { ...kind.fields, [refusedField]: refusedValue });
      expect(refused.res.status).to.equal(422);
      expect(errorAt(refused.html, refusedInput)).to.not.equal('');
      expect(await count(kind)).to.equal(before);

      const created = await admin.post(`/admin/${kind.path}`, kind.fields);
      expect(created.res.status).to.equal(303);
      const location = created.res.headers.get('location') ?? '';
      expect(location).to.match(new RegExp(`^/admin/${kind.path}/\\d+$`));
      expect(await stored(kind, Number(location.split('/').pop()))).to.include({ name: kind.fields['name'] });
      expect(flashOf((await admin.get(location)).html)).to.equal(kind.created);
    });

    it(`${kind.path}: an update says whether it changed anything; a refused one writes nothing`, async () => {
      const record = await records(kind).findOne({ name: kind.fields['name'] });
      const path = `/admin/${kind.path}/${record?._id}`;
      const same = await admin.post(path, kind.fields);
      expect([same.res.status, same.res.headers.get('location')]).to.deep.equal([303, path]);
      expect(flashOf((await admin.get(path)).html)).to.equal('바뀐 것이 없습니다.');

      const [field, value, storedField, storedValue] = kind.change;
      const changed = await admin.post(path, { ...kind.fields, [field]: value });
      expect([changed.res.status, changed.res.headers.get('location')]).to.deep.equal([303, path]);
      expect(flashOf((await admin.get(path)).html)).to.equal('저장했습니다.');
      const after = await stored(kind, Number(record?._id));
      expect(after?.[storedField]).to.deep.equal(storedValue);

      const [refusedField, refusedValue, refusedInput] = kind.refused;
      const refused = await admin.post(path, { ...kind.fields, [field]: value, [refusedField]: refusedValue });
      expect(refused.res.status).to.equal(422);
      expect(errorAt(refused.html, refusedInput)).to.not.equal('');
      expect(await stored(kind, Number(record?._id))).to.deep.equal(after);
    });
  }

  it("students: a taken seat (the data layer's studentNumber) shows under the number input", async () => {
    const [students] = KINDS;
    const taken = await admin.post('/admin/students', { ...students?.fields, name: '둘째', email: 'second@gsm.hs.kr' });
    expect(taken.res.status).to.equal(422);
    expect(errorAt(taken.html, 'number')).to.include('1217');
    expect(await t.db.models.students.countDocuments({ email: 'second@gsm.hs.kr' })).to.equal(0);
  });
});
