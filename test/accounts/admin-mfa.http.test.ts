import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { generate } from 'otplib';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { CookieJar } from '../helpers/oauth.js';
import { loadConfig } from '../../src/config/index.js';
import { AccountService } from '../../src/oauth/accounts.js';
import { loadOAuthKeys } from '../../src/oauth/signing-keys.js';
import { MFA_FAILURE_LIMIT, MfaService, RECOVERY_CODE_COUNT } from '../../src/oauth/second-factor.js';

/**
 * Over HTTP as a browser without JavaScript: two-step sign-in (TOTP, RFC 6238)
 * enrolled in /console/account, asked at the login page, with recovery codes; the admin console
 * needing it (ADMIN_MFA=required, the production default) and a sign-in at most 15 minutes old;
 * and a console sign-out that ends the sign-in at the authorization server in one step.
 */

const ADMIN = { email: 'mfa-admin@school.test', password: 'an admin pass phrase' };
const USER = { email: 'mfa-user@school.test', password: 'a user pass phrase' };
/** Codes sent at once in the burst tests: far more than the account's checks. */
const BURST = 40;

/**
 * The machine's Redis (127.0.0.1:6379), under a key prefix of this run's own: a budget read and
 * spent in two round trips is where codes sent at once could slip through together.
 */
async function ownRedis(): Promise<Redis> {
  const redis = new Redis('redis://127.0.0.1:6379', {
    keyPrefix: `test:${randomUUID()}:`,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  });
  await redis.connect();
  return redis;
}

/** One browser: a cookie jar and a walk through redirects and our forms. */
class Browser {
  readonly jar = new CookieJar();
  /** The pages that asked for something on the way (their form actions), for assertions. */
  readonly asked: string[] = [];

  constructor(private readonly t: TestApp) {}

  async get(path: string): Promise<Response> {
    const res = await fetch(new URL(path, this.t.url), { headers: { cookie: this.jar.header() }, redirect: 'manual' });
    this.jar.store(res);
    return res;
  }

  async post(path: string, fields: Record<string, string>): Promise<Response> {
    const res = await fetch(new URL(path, this.t.url), {
      method: 'POST',
      headers: { cookie: this.jar.header(), 'content-type': 'application/x-www-form-urlencoded', origin: this.t.url },
      body: new URLSearchParams(fields).toString(),
      redirect: 'manual',
    });
    this.jar.store(res);
    return res;
  }

  /**
   * Opens `path` and follows redirects; at the login form it types `user`, at the second-factor
   * form whatever `factor` gives. Ends at the first page that is not one of those forms.
   */
  async open(
    path: string,
    user: { email: string; password: string },
    factor?: () => Promise<string>,
  ): Promise<{ res: Response; html: string }> {
    this.asked.length = 0;
    let res = await this.get(path);
    for (let hop = 0; hop < 20; hop++) {
      const location = res.headers.get('location');
      if (location) {
        await res.arrayBuffer();
        res = await this.get(new URL(location, this.t.url).href);
        continue;
      }
      const html = await res.text();
      const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '';
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
      if (action.endsWith('/login')) {
        this.asked.push('password');
        res = await this.post(action, { csrf, email: user.email, password: user.password });
      } else if (action.endsWith('/second-factor') && factor) {
        this.asked.push('second factor');
        const recovery = /name="recovery" value="([^"]*)"/.exec(html)?.[1] ?? '';
        res = await this.post(action, { csrf, code: await factor(), recovery });
        if (res.status >= 400) return { res, html: await res.text() };
      } else {
        return { res, html };
      }
    }
    throw new Error('too many hops');
  }

  async csrfOf(path: string): Promise<string> {
    const html = await (await this.get(path)).text();
    return /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  }
}

