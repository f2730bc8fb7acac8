import { expect } from 'chai';
import { Writable } from 'node:stream';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { expectOAuthError } from '../helpers/expect.js';
import { runFlood } from '../helpers/flood.js';
import { postJson } from '../helpers/oauth.js';
import { TestMailServer } from '../helpers/smtp.js';
import { loadConfig } from '../../src/config/index.js';
import type { Database } from '../../src/data/database.js';
import { createLogger } from '../../src/logger.js';
import { CODE_LIMITS, EmailCodes } from '../../src/oauth/email-codes.js';
import { HashGate } from '../../src/oauth/hash-gate.js';
import { createMailer } from '../../src/oauth/mail.js';
import { ACCOUNT_PATHS } from '../../src/oauth/constants.js';
import { SelfService, SelfServiceError } from '../../src/oauth/self-service.js';
import { REFUSAL_PACE } from '../../src/surfaces/accounts/api.js';

/**
 * The self-service endpoints cost nothing until they must. Budgets per email
 * and client address, per address and for everyone, the email-wide spacing of mails, codes that
 * die of wrong checks, `+` sub-addresses, and a wrong code that never reaches argon2. Client
 * addresses are told apart through the trusted proxy (127.0.0.1) and X-Forwarded-For.
 */

const DOMAIN = 'gsm.hs.kr';
const PASSWORD = 'a quiet river at dawn';
let serial = 0;
function newEmail(name = 'abuse'): string {
  serial += 1;
  return `${name}${serial}@${DOMAIN}`;
}

describe('accounts and sign-in: self-service abuse resistance (budgets by email and address, real SMTP)', function () {
  this.timeout(120000);
  let t: TestApp;
  let mail: TestMailServer;

  before(async () => {
    mail = await TestMailServer.start();
    t = await buildTestApp('self_service_abuse', { env: { SMTP_URL: mail.url, TRUSTED_PROXIES: '127.0.0.1' } });
  });
  after(async () => {
    await t?.close();
    await mail?.close();
  });

  const from = (address: string) => ({ 'x-forwarded-for': address });
  const requestCode = (email: string, address: string) => postJson(t, '/v1/accounts/email-verifications', { email }, from(address));

  it('200 code requests for 200 emails from one address within a minute are partly refused; another address is not', async () => {
    const address = '203.0.113.1';
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) {
      const res = await requestCode(newEmail('flood'), address);
      statuses.push(res.status);
      if (res.status === 429) {
        await expectOAuthError(res, 429, 'too_many_requests', 'too many codes were requested from this address');
        expect(Number(res.headers.get('retry-after'))).to.be.within(1, 600);
      }
    }
    expect(statuses.filter((s) => s === 202)).to.have.length(CODE_LIMITS.addressRequests.points);
    expect(statuses.filter((s) => s === 429)).to.have.length(200 - CODE_LIMITS.addressRequests.points);
    expect((await requestCode(newEmail(), '203.0.113.2')).status).to.equal(202);
  });

  it('a spent address is refused before its body is read, most answers at once: only past its pace are they held (REFUSAL_PACE)', async () => {
    // 203.0.113.1 spent its code requests in the test above. (Which answers past the pace are held
    // is test/accounts/refusal-pace.unit.test.ts: this load generator does not outrun the pace.)
    const flood = await runFlood({
      url: `${t.url}${ACCOUNT_PATHS.emailVerifications}`,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...from('203.0.113.1') },
      body: JSON.stringify({ email: newEmail('paced') }),
      connections: 16,
      durationMs: 1500,
      maxRequests: 20_000,
    });
    expect(flood.failedToConnect).to.equal(0);
    expect(flood.sent).to.be.greaterThan(100);
    for (const outcome of flood.outcomes) {
      expect(outcome.status).to.equal(429);
      expect(outcome.message).to.include('too many codes were requested from this address');
      expect(Number(outcome.retryAfter)).to.be.within(1, CODE_LIMITS.addressRequests.durationSeconds);
    }
    // The rule before it held every refusal of a spent address 100 ms.
    expect(flood.p50Ms).to.be.below(REFUSAL_PACE.pauseMs);
  });

  it('40 sign-ups from one address in 10 minutes succeed (8 at a time)', async () => {
    const address = '203.0.113.3';
    const emails = Array.from({ length: 40 }, () => newEmail('class'));
    const statuses: number[] = [];
    for (let start = 0; start < emails.length; start += 8) {
      await Promise.all(
        emails.slice(start, start + 8).map(async (email) => {
          const before = mail.mails.length;
          expect((await requestCode(email, address)).status).to.equal(202);
          const code = await mail.nextCode(email, before);
          const res = await postJson(t, '/v1/accounts', { email, password: PASSWORD, code }, from(address));
          statuses.push(res.status);
        }),
      );
    }
    expect(statuses).to.deep.equal(Array(40).fill(201));
  });

  it("a stranger spending an email's budget from their address does not block its owner at another", async () => {
    const email = newEmail('owner');
    const stranger = '198.51.100.9';
    for (let i = 0; i < CODE_LIMITS.requests.points; i++) expect((await requestCode(email, stranger)).status).to.equal(202);
    await expectOAuthError(await requestCode(email, stranger), 429, 'too_many_requests', 'for this email from this address');
    // Wrong guesses from the stranger spend the stranger's checks, not the owner's.
    for (let i = 0; i < CODE_LIMITS.checks.points; i++) {
      const res = await postJson(t, '/v1/accounts', { email, password: PASSWORD, code: '00000001' }, from(stranger));
      expect(res.status).to.be.oneOf([400]);
    }
    await expectOAuthError(
      await postJson(t, '/v1/accounts', { email, password: PASSWORD, code: '00000001' }, from(stranger)),
      429,
      'too_many_requests',
    );
    const owner = '198.51.100.10';
    const before = mail.mails.length;
    expect((await requestCode(email, owner)).status).to.equal(202);
    const code = await mail.nextCode(email, before);
    expect((await postJson(t, '/v1/accounts', { email, password: PASSWORD, code }, from(owner))).status).to.equal(201);
  });

  it('an email gets its first mails of the day at once, then one per 30 minutes, whoever asks: the owner is slowed, not shut out', async () => {
    const email = newEmail('mailbox');
    for (let i = 0; i < CODE_LIMITS.emailMails.points; i++) expect((await requestCode(email, `192.0.2.${i + 1}`)).status).to.equal(202);
    // The next one still goes out (spaced); the one after it waits, from any address.
    expect((await requestCode(email, '192.0.2.50')).status).to.equal(202);
    const res = await requestCode(email, '192.0.2.51');
    await expectOAuthError(res, 429, 'too_many_requests', 'many codes were mailed to this email today');
    expect(Number(res.headers.get('retry-after'))).to.be.within(
      CODE_LIMITS.emailSpacing.durationSeconds - 60,
      CODE_LIMITS.emailSpacing.durationSeconds,
    );
    expect(mail.mailsTo(email)).to.have.length(CODE_LIMITS.emailMails.points + 1);
  });

  it("sign-up refuses '+' sub-addresses (SIGNUP_ALLOW_SUBADDRESSES=false by default); no mail goes out", async () => {
    const before = mail.mails.length;
    const res = await requestCode(`hong1+t@${DOMAIN}`, '203.0.113.4');
    await expectOAuthError(res, 400, 'email_subaddress_not_allowed', "without a '+' part");
    await expectOAuthError(
      await postJson(t, '/v1/accounts', { email: `hong1+t@${DOMAIN}`, password: PASSWORD, code: '12345678' }, from('203.0.113.4')),
      400,
      'email_subaddress_not_allowed',
    );
    expect(mail.mails.length).to.equal(before);
    const open = await buildTestApp('self_service_plus', { env: { SMTP_URL: mail.url, SIGNUP_ALLOW_SUBADDRESSES: 'true' } });
    try {
      expect((await postJson(open, '/v1/accounts/email-verifications', { email: `hong2+t@${DOMAIN}` })).status).to.equal(202);
    } finally {
      await open.close();
    }
  });
});

