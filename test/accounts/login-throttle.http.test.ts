import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { alertText, createAccount, createClient, openLoginPage, postForm } from '../helpers/oauth.js';

/**
 * Login throttling per client address on the login page, and behind a trusted proxy the address
 * the proxy saw (throttling per account and address: test/apps/login-pages.http.test.ts).
 */

const USER = { email: 'park@school.test', password: 'park password 1' };

describe('accounts and sign-in: login throttling behind a trusted proxy', () => {
  let t: TestApp;
  let clientId: string;

  before(async () => {
    t = await buildTestApp('oauth_login_proxy', { env: { OAUTH_LOGIN_LIMIT_IP: '3/900', TRUSTED_PROXIES: '127.0.0.1' } });
    await createAccount(t.db, USER.email, USER.password);
    clientId = (await createClient(t.db)).client.id;
  });
  after(() => t.close());

  it('a client cannot dodge the per-address budget by forging X-Forwarded-For', async () => {
    const page = await openLoginPage(t, clientId, { query: '?lang=en' });
    // The proxy (127.0.0.1 here) appends the real address; entries to its left are the client's.
    const via = (forged: string) => ({ origin: t.url, 'x-forwarded-for': `${forged}, 203.0.113.7` });
    for (const [i, email] of ['a@school.test', 'b@school.test', 'c@school.test'].entries()) {
      const res = await postForm(page, { csrf: page.csrf, email, password: 'nope nope', lang: 'en' }, via(`198.51.100.${i}`));
      expect(res.status).to.equal(401);
    }
    const blocked = await postForm(page, { csrf: page.csrf, email: USER.email, password: 'still wrong', lang: 'en' }, via('198.51.100.99'));
    expect(blocked.status).to.equal(429);
  });
});

describe('accounts and sign-in: login throttling per client address', () => {
  let t: TestApp;
  let clientId: string;

  before(async () => {
    t = await buildTestApp('oauth_login_ip', { env: { OAUTH_LOGIN_LIMIT_IP: '3/900' } });
    await createAccount(t.db, USER.email, USER.password);
    clientId = (await createClient(t.db)).client.id;
  });
  after(() => t.close());

  it('login throttling per address: failures on any accounts from one address block further attempts', async () => {
    const page = await openLoginPage(t, clientId, { query: '?lang=en' });
    for (const email of ['a@school.test', 'b@school.test', 'c@school.test']) {
      expect((await postForm(page, { csrf: page.csrf, email, password: 'nope nope', lang: 'en' }, { origin: t.url })).status).to.equal(401);
    }
    const blocked = await postForm(page, { csrf: page.csrf, email: USER.email, password: 'still wrong', lang: 'en' }, { origin: t.url });
    expect(blocked.status).to.equal(429);
    expect(alertText(await blocked.text())).to.match(/^Too many sign-in attempts\. Try again in \d+ minutes?\.$/);
    expect(t.logText()).to.include('"event":"login.throttled"');
    // The right password still gets in from that address.
    expect(
      (await postForm(page, { csrf: page.csrf, email: USER.email, password: USER.password, lang: 'en' }, { origin: t.url })).status,
    ).to.equal(303);
  });
});
