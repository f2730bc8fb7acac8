import { expect } from 'chai';
import { generate } from 'otplib';
import { AccountService } from '../../src/oauth/accounts.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { buildStudent, insertSchool } from '../helpers/factories.js';
import { signInToConsole, type ConsoleSession } from '../helpers/oauth.js';

/**
 * Staff privilege needs the second factor on every surface (src/auth/policy.ts): an account a
 * ROOT promotes to ADMIN holds nothing of it on its password alone, not at /admin, not through the
 * keys it makes in the developer console, until it enrols a factor, which asks for the password
 * again. A TEACHER's keys likewise get STUDENT_READ at once only with a factor (TEACHER_KEYS_MFA).
 */

const PASSWORD = 'a promoted pass phrase';

/** The key shown once on the page a key's creation leads to. */
function shownKey(html: string): string {
  const key = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/.exec(html)?.[0];
  if (!key) throw new Error('no key shown');
  return key;
}

describe('accounts and sign-in: staff privilege needs the second factor on every surface (ADMIN_MFA=required, TEACHER_KEYS_MFA=true)', function () {
  this.timeout(60000);
  let t: TestApp;
  const students = (key: string) => t.request('/v1/students?size=1', { headers: { 'X-API-KEY': key } });

  before(async () => {
    t = await buildTestApp('staff_second_factor', { env: { ADMIN_MFA: 'required', TEACHER_KEYS_MFA: 'true' } });
    await insertSchool(t.db, { students: [buildStudent({ _id: 1, email: 'first@school.test' })] });
  });
  after(() => t.close());

  /** Creates a key with every scope in the developer console; the purpose is given, as STUDENT_READ may wait for approval. */
  async function keyFrom(session: ConsoleSession): Promise<{ key: string; page: string }> {
    const created = await session.post('/console/keys', {
      label: 'all four',
      scopes: ['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ', 'NEIS_READ'],
      purpose: 'a dashboard of the school',
    });
    expect(created.res.status).to.equal(303);
    const { html } = await session.get(created.res.headers.get('location') ?? '');
    return { key: shownKey(html), page: html };
  }

  it('a promoted ADMIN without a factor: /admin is closed, its console key waits for approval, enrolment asks for the password; with the factor its key reads at once', async () => {
    const email = 'promoted@school.test';
    const { id } = await new AccountService(t.db).create({ email, password: PASSWORD, role: 'USER' });
    const root = await new AccountService(t.db).create({ email: 'root@school.test', password: PASSWORD, role: 'ROOT' });
    const rootPrincipal = {
      kind: 'account' as const,
      accountId: root.id,
      email: root.email,
      role: 'ROOT' as const,
      standing: { id: root.id, role: 'ROOT' as const, disabled: false, secondFactor: true },
      staff: true,
    };
    await new AccountService(t.db).changeRole(rootPrincipal, id, 'ADMIN', { confirmed: true });

    const session = await signInToConsole(t, { email, password: PASSWORD });
    // The console tells the promoted person what to do next.
    const home = await session.get('/console');
    expect(home.html).to.include('관리자 역할은 2단계 인증이 있어야 권한을 씁니다.').and.include('href="/console/account#second-factor"');
    // The admin console is closed.
    const admin = await session.get('/admin');
    expect(admin.res.status).to.equal(403);
    expect(admin.html).to.include('관리자 콘솔을 열려면 2단계 인증이 필요합니다.');
    // A key made in the developer console waits for approval as a USER's would: no student on a password alone.
    const { key, page } = await keyFrom(session);
    expect(page).to.include('STUDENT_READ');
    await expectEnvelope(await students(key), 403, 'FORBIDDEN', /STUDENT_READ scope awaits an administrator's approval/);
    await expectOk(await t.request('/v1/clubs?size=1', { headers: { 'X-API-KEY': key } }));

    // Enrolment asks for the password again: the open session alone is not enough.
    const csrf = await session.csrf();
    const refused = await session.post('/console/account/second-factor', { mfaPassword: 'not the password' }, csrf);
    expect(refused.res.status).to.equal(422);
    expect(await t.db.models.accountMfa.countDocuments({ _id: id })).to.equal(0);
    const started = await session.post('/console/account/second-factor', { mfaPassword: PASSWORD }, csrf);
    expect(started.res.status).to.equal(200);
    const secret = /secret=([A-Z2-7]+)/.exec(started.html)?.[1] ?? '';
    const confirmed = await session.post('/console/account/second-factor/confirm', { code: await generate({ secret }) }, csrf);
    expect(confirmed.res.status).to.equal(200);

    // With the factor enrolled the same key reads students at once (the change is heard by the key cache).
    await expectOk(await students(key));
    // The sign-in that made this session used no factor: /admin asks for the sign-in again, with it.
    const again = await session.get('/admin');
    expect(again.res.status).to.equal(303);
    expect(again.res.headers.get('location')).to.equal('/web/signin?next=%2Fadmin&reauth=login');
  });

  it('a TEACHER without a factor: STUDENT_READ waits for approval; with one it is granted at once', async () => {
    const email = 'teacher@school.test';
    const { id } = await new AccountService(t.db).create({ email, password: PASSWORD, role: 'TEACHER' });
    const session = await signInToConsole(t, { email, password: PASSWORD });
    const { key } = await keyFrom(session);
    await expectEnvelope(await students(key), 403, 'FORBIDDEN', /STUDENT_READ scope awaits an administrator's approval/);
    const csrf = await session.csrf();
    const started = await session.post('/console/account/second-factor', { mfaPassword: PASSWORD }, csrf);
    const secret = /secret=([A-Z2-7]+)/.exec(started.html)?.[1] ?? '';
    expect((await session.post('/console/account/second-factor/confirm', { code: await generate({ secret }) }, csrf)).res.status).to.equal(
      200,
    );
    expect(await t.db.models.accountMfa.countDocuments({ _id: id, active: true })).to.equal(1);
    await expectOk(await students(key));
  });
});
