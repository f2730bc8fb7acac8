import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { CookieJar, createAccount, createClient, pkcePair, REDIRECT_URI, loginAttempts } from '../helpers/oauth.js';

/**
 * Failed logins on the authorization server cannot lock the owner out, over HTTP: the limit per
 * account and address, the limit per address, and an account-wide delay that slows guesses from
 * many addresses but never refuses; an overlong email is refused before anything looks at it.
 */

const OWNER = { email: 'owner@school.test', password: 'the owner password' };

interface LoginForm {
  jar: CookieJar;
  csrf: string;
  action: string;
}

/** Starts an authorization (with PKCE) and stops at the login form. */
async function openLoginForm(t: TestApp, clientId: string, headers: Record<string, string> = {}): Promise<LoginForm> {
  const jar = new CookieJar();
  const params = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    state: 'h',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
  });
  const start = await t.request(`/v1/oauth/authorize?${params}`, { redirect: 'manual', headers });
  jar.store(start);
  expect(start.status).to.equal(303);
  const page = await fetch(new URL(start.headers.get('location') ?? '', t.url), { headers: { cookie: jar.header(), ...headers } });
  const html = await page.text();
  expect(page.status, html).to.equal(200);
  return {
    jar,
    csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '',
    action: new URL(/<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '/', t.url).href,
  };
}

/** Posts the login form as a browser at `address` would (through the trusted proxy 127.0.0.1). */
async function login(
  t: TestApp,
  form: LoginForm,
  user: { email: string; password: string },
  address: string,
): Promise<{ res: Response; ms: number }> {
  const started = performance.now();
  const res = await fetch(form.action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.jar.header(), origin: t.url, 'x-forwarded-for': address },
    body: new URLSearchParams({ csrf: form.csrf, email: user.email, password: user.password, lang: 'en' }).toString(),
  });
  await res.arrayBuffer();
  return { res, ms: performance.now() - started };
}

/** The delays the app logged for login attempts since `from` (an index into its log). */
function loggedDelays(t: TestApp, from: number): number[] {
  return t.logs
    .slice(from)
    .filter((l) => l['event'] === 'login.delayed')
    .map((l) => Number(l['delayMs']));
}

