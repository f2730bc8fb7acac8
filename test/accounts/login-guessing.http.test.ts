import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createAccount, createClient, loginAttempts, openLoginPage, type CookieJar } from '../helpers/oauth.js';
import { TestMailServer } from '../helpers/smtp.js';

/**
 * Password guessing is bounded per account (src/oauth/throttle.ts): a ceiling of failed checks
 * across every address soft-locks the account, whose owner then signs in with a code mailed to
 * them; guessers on several addresses get at most each address's share of checks.
 */

const OWNER = { email: 'guessed@school.test', password: 'the owner pass phrase' };

interface LoginForm {
  readonly jar: CookieJar;
  readonly csrf: string;
  readonly action: string;
}

/** The login page of a fresh authorization (its form's address, CSRF token and cookies). */
async function openLoginForm(t: TestApp, clientId: string): Promise<LoginForm> {
  const page = await openLoginPage(t, clientId);
  expect(page.res.status, page.html).to.equal(200);
  return page;
}

/** Posts a form of the login page as a browser at `address` (through the trusted proxy 127.0.0.1). */
async function postAs(
  t: TestApp,
  form: LoginForm,
  address: string,
  fields: Record<string, string>,
  action = form.action,
): Promise<{ status: number; html: string; res: Response }> {
  const res = await fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.jar.header(), origin: t.url, 'x-forwarded-for': address },
    body: new URLSearchParams({ csrf: form.csrf, ...fields }).toString(),
  });
  return { status: res.status, html: await res.text(), res };
}

function alertOf(html: string): string {
  return (/<p role="alert">([\s\S]*?)<\/p>/.exec(html)?.[1] ?? '').trim();
}

describe('accounts and sign-in: login guessing bounded per account, the ceiling soft-locks, the owner signs in with a mailed code', function () {
  this.timeout(60000);
  let t: TestApp;
  let mail: TestMailServer;
  let clientId: string;

  before(async () => {
    mail = await TestMailServer.start();
    t = await buildTestApp('login_ceiling', {
      env: {
        SMTP_URL: mail.url,
        TRUSTED_PROXIES: '127.0.0.1',
        OAUTH_LOGIN_LIMIT_ACCOUNT: '3/900',
        OAUTH_LOGIN_ACCOUNT_CEILING: '6/3600',
        OAUTH_LOGIN_DELAY_MS: '0',
      },
    });
    await createAccount(t.db, OWNER.email, OWNER.password);
    clientId = (await createClient(t.db, { firstParty: true })).client.id;
  });
  after(async () => {
    await t.close();
    await mail.close();
  });

  it('past the ceiling the right and a wrong password get the same page, the owner is mailed once, and the mailed code signs in', async () => {
    const form = await openLoginForm(t, clientId);
    // Two addresses spend their three checks each: six, the ceiling.
    for (const address of ['203.0.113.1', '203.0.113.2'])
      for (let i = 0; i < 3; i++)
        expect((await postAs(t, form, address, { email: OWNER.email, password: `guess ${i}` })).status).to.equal(401);
    const before = await loginAttempts(t);
    const wrong = await postAs(t, form, '198.51.100.7', { email: OWNER.email, password: 'yet another guess' });
    const right = await postAs(t, form, '198.51.100.8', OWNER);
    expect([wrong.status, right.status]).to.deep.equal([429, 429]);
    expect(alertOf(right.html)).to.equal(alertOf(wrong.html));
    expect(alertOf(right.html)).to.match(
      /^이 계정에 틀린 비밀번호가 너무 많이 입력되어, 계정을 지키려고 약 \d+분 동안 비밀번호만으로는 로그인할 수 없습니다\./,
    );
    expect(Number(right.res.headers.get('retry-after'))).to.be.within(3500, 3600);
    // Neither password was checked.
    expect(await loginAttempts(t)).to.deep.include({ failed: before.failed, succeeded: before.succeeded, locked: before.locked + 2 });
    // The owner is mailed once, when the lock starts.
    const code = await mail.nextCode(OWNER.email, 0);
    await sleep(200);
    expect(mail.mailsTo(OWNER.email)).to.have.length(1);

    // The lock page's form: a wrong code is refused at its field, the mailed one signs in.
    const codeAction = new URL(/<form method="post" action="([^"]+\/sign-in-code)"/.exec(right.html)?.[1] ?? '/', t.url).href;
    const wrongCode = await postAs(t, form, '198.51.100.8', { email: OWNER.email, code: '00000000' }, codeAction);
    expect(wrongCode.status).to.equal(401);
    expect(wrongCode.html).to.include('코드가 올바르지 않거나, 만료되었거나, 이미 사용되었습니다.');
    const signedIn = await postAs(t, form, '198.51.100.8', { email: OWNER.email, code }, codeAction);
    expect(signedIn.status).to.equal(303);
    expect(new URL(signedIn.res.headers.get('location') ?? '', t.url).pathname).to.match(/^\/v1\/oauth\/authorize\//);
    // The same code does not sign in twice.
    const second = await openLoginForm(t, clientId);
    const codeAgain = await postAs(
      t,
      second,
      '198.51.100.8',
      { email: OWNER.email, code },
      second.action.replace(/\/login$/, '/sign-in-code'),
    );
    expect(codeAgain.status).to.equal(401);
    // The password alone still does not, whatever the address.
    expect((await postAs(t, second, '192.0.2.99', OWNER)).status).to.equal(429);
  });
});

describe('accounts and sign-in: login guessing from two addresses for two minutes (the default budgets)', function () {
  this.timeout(240000);
  /** Each guesser's pause between answers: a steady guess a few dozen times a second in all, not a CPU flood. */
  const PAUSE_MS = 25;
  const GUESS_MS = 120_000;
  let t: TestApp;
  let clientId: string;

  before(async () => {
    t = await buildTestApp('login_guessers', { env: { TRUSTED_PROXIES: '127.0.0.1' } });
    await createAccount(t.db, OWNER.email, OWNER.password);
    clientId = (await createClient(t.db, { firstParty: true })).client.id;
  });
  after(() => t.close());

  it('4 guessers at each of two addresses get at most their addresses’ share of checked passwords; the owner still signs in from a third', async () => {
    const defaults = t.config.oauth.login;
    expect(defaults.accountFromAddress).to.deep.equal({ points: 5, durationSeconds: 900 });
    expect(defaults.accountCeiling).to.deep.equal({ points: 100, durationSeconds: 3600 });
    const statuses = new Map<number, number>();
    const until = Date.now() + GUESS_MS;
    const guesser = async (address: string, n: number) => {
      const form = await openLoginForm(t, clientId);
      for (let i = 0; Date.now() < until; i++) {
        const { status } = await postAs(t, form, address, { email: OWNER.email, password: `guess ${n}-${i}` });
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        await sleep(PAUSE_MS);
      }
    };
    await Promise.all(['203.0.113.21', '203.0.113.22'].flatMap((address) => [0, 1, 2, 3].map((n) => guesser(address, n))));
    const attempts = await loginAttempts(t);
    // Every guess got the wrong password's answer; only each address's five were checked.
    expect([...statuses.keys()]).to.deep.equal([401]);
    expect(statuses.get(401)).to.be.greaterThan(1000);
    expect(attempts.failed).to.equal(2 * defaults.accountFromAddress.points);
    expect(attempts.unchecked).to.equal((statuses.get(401) ?? 0) - attempts.failed);
    // The owner, elsewhere, is not locked out (the ceiling is far off).
    const owner = await postAs(t, await openLoginForm(t, clientId), '198.51.100.30', OWNER);
    expect(owner.status).to.equal(303);
  });
});
