import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectOAuthError } from '../helpers/expect.js';
import { buildStudent, insertSchool } from '../helpers/factories.js';
import { authorize, createAccount, createClient, postJson, REDIRECT_URI } from '../helpers/oauth.js';
import { codeOf, TestMailServer } from '../helpers/smtp.js';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { AccountService } from '../../src/oauth/accounts.js';
import { CODE_LIMITS, WRONG_CHECKS_PER_CODE } from '../../src/oauth/email-codes.js';

/**
 * Sign-up and password reset over their JSON endpoints (docs/accounts.md), with mail sent
 * through nodemailer to a real SMTP server started here: codes (8 digits, 5 minutes, replaced
 * by a new request), the per-email limits, the domain and password rules, the same answer for
 * unknown emails on reset, and that no code or password reaches the log.
 */

const DOMAIN = 'gsm.hs.kr';
const PASSWORD = 'a quiet river at dawn';
let serial = 0;
/** A fresh school address per test: the per-email budgets of one test never touch another's. */
function newEmail(name = 'user'): string {
  serial += 1;
  return `${name}${serial}@${DOMAIN}`;
}

function put(t: TestApp, path: string, body: unknown): Promise<Response> {
  return t.request(path, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('accounts and sign-in: self-service sign-up and password reset (JSON endpoints, real SMTP)', function () {
  this.timeout(60000);
  let t: TestApp;
  let mail: TestMailServer;
  let offsetMs = 0;
  /** Every code and password the tests used, to look for in the log at the end. */
  const secrets = new Set<string>();

  before(async () => {
    mail = await TestMailServer.start();
    t = await buildTestApp('self_service', { env: { SMTP_URL: mail.url }, now: () => new Date(Date.now() + offsetMs) });
    await insertSchool(t.db, { students: [buildStudent({ _id: 11, email: `student11@${DOMAIN}`, name: '이서연' })] });
  });
  after(async () => {
    await t?.close();
    await mail?.close();
  });
  beforeEach(() => {
    offsetMs = 0;
  });

  /** Asks for a sign-up code and returns it as the mail delivered it. */
  async function signUpCode(email: string): Promise<string> {
    const before = mail.mails.length;
    const res = await postJson(t, '/v1/accounts/email-verifications', { email });
    expect(res.status, await res.clone().text()).to.equal(202);
    const code = await mail.nextCode(email, before);
    secrets.add(code);
    return code;
  }

  async function resetCode(email: string): Promise<string> {
    const before = mail.mails.length;
    const res = await postJson(t, '/v1/accounts/password-resets', { email });
    expect(res.status).to.equal(202);
    const code = await mail.nextCode(email, before);
    secrets.add(code);
    return code;
  }

  function signUp(body: Record<string, unknown>): Promise<Response> {
    if (typeof body['password'] === 'string') secrets.add(body['password']);
    return postJson(t, '/v1/accounts', body);
  }

  describe('sign-up', () => {
    it('mails an 8-digit code (Korean first, then English); the code creates the account, linked to the student', async () => {
      const email = `student11@${DOMAIN}`;
      const res = await postJson(t, '/v1/accounts/email-verifications', { email: 'Student11@GSM.hs.kr ' });
      expect(res.status).to.equal(202);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(await res.json()).to.deep.equal({ email, expiresInSeconds: 300 });
      const received = await mail.waitFor(email);
      expect(received.subject).to.equal('[캠퍼스 데이터 서비스 (Campus Data Service)] 이메일 인증 코드 / Email verification code');
      expect(received.from).to.equal(`no-reply@${DOMAIN}`);
      const code = codeOf(received) ?? '';
      expect(code).to.match(/^\d{8}$/);
      expect(received.subject).not.to.include(code);
      expect(received.text.indexOf('인증 코드')).to.be.lessThan(received.text.indexOf('verification code'));
      expect(received.text).to.include('5분').and.include('5 minutes');
      secrets.add(code);

      const created = await signUp({ email, password: PASSWORD, code });
      expect(created.status).to.equal(201);
      const body = (await created.json()) as Record<string, unknown>;
      expect(body).to.deep.include({ email, role: 'USER', isStudent: true, approval: null });
      expect(body['id']).to.be.a('number');
      expect(await new AccountService(t.db).verifyLogin(email, PASSWORD)).to.have.property('email', email);
      // The code is used up.
      await expectOAuthError(await signUp({ email, password: PASSWORD, code }), 400, 'invalid_code');
    });

    it('is open to the school domain only (SCHOOL_EMAIL_DOMAIN); no mail goes elsewhere', async () => {
      const before = mail.mails.length;
      const body = await expectOAuthError(
        await postJson(t, '/v1/accounts/email-verifications', { email: 'someone@gmail.com' }),
        400,
        'email_domain_not_allowed',
      );
      expect(body.error_description).to.equal('sign-up is open to @gsm.hs.kr addresses only');
      await expectOAuthError(
        await postJson(t, '/v1/accounts/email-verifications', { email: `x@evil${DOMAIN}` }),
        400,
        'email_domain_not_allowed',
      );
      await expectOAuthError(await postJson(t, '/v1/accounts/email-verifications', { email: 'not an email' }), 400, 'invalid_email');
      await expectOAuthError(await signUp({ email: 'a@gmail.com', password: PASSWORD, code: '12345678' }), 400, 'email_domain_not_allowed');
      expect(mail.mails.length).to.equal(before);
    });

    it('a code lives 5 minutes', async () => {
      const email = newEmail();
      const code = await signUpCode(email);
      offsetMs = 5 * 60 * 1000 + 1;
      await expectOAuthError(await signUp({ email, password: PASSWORD, code }), 400, 'invalid_code', 'expired');
      const fresh = await signUpCode(email);
      offsetMs = 5 * 60 * 1000 - 2000;
      expect((await signUp({ email, password: PASSWORD, code: fresh })).status).to.equal(201);
    });

    it('a new request replaces the old code', async () => {
      const email = newEmail();
      const first = await signUpCode(email);
      const second = await signUpCode(email);
      expect(second).not.to.equal(first);
      await expectOAuthError(await signUp({ email, password: PASSWORD, code: first }), 400, 'invalid_code');
      expect((await signUp({ email, password: PASSWORD, code: second })).status).to.equal(201);
    });

    it(`at most ${CODE_LIMITS.requests.points} code requests per 10 minutes per email and address: then 429 with Retry-After`, async () => {
      const email = newEmail();
      for (let i = 0; i < CODE_LIMITS.requests.points; i++) {
        expect((await postJson(t, '/v1/accounts/email-verifications', { email })).status).to.equal(202);
      }
      const res = await postJson(t, '/v1/accounts/email-verifications', { email });
      const body = await expectOAuthError(res, 429, 'too_many_requests', 'too many codes were requested for this email from this address');
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).to.be.within(590, 600);
      expect(body.error_description).to.include(`retry after ${retryAfter} seconds`);
      // Reset codes share the email's budget; another email has its own.
      await expectOAuthError(await postJson(t, '/v1/accounts/password-resets', { email }), 429, 'too_many_requests');
      expect((await postJson(t, '/v1/accounts/email-verifications', { email: newEmail() })).status).to.equal(202);
    });

    it(`a code dies after ${WRONG_CHECKS_PER_CODE} wrong checks: then even the right one fails`, async () => {
      const email = newEmail();
      const code = await signUpCode(email);
      const wrong = code === '00000000' ? '11111111' : '00000000';
      for (let i = 0; i < WRONG_CHECKS_PER_CODE; i++) {
        await expectOAuthError(await signUp({ email, password: PASSWORD, code: wrong }), 400, 'invalid_code');
      }
      await expectOAuthError(await signUp({ email, password: PASSWORD, code }), 400, 'invalid_code');
      expect(await t.db.models.emailCodes.countDocuments({ email })).to.equal(0);
      // Four wrong checks leave it alive (another email: these checks would pass this one's budget).
      const second = newEmail();
      const next = await signUpCode(second);
      const other = next === '00000000' ? '11111111' : '00000000';
      for (let i = 0; i < WRONG_CHECKS_PER_CODE - 1; i++) {
        await expectOAuthError(await signUp({ email: second, password: PASSWORD, code: other }), 400, 'invalid_code');
      }
      expect((await signUp({ email: second, password: PASSWORD, code: next })).status).to.equal(201);
    });

    it(`at most ${CODE_LIMITS.checks.points} code checks per 5 minutes per email and address: then 429, even for the right code`, async () => {
      const email = newEmail();
      let code = '';
      for (let i = 0; i < CODE_LIMITS.checks.points; i++) {
        // A fresh code before each would-be fatal check, so the budget, not the code's death, refuses.
        if (i % (WRONG_CHECKS_PER_CODE - 1) === 0) code = await signUpCode(email);
        const wrong = code === '00000000' ? '11111111' : '00000000';
        await expectOAuthError(await signUp({ email, password: PASSWORD, code: wrong }), 400, 'invalid_code');
      }
      const res = await signUp({ email, password: PASSWORD, code });
      await expectOAuthError(res, 429, 'too_many_requests', 'too many codes were tried for this email from this address');
      expect(Number(res.headers.get('retry-after'))).to.be.within(290, 300);
    });

    it('password rules: 8 to 100 characters, not a common password, not containing the local part; a refused password spends nothing', async () => {
      const email = newEmail('haneul');
      const code = await signUpCode(email);
      const refusals: [string, string, string][] = [
        ['short12', 'password_too_short', 'at least 8 characters'],
        ['x'.repeat(101), 'password_too_long', 'at most 100 characters'],
        ['qwerty123', 'password_too_common', 'common'],
        ['Password1234', 'password_too_common', 'common'],
        [`my-${'HANEUL'}${serial}-garden`, 'password_contains_email', 'local part'],
      ];
      // More refusals than the check budget: none of them touched the code or spent a check.
      for (let round = 0; round < 3; round++) {
        for (const [password, error, words] of refusals) {
          await expectOAuthError(await signUp({ email, password, code }), 400, error, words);
        }
      }
      expect(CODE_LIMITS.checks.points).to.be.lessThan(refusals.length * 3);
      expect((await signUp({ email, password: 'y'.repeat(100), code })).status).to.equal(201);
    });

    it('a teacher signs up with name and department and waits for approval (role USER until an admin decides)', async () => {
      const email = newEmail('teacher');
      const code = await signUpCode(email);
      await expectOAuthError(
        await signUp({ email, password: PASSWORD, code, teacher: { name: '', department: '과학과' } }),
        400,
        'invalid_teacher',
        "'teacher.name'",
      );
      const res = await signUp({ email, password: PASSWORD, code, teacher: { name: '박선생', department: '소프트웨어개발과' } });
      expect(res.status).to.equal(201);
      expect(await res.json()).to.deep.include({ email, role: 'USER', isStudent: false, approval: 'PENDING' });
      const stored = await t.db.models.accounts.findOne({ email }).lean();
      expect(stored).to.deep.include({ name: '박선생', department: '소프트웨어개발과', approval: 'PENDING' });
    });

    it('an email that has an account gets a mail saying so (no code); the answer is the same', async () => {
      const email = newEmail();
      await createAccount(t.db, email, PASSWORD);
      const before = mail.mails.length;
      const res = await postJson(t, '/v1/accounts/email-verifications', { email });
      expect(res.status).to.equal(202);
      expect(await res.json()).to.deep.equal({ email, expiresInSeconds: 300 });
      const received = await mail.waitFor(email, (m) => mail.mails.indexOf(m) >= before);
      expect(received.subject).to.include('이미 가입된 주소입니다');
      expect(received.text).to.include(`${t.url}/account/password-reset`);
      expect(codeOf(received)).to.equal(undefined);
      await expectOAuthError(await signUp({ email, password: PASSWORD, code: '12345678' }), 400, 'invalid_code');
    });

    it('bad requests name the problem: missing field, not JSON, not an object, wrong method; CORS for other front ends', async () => {
      await expectOAuthError(
        await postJson(t, '/v1/accounts', { email: newEmail(), code: '12345678' }),
        400,
        'invalid_request',
        "missing required parameter 'password'",
      );
      const form = await t.request('/v1/accounts/email-verifications', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'email=a%40gsm.hs.kr',
      });
      await expectOAuthError(form, 415, 'invalid_request', 'Content-Type: application/json');
      const broken = await t.request('/v1/accounts', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"email":',
      });
      await expectOAuthError(broken, 400, 'invalid_request', 'not valid JSON');
      await expectOAuthError(await postJson(t, '/v1/accounts', ['x']), 400, 'invalid_request', 'JSON object');
      const get = await t.request('/v1/accounts/password');
      await expectOAuthError(get, 405, 'invalid_request', 'use PUT');
      expect(get.headers.get('allow')).to.equal('PUT, OPTIONS');
      const preflight = await t.request('/v1/accounts', {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
      });
      expect(preflight.status).to.equal(204);
      expect(preflight.headers.get('access-control-allow-origin')).to.equal('*');
      expect(preflight.headers.get('access-control-allow-methods')).to.equal('POST, OPTIONS');
    });
  });

  describe('password reset', () => {
    it('answers the same whether or not the email has an account; only an account gets a mail', async () => {
      const known = newEmail();
      await createAccount(t.db, known, PASSWORD);
      const unknown = newEmail();
      const before = mail.mails.length;
      const a = await postJson(t, '/v1/accounts/password-resets', { email: known });
      const b = await postJson(t, '/v1/accounts/password-resets', { email: unknown });
      const shape = async (res: Response) => {
        const headers = Object.fromEntries([...res.headers].filter(([name]) => !['date', 'x-request-id', 'content-length'].includes(name)));
        const body = (await res.json()) as { email: string };
        return { status: res.status, headers, body: { ...body, email: body.email.replace(/\d+@/, 'N@') } };
      };
      expect(await shape(a)).to.deep.equal(await shape(b));
      await mail.waitFor(known, (m) => mail.mails.indexOf(m) >= before);
      await new Promise((r) => setTimeout(r, 300));
      expect(mail.mailsTo(unknown)).to.deep.equal([]);
      // Emails of another domain (accounts made with `campus accounts`) can reset too.
      expect((await postJson(t, '/v1/accounts/password-resets', { email: 'teacher@school.test' })).status).to.equal(202);
    });

    it('sets the new password, ends every session and revokes every refresh token; the old password stops', async () => {
      const email = newEmail();
      await createAccount(t.db, email, PASSWORD);
      const client = await createClient(t.db, { name: 'Reset test app' });
      const { code, verifier } = await authorize(
        t,
        { client_id: client.client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'r' },
        { email, password: PASSWORD },
      );
      const tokens = (await (
        await postJson(t, '/v1/oauth/token', {
          grant_type: 'authorization_code',
          code,
          client_id: client.client.id,
          client_secret: client.secret,
          redirect_uri: REDIRECT_URI,
          code_verifier: verifier,
        })
      ).json()) as { access_token: string; refresh_token: string };
      expect((await t.request('/userinfo', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).to.equal(200);

      const resetWith = await resetCode(email);
      // A refused new password spends nothing.
      await expectOAuthError(
        await put(t, '/v1/accounts/password', { email, code: resetWith, newPassword: '12345678' }),
        400,
        'password_too_common',
      );
      const newPassword = 'another long river';
      secrets.add(newPassword);
      const res = await put(t, '/v1/accounts/password', { email, code: resetWith, newPassword });
      expect(res.status).to.equal(204);
      expect(await res.text()).to.equal('');

      const accounts = new AccountService(t.db);
      expect(await accounts.verifyLogin(email, PASSWORD)).to.equal(null);
      expect(await accounts.verifyLogin(email, newPassword)).to.have.property('email', email);
      await expectOAuthError(
        await postJson(t, '/v1/oauth/token', {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: client.client.id,
          client_secret: client.secret,
        }),
        400,
        'invalid_grant',
      );
      expect((await t.request('/userinfo', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).to.equal(401);
      const accountId = String((await t.db.models.accounts.findOne({ email }).lean())?._id);
      expect(await t.db.models.oauthRecords.countDocuments({ accountId })).to.equal(0);
      await expectOAuthError(await put(t, '/v1/accounts/password', { email, code: resetWith, newPassword }), 400, 'invalid_code');
    });

    it('a code for an email without an account never works', async () => {
      const email = newEmail();
      await postJson(t, '/v1/accounts/password-resets', { email });
      for (const code of ['00000000', '12345678']) {
        await expectOAuthError(
          await put(t, '/v1/accounts/password', { email, code, newPassword: 'a fine new password' }),
          400,
          'invalid_code',
        );
      }
    });
  });

  describe('mail failures and the development outbox', () => {
    it('sign-up answers 503 temporarily_unavailable with Retry-After when the SMTP server cannot be reached', async () => {
      const down = await buildTestApp('self_service_down', { env: { SMTP_URL: `smtp://127.0.0.1:${await freePort()}` } });
      try {
        const res = await postJson(down, '/v1/accounts/email-verifications', { email: newEmail() });
        await expectOAuthError(res, 503, 'temporarily_unavailable', 'mail server');
        expect(res.headers.get('retry-after')).to.equal('60');
      } finally {
        await down.close();
      }
    });

    it('without SMTP_URL each mail goes to the log with its code masked, and to /dev/outbox for loopback callers only', async () => {
      const dev = await buildTestApp('self_service_outbox');
      try {
        const email = newEmail();
        expect((await postJson(dev, '/v1/accounts/email-verifications', { email })).status).to.equal(202);
        const page = await dev.request('/dev/outbox');
        expect(page.status).to.equal(200);
        const html = await page.text();
        const code = /^\s+(\d{8})\s*$/m.exec(html)?.[1] ?? '';
        expect(code).to.match(/^\d{8}$/);
        expect(html).to.include(email);
        const line = dev.logs.find((l) => l['event'] === 'mail.outbox');
        expect(line).to.deep.include({
          to: email,
          subject: '[캠퍼스 데이터 서비스 (Campus Data Service)] 이메일 인증 코드 / Email verification code',
        });
        expect(String(line?.['text'])).to.include('········');
        expect(dev.logText()).not.to.include(code);
        expect((await postJson(dev, '/v1/accounts', { email, password: PASSWORD, code })).status).to.equal(201);
        // Through a proxy (even one on this machine) the page is not there.
        expect((await dev.request('/dev/outbox', { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).to.equal(404);
      } finally {
        await dev.close();
      }
    });
  });
  describe('the log (after every test above)', () => {
    it('no code or password appears in any log line', () => {
      expect(secrets.size).to.be.greaterThan(10);
      const log = t.logText();
      for (const secret of secrets) expect(log, `the log holds ${secret}`).not.to.include(secret);
      expect(log).to.include('"event":"mail.sent"');
    });
  });
});