describe('accounts and sign-in: failed logins cannot lock the owner out', function () {
  this.timeout(60000);
  let t: TestApp;
  let clientId: string;

  before(async () => {
    t = await buildTestApp('oauth_lockout', {
      env: {
        TRUSTED_PROXIES: '127.0.0.1',
        OAUTH_LOGIN_LIMIT_ACCOUNT: '3/900',
        OAUTH_LOGIN_LIMIT_IP: '50/900',
        OAUTH_LOGIN_DELAY_MS: '200',
        OAUTH_LOGIN_DELAY_MAX_MS: '800',
      },
    });
    await createAccount(t.db, OWNER.email, OWNER.password);
    clientId = (await createClient(t.db, { firstParty: true })).client.id;
  });
  after(() => t.close());

  it('after the per-(account, address) limit from one address, its attempts on the account are refused unchecked; the owner still signs in from another address', async () => {
    const form = await openLoginForm(t, clientId);
    const attacker = '203.0.113.10';
    for (let i = 0; i < 3; i++) {
      expect((await login(t, form, { email: OWNER.email, password: `guess ${i}` }, attacker)).res.status).to.equal(401);
    }
    // That address's further attempts on this account get the wrong password's answer, unchecked...
    const before = await loginAttempts(t);
    const refused = await login(t, form, { email: OWNER.email, password: 'guess 3' }, attacker);
    expect(refused.res.status).to.equal(401);
    expect(await loginAttempts(t)).to.deep.include({ failed: before.failed, unchecked: before.unchecked + 1 });
    // ...while the owner, at another address, gets in (after the account-wide delay at most).
    const owner = await login(t, form, OWNER, '198.51.100.20');
    expect(owner.res.status).to.equal(303);
    expect(new URL(owner.res.headers.get('location') ?? '', t.url).pathname).to.match(/^\/v1\/oauth\/authorize\//);
    // The attacker's address stays refused for the account, even with the right password.
    const again = await openLoginForm(t, clientId);
    expect((await login(t, again, OWNER, attacker)).res.status).to.equal(401);
  });

  it("failures are limited, successes are not: one account's failures from a shared address do not stop the others behind it", async () => {
    const shared = '203.0.113.50';
    const student = { email: 'classmate@school.test', password: 'a classmate password' };
    const other = { email: 'other-student@school.test', password: 'another student password' };
    await createAccount(t.db, student.email, student.password);
    await createAccount(t.db, other.email, other.password);
    const form = await openLoginForm(t, clientId);
    const before = await loginAttempts(t);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await login(t, form, { email: student.email, password: `typo ${i}` }, shared)).res.status);
    // Three checked failures (OAUTH_LOGIN_LIMIT_ACCOUNT), then that address's attempts on the account are answered alike, unchecked.
    expect(statuses).to.deep.equal(Array<number>(10).fill(401));
    const after = await loginAttempts(t);
    expect([after.failed - before.failed, after.unchecked - before.unchecked]).to.deep.equal([3, 7]);
    // The other student behind the same address signs in at once.
    const fine = await login(t, form, other, shared);
    expect(fine.res.status).to.equal(303);
    // The student themselves, from home, too.
    const home = await login(t, await openLoginForm(t, clientId), student, '198.51.100.51');
    expect(home.res.status).to.equal(303);
  });

  it('an address out of its failure budget on any accounts still lets the right password in', async () => {
    const limited = await buildTestApp('oauth_lockout_ip', {
      env: { TRUSTED_PROXIES: '127.0.0.1', OAUTH_LOGIN_LIMIT_ACCOUNT: '50/900', OAUTH_LOGIN_LIMIT_IP: '4/900', OAUTH_LOGIN_DELAY_MS: '0' },
    });
    try {
      await createAccount(limited.db, OWNER.email, OWNER.password);
      const id = (await createClient(limited.db, { firstParty: true })).client.id;
      const form = await openLoginForm(limited, id);
      const school = '203.0.113.60';
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++)
        statuses.push((await login(limited, form, { email: `other${i}@school.test`, password: 'wrong pw 1' }, school)).res.status);
      expect(statuses).to.deep.equal([401, 401, 401, 401, 429, 429]);
      expect((await login(limited, form, OWNER, school)).res.status).to.equal(303);
    } finally {
      await limited.close();
    }
  });

  it('failures on an account from many addresses slow every further attempt with a growing delay, capped, and never refuse the owner', async () => {
    const victim = { email: 'victim@school.test', password: 'the victim password' };
    await createAccount(t.db, victim.email, victim.password);
    const form = await openLoginForm(t, clientId);
    const logStart = t.logs.length;
    const timings: number[] = [];
    // Eight guesses, each from its own address: no address reaches its own limits.
    for (let i = 0; i < 8; i++) {
      const { res, ms } = await login(t, form, { email: victim.email, password: `guess ${i}` }, `192.0.2.${i + 1}`);
      expect(res.status).to.equal(401);
      timings.push(ms);
    }
    // The first 3 (OAUTH_LOGIN_LIMIT_ACCOUNT's count) are free; then 200 ms, doubling, capped at 800 ms.
    expect(loggedDelays(t, logStart)).to.deep.equal([200, 400, 800, 800, 800]);
    expect(timings[3]).to.be.at.least(200);
    expect(timings[5]).to.be.at.least(800);
    expect(timings[7]).to.be.at.least(800);

    // The owner, from an address that has not been failing, waits the capped delay and gets in.
    const owner = await login(t, form, victim, '198.51.100.77');
    expect(owner.res.status).to.equal(303);
    expect(owner.ms).to.be.at.least(800);
    expect(loggedDelays(t, logStart)).to.deep.equal([200, 400, 800, 800, 800, 800]);
  });

  it('an email longer than 254 characters is refused (400, named) before anything else looks at it', async () => {
    const form = await openLoginForm(t, clientId);
    const long = `${'a'.repeat(243)}@school.test`;
    expect(long).to.have.length(255);
    const res = await fetch(form.action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.jar.header(), origin: t.url },
      body: new URLSearchParams({ csrf: form.csrf, email: long, password: 'whatever pw' }).toString(),
    });
    expect(res.status).to.equal(400);
    expect(await res.text()).to.include('<p class="field-error" id="f-email-error">이메일 주소가 너무 깁니다 (최대 254자).</p>');
    // A pathological 15 000-character "email" is answered at once.
    const started = performance.now();
    const huge = await fetch(form.action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.jar.header(), origin: t.url },
      body: new URLSearchParams({ csrf: form.csrf, email: `a@${'a.'.repeat(7500)}@`, password: 'whatever pw' }).toString(),
    });
    expect(huge.status).to.equal(400);
    expect(await huge.text()).to.include('이메일 주소가 너무 깁니다');
    expect(performance.now() - started).to.be.below(1000);
  });
});