describe('accounts and sign-in: in self-service a wrong code never reaches argon2, and hashing sheds load (503)', function () {
  this.timeout(60000);
  let db: Database & { drop(): Promise<void> };
  let codes: EmailCodes;
  const email = `gate@${DOMAIN}`;

  before(async () => {
    db = await createTestDatabase('self_service_gate');
  });
  after(() => db?.drop());

  /** The real SelfService with a hashing gate of our choosing. */
  function service(gate: HashGate): SelfService {
    const config = loadConfig({ NODE_ENV: 'test' });
    const logger = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }));
    codes = new EmailCodes(db, ['k'.repeat(32)], () => new Date());
    return new SelfService({ db, config, logger, mailer: createMailer(config, logger), codes, hashGate: gate });
  }

  it('with no hashing slot at all, wrong codes are answered invalid_code; the right one is 503 with Retry-After and stays unspent', async () => {
    const closed = service(new HashGate({ concurrency: 0, queue: 0, maxWaitMs: 0 }));
    const { code } = await codes.issue('signup', email, '203.0.113.7');
    const wrong = code === '00000000' ? '11111111' : '00000000';
    for (let i = 0; i < 3; i++) {
      const err = await closed.signUp({ email, password: PASSWORD, code: wrong }, '203.0.113.7').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(SelfServiceError).and.have.property('problem', 'invalid_code');
    }
    const busy = await closed.signUp({ email, password: PASSWORD, code }, '203.0.113.7').catch((e: unknown) => e);
    expect(busy).to.be.instanceOf(SelfServiceError).and.include({ problem: 'temporarily_unavailable', status: 503 });
    expect((busy as SelfServiceError).headers).to.deep.equal({ 'Retry-After': '1' });
    // The code was not spent: with a slot, the same code creates the account.
    const open = service(new HashGate({ concurrency: 1, queue: 0, maxWaitMs: 0 }));
    const created = await open.signUp({ email, password: PASSWORD, code }, '203.0.113.7');
    expect(created.email).to.equal(email);
  });

  it('the gate runs at most its concurrency at once, lets a bounded queue wait, and refuses the rest at once', async () => {
    const gate = new HashGate({ concurrency: 1, queue: 2, maxWaitMs: 5000 });
    let release: () => void = () => undefined;
    const blocker = gate.run(() => new Promise<void>((done) => (release = done)));
    const waiting = [gate.run(async () => 'a'), gate.run(async () => 'b')];
    const refused = await gate.run(async () => 'c').catch((e: unknown) => e);
    expect(refused).to.be.an('error').with.property('retryAfterSeconds', 1);
    expect(gate.active).to.equal(1);
    release();
    await blocker;
    expect(await Promise.all(waiting)).to.deep.equal(['a', 'b']);
    expect(gate.active).to.equal(0);
    const timed = new HashGate({ concurrency: 1, queue: 1, maxWaitMs: 50 });
    let free: () => void = () => undefined;
    const held = timed.run(() => new Promise<void>((done) => (free = done)));
    expect(await timed.run(async () => 'late').catch((e: unknown) => e)).to.be.an('error');
    free();
    await held;
  });
});