describe('accounts and sign-in: two-step sign-in and the locked admin door', function () {
  this.timeout(120000);
  let t: TestApp;
  /** The app's clock runs ahead by this much: TOTP steps and the 15-minute rule move with it. */
  let offsetMs = 0;
  const now = () => new Date(Date.now() + offsetMs);
  /** A code of the app at the app's time (a step the server has not accepted yet: move the clock between uses). */
  const codeFor = (secret: string) => generate({ secret, epoch: Math.floor(now().getTime() / 1000) });
  let secret = '';
  let recoveryCodes: string[] = [];

  before(async () => {
    t = await buildTestApp('admin_mfa', { env: { ADMIN_MFA: 'required' }, now });
    await new AccountService(t.db).create({ ...ADMIN, role: 'ADMIN' });
    await new AccountService(t.db).create({ ...USER, role: 'USER' });
  });
  after(() => t?.close());

  it('ADMIN_MFA is required by default in production and optional elsewhere', () => {
    const production = {
      NODE_ENV: 'production',
      MONGODB_URI: 'mongodb://unused.invalid/campus',
      AUTH_URL: 'https://auth.school.test',
      USERINFO_URL: 'https://me.school.test',
      BASE_URL: 'https://api.school.test',
      OAUTH_JWKS: '{"keys":[]}',
      OAUTH_COOKIE_KEYS: 'a-production-cookie-key-of-32-characters',
      SMTP_URL: 'smtps://mail.school.test',
    };
    expect(loadConfig(production).policy.staffSecondFactor).to.equal('required');
    expect(loadConfig({ ...production, ADMIN_MFA: 'optional' }).policy.staffSecondFactor).to.equal('optional');
    expect(loadConfig({}).policy.staffSecondFactor).to.equal('optional');
    expect(() => loadConfig({ ADMIN_MFA: 'sometimes' })).to.throw('ADMIN_MFA');
  });

  it('an ADMIN without a second factor cannot open /admin: a page sends them to set it up', async () => {
    const browser = new Browser(t);
    const { res, html } = await browser.open('/admin', ADMIN);
    expect(res.status).to.equal(403);
    expect(html).to.include('관리자 콘솔을 열려면 2단계 인증이 필요합니다.');
    expect(html).to.include('href="/console/account"');
    // The console itself opens.
    expect((await browser.get('/console/account')).status).to.equal(200);
  });

  it('enrolment in /console/account: the key, a code from the app turns it on, the recovery codes are shown once', async () => {
    const browser = new Browser(t);
    expect((await browser.open('/console/account', ADMIN)).res.status).to.equal(200);
    const csrf = await browser.csrfOf('/console/account');
    // The password again first: without it (or with a wrong one) nothing is enrolled.
    for (const mfaPassword of ['', 'not the password']) {
      const refused = await browser.post('/console/account/second-factor', { csrf, mfaPassword });
      expect(refused.status, mfaPassword).to.equal(422);
      expect(await refused.text()).to.include('id="f-mfaPassword-error"');
      expect(await t.db.models.accountMfa.countDocuments({})).to.equal(0);
    }
    const started = await browser.post('/console/account/second-factor', { csrf, mfaPassword: ADMIN.password });
    const page = await started.text();
    expect(started.status).to.equal(200);
    const uri = /href="(otpauth:\/\/totp\/[^"]+)"/.exec(page)?.[1]?.replaceAll('&amp;', '&') ?? '';
    expect(uri).to.match(/^otpauth:\/\/totp\/Campus%20Data%20Service:mfa-admin%40school\.test\?/);
    secret = new URL(uri).searchParams.get('secret') ?? '';
    expect(secret).to.match(/^[A-Z2-7]{26,}$/);
    expect(page.replace(/<[^>]+>/g, '').replace(/\s/g, '')).to.include(secret);
    // Not on yet: a wrong code is refused, named at its field.
    const wrong = await browser.post('/console/account/second-factor/confirm', { csrf, code: '000000' });
    expect(wrong.status).to.equal(422);
    expect(await wrong.text()).to.include('코드가 맞지 않습니다');
    const stored = await t.db.models.accountMfa.findOne({}).lean();
    expect(stored?.active).to.equal(false);
    expect(stored?.secret).not.to.include(secret);
    const done = await browser.post('/console/account/second-factor/confirm', { csrf, code: await codeFor(secret) });
    expect(done.status).to.equal(200);
    const shown = await done.text();
    recoveryCodes = [...shown.matchAll(/<code>([a-z2-7]{5}-[a-z2-7]{5})<\/code>/g)].map((m) => m[1] ?? '');
    expect(recoveryCodes).to.have.length(RECOVERY_CODE_COUNT);
    const active = await t.db.models.accountMfa.findOne({}).lean();
    expect(active?.active).to.equal(true);
    expect(active?.recoveryHashes).to.have.length(RECOVERY_CODE_COUNT);
    for (const code of recoveryCodes) expect(JSON.stringify(active)).not.to.include(code.replace('-', ''));
    expect((await (await browser.get('/console/account')).text()).includes(`남은 복구 코드: ${RECOVERY_CODE_COUNT}개`)).to.equal(true);
    // The sign-in this console holds was made without the factor: /admin starts a sign-in over.
    offsetMs += 30_000;
    const again = await browser.open('/admin', ADMIN, () => codeFor(secret));
    expect(browser.asked).to.deep.equal(['password', 'second factor']);
    expect(again.res.status).to.equal(200);
    expect(again.html).to.include('관리자');
  });

  it('the login asks for the second factor after the password: a wrong code is 401, the right one signs in, a used one is refused', async () => {
    offsetMs += 30_000;
    const browser = new Browser(t);
    const wrong = await browser.open('/admin', ADMIN, async () => '123456');
    expect(wrong.res.status).to.equal(401);
    expect(wrong.html).to.include('코드가 올바르지 않습니다');
    const code = await codeFor(secret);
    const ok = await new Browser(t).open('/admin', ADMIN, async () => code);
    expect(ok.res.status).to.equal(200);
    // The same code again (same time step): refused, once is all.
    const replay = await new Browser(t).open('/admin', ADMIN, async () => code);
    expect(replay.res.status).to.equal(401);
  });

  it('a recovery code signs in once (the recovery page), then is spent', async () => {
    const [recovery = ''] = recoveryCodes;
    const browser = new Browser(t);
    const first = await browser.get('/admin');
    expect(first.status).to.equal(303);
    // Through the password to the second-factor page, then the "use a recovery code" link.
    const page = await browser.open('/admin', ADMIN);
    const uid = /action="(\/v1\/oauth\/interaction\/[^/"]+)\/second-factor"/.exec(page.html)?.[1] ?? '';
    expect(page.html).to.include('?recovery=1');
    const recoveryPage = await browser.get(`${uid}/second-factor?recovery=1`);
    const html = await recoveryPage.text();
    expect(html).to.include('복구 코드로 로그인');
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const res = await browser.post(`${uid}/second-factor`, { csrf, code: recovery.toUpperCase(), recovery: '1' });
    expect(res.status).to.equal(303);
    const landed = await browser.open(res.headers.get('location') ?? '', ADMIN);
    expect(landed.res.status).to.equal(200);
    const left = await t.db.models.accountMfa.findOne({}).lean();
    expect(left?.recoveryHashes).to.have.length(RECOVERY_CODE_COUNT - 1);
    const spent = await new Browser(t).open('/admin', ADMIN, async () => recovery);
    expect(spent.res.status).to.equal(401);
  });

  it(`after ${MFA_FAILURE_LIMIT.points} wrong second factors the account waits (429 with Retry-After), even with the right code`, async () => {
    // A fresh app: the failures of the tests above were counted in the other one's memory.
    const fresh = await buildTestApp('admin_mfa_limit', { db: t.db, env: { ADMIN_MFA: 'required' }, now });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < MFA_FAILURE_LIMIT.points + 1; i++)
        statuses.push((await new Browser(fresh).open('/admin', ADMIN, async () => '000000')).res.status);
      expect(statuses).to.deep.equal([401, 401, 401, 401, 401, 429]);
      offsetMs += 30_000;
      const limited = await new Browser(fresh).open('/admin', ADMIN, () => codeFor(secret));
      expect(limited.res.status).to.equal(429);
      expect(Number(limited.res.headers.get('retry-after'))).to.be.within(1, MFA_FAILURE_LIMIT.durationSeconds);
      expect(limited.html).to.include('틀린 코드가 너무 많습니다');
    } finally {
      await fresh.close();
    }
  });

  it(`${BURST} wrong second factors sent at once get ${MFA_FAILURE_LIMIT.points} checks (401) and ${BURST} - ${MFA_FAILURE_LIMIT.points} refusals (429); the right code after them is not checked`, async () => {
    const redis = await ownRedis();
    const fresh = await buildTestApp('admin_mfa_burst', { db: t.db, env: { ADMIN_MFA: 'required' }, now, redis });
    try {
      const burster = { email: 'mfa-burst@school.test', password: 'a burst pass phrase' };
      const { id } = await new AccountService(t.db).create({ ...burster, role: 'USER' });
      const mfa = new MfaService(t.db, (await loadOAuthKeys(fresh.config, t.db)).cookieKeys);
      const { secret: own } = await mfa.enrol(id, burster.email, { active: true });
      const browser = new Browser(fresh);
      // Through the password to the second-factor form, then every code of the burst at once on it.
      const { html } = await browser.open('/console', burster);
      const action = /<form method="post" action="([^"]+\/second-factor)"/.exec(html)?.[1] ?? '';
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
      expect(action).to.match(/^\/v1\/oauth\/interaction\/[^/]+\/second-factor$/);
      const statuses = await Promise.all(
        Array.from({ length: BURST }, async () => {
          const res = await browser.post(action, { csrf, code: '000000', recovery: '' });
          await res.arrayBuffer();
          return res.status;
        }),
      );
      expect(statuses.filter((s) => s === 401)).to.have.length(MFA_FAILURE_LIMIT.points);
      expect(statuses.filter((s) => s === 429)).to.have.length(BURST - MFA_FAILURE_LIMIT.points);
      // The right code now: refused without being checked (its time step is not taken).
      const right = await browser.post(action, { csrf, code: await codeFor(own), recovery: '' });
      expect(right.status).to.equal(429);
      expect(Number(right.headers.get('retry-after'))).to.be.within(
        MFA_FAILURE_LIMIT.durationSeconds - 60,
        MFA_FAILURE_LIMIT.durationSeconds,
      );
      expect(await right.text()).to.include('틀린 코드가 너무 많습니다');
      expect((await t.db.models.accountMfa.findOne({ _id: id }).lean())?.lastStep).to.equal(0);
    } finally {
      await fresh.close();
      redis.disconnect();
    }
  });

  it('a right code gives the account its checks back: after 4 wrong and the right one, 5 more wrong are checked', async () => {
    const fresh = await buildTestApp('admin_mfa_reward', { db: t.db, env: { ADMIN_MFA: 'required' }, now });
    try {
      const owner = { email: 'mfa-reward@school.test', password: 'a reward pass phrase' };
      const { id } = await new AccountService(t.db).create({ ...owner, role: 'USER' });
      const { secret: own } = await new MfaService(t.db, (await loadOAuthKeys(fresh.config, t.db)).cookieKeys).enrol(id, owner.email, {
        active: true,
      });
      const wrong = async () => (await new Browser(fresh).open('/console', owner, async () => '000000')).res.status;
      const before: number[] = [];
      for (let i = 0; i < MFA_FAILURE_LIMIT.points - 1; i++) before.push(await wrong());
      expect(before).to.deep.equal(Array(MFA_FAILURE_LIMIT.points - 1).fill(401));
      offsetMs += 30_000;
      expect((await new Browser(fresh).open('/console', owner, () => codeFor(own))).res.status).to.equal(200);
      const after: number[] = [];
      for (let i = 0; i < MFA_FAILURE_LIMIT.points + 1; i++) after.push(await wrong());
      expect(after).to.deep.equal([...Array(MFA_FAILURE_LIMIT.points).fill(401), 429]);
    } finally {
      await fresh.close();
    }
  });

  it(`enrolment spends the same way: ${BURST} wrong confirmation codes at once get ${MFA_FAILURE_LIMIT.points} checks (422), the rest 429`, async () => {
    const redis = await ownRedis();
    const fresh = await buildTestApp('admin_mfa_confirm_burst', { db: t.db, env: { ADMIN_MFA: 'required' }, now, redis });
    try {
      const enroller = { email: 'mfa-enrol-burst@school.test', password: 'an enrolling pass phrase' };
      const { id } = await new AccountService(t.db).create({ ...enroller, role: 'USER' });
      const browser = new Browser(fresh);
      expect((await browser.open('/console/account', enroller)).res.status).to.equal(200);
      const csrf = await browser.csrfOf('/console/account');
      const started = await browser.post('/console/account/second-factor', { csrf, mfaPassword: enroller.password });
      const uri = /href="(otpauth:\/\/totp\/[^"]+)"/.exec(await started.text())?.[1]?.replaceAll('&amp;', '&') ?? '';
      const own = new URL(uri).searchParams.get('secret') ?? '';
      const statuses = await Promise.all(
        Array.from({ length: BURST }, async () => {
          const res = await browser.post('/console/account/second-factor/confirm', { csrf, code: '000000' });
          await res.arrayBuffer();
          return res.status;
        }),
      );
      expect(statuses.filter((s) => s === 422)).to.have.length(MFA_FAILURE_LIMIT.points);
      expect(statuses.filter((s) => s === 429)).to.have.length(BURST - MFA_FAILURE_LIMIT.points);
      const right = await browser.post('/console/account/second-factor/confirm', { csrf, code: await codeFor(own) });
      expect(right.status).to.equal(429);
      expect(Number(right.headers.get('retry-after'))).to.be.within(1, MFA_FAILURE_LIMIT.durationSeconds);
      const stored = await t.db.models.accountMfa.findOne({ _id: id }).lean();
      expect(stored?.active).to.equal(false);
      expect(stored?.lastStep).to.equal(0);
    } finally {
      await fresh.close();
      redis.disconnect();
    }
  });

  it('/admin asks for the password (and second factor) again when the sign-in is older than 15 minutes', async () => {
    const fresh = await buildTestApp('admin_mfa_age', { db: t.db, env: { ADMIN_MFA: 'required' }, now });
    try {
      // The app's clock at the real time again (the authorization server's), earlier steps forgotten.
      offsetMs = 0;
      await t.db.connection.collection('account_mfa').updateOne({}, { $set: { lastStep: 0 } });
      const browser = new Browser(fresh);
      expect((await browser.open('/admin', ADMIN, () => codeFor(secret))).res.status).to.equal(200);
      expect((await browser.get('/admin')).status).to.equal(200);
      offsetMs += 14 * 60_000;
      expect((await browser.get('/admin/students')).status).to.equal(200);
      offsetMs += 90_000;
      const stale = await browser.get('/admin/students');
      expect(stale.status).to.equal(303);
      const location = new URL(stale.headers.get('location') ?? '', fresh.url);
      expect(location.pathname).to.equal('/web/signin');
      expect(location.searchParams.get('reauth')).to.equal('age');
      const toAuthorize = await browser.get(location.pathname + location.search);
      const authorize = new URL(toAuthorize.headers.get('location') ?? '');
      expect(authorize.searchParams.get('prompt')).to.equal('login');
      // The browser still has its sign-in at the authorization server, and is asked for the password anyway.
      const interaction = await browser.get(authorize.pathname + authorize.search);
      const form = await browser.get(interaction.headers.get('location') ?? '');
      const html = await form.text();
      expect(form.status).to.equal(200);
      expect(html).to.match(/<form method="post" action="\/v1\/oauth\/interaction\/[^"]+\/login"/);
      expect(html).to.include('name="password"');
      // The console itself does not ask.
      expect((await browser.get('/console')).status).to.equal(200);
    } finally {
      await fresh.close();
    }
  });

  it('signing out of a console ends the sign-in at the authorization server in the same step: /admin then asks for the password', async () => {
    const app = await buildTestApp('admin_mfa_signout', { db: t.db, env: { ADMIN_MFA: 'optional' }, now });
    try {
      const browser = new Browser(app);
      expect((await browser.open('/console', USER)).res.status).to.equal(200);
      const accountId = String((await t.db.models.accounts.findOne({ email: USER.email }).lean())?._id);
      expect(await t.db.models.oauthRecords.countDocuments({ kind: 'Session', accountId })).to.equal(1);
      const csrf = await browser.csrfOf('/console');
      const out = await browser.post('/web/signout', { csrf });
      expect(out.status).to.equal(303);
      // No confirmation page of the authorization server: straight to "signed out".
      expect(out.headers.get('location')).to.equal('/web/signed-out');
      expect(await t.db.models.oauthRecords.countDocuments({ kind: 'Session', accountId })).to.equal(0);
      const signedOut = await browser.get('/web/signed-out');
      expect(signedOut.status).to.equal(200);
      // The next person at this browser: the console asks for the password.
      const next = await browser.open('/console', USER);
      expect(browser.asked).to.deep.equal(['password']);
      expect(next.res.status).to.equal(200);
    } finally {
      await app.close();
    }
  });
});
