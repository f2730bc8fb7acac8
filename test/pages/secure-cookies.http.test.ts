import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Server } from 'node:http';
import { expect } from 'chai';
import { closeServer } from '../../src/app.js';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { selfSignedCertificate } from '../helpers/tls.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createAccount, signInToConsole, type ConsoleSession } from '../helpers/oauth.js';

/**
 * Cookie names under https (src/oauth/constants.ts cookieName, providerCookieNames):
 * served over TLS, every cookie of our pages and the authorization server's session cookie carry
 * `__Host-` (Secure, Path=/, no Domain), and oidc-provider's interaction and resume cookies,
 * which it scopes to one sign-in's path, carry `__Secure-`; the console sign-in works with them
 * and sign-out clears them under the same names.
 */
describe('pages: cookies under https carry __Host- (or __Secure-) names', function () {
  this.timeout(60000);
  let t: TestApp;
  let secure: HttpsServer;
  let url: string;
  let admin: ConsoleSession;
  const rejectUnauthorized = process.env['NODE_TLS_REJECT_UNAUTHORIZED'];

  before(async () => {
    // The server redeems the console's code at its own https token endpoint: the throwaway certificate is accepted.
    process.env['NODE_TLS_REJECT_UNAUTHORIZED'] = '0';
    const port = await freePort();
    url = `https://127.0.0.1:${port}`;
    t = await buildTestApp('secure_cookies', { env: { AUTH_URL: url, BASE_URL: url, USERINFO_URL: url } });
    const tls = await selfSignedCertificate();
    secure = createHttpsServer({ key: tls.key, cert: tls.cert }, t.app.callback());
    await new Promise<void>((done) => secure.listen(port, '127.0.0.1', () => done()));
    const user = { email: 'admin@gsm.hs.kr', password: 'admin has a long password' };
    const id = await createAccount(t.db, user.email, user.password);
    await t.db.models.accounts.updateOne({ _id: id }, { $set: { role: 'ADMIN' } });
    admin = await signInToConsole({ ...t, url }, user, '/admin');
  });
  after(async () => {
    if (rejectUnauthorized === undefined) delete process.env['NODE_TLS_REJECT_UNAUTHORIZED'];
    else process.env['NODE_TLS_REJECT_UNAUTHORIZED'] = rejectUnauthorized;
    await closeServer(secure as unknown as Server, 100);
    await t.close();
  });

  const nameOf = (line: string) => line.slice(0, line.indexOf('='));

  it('the sign-in sets only prefixed cookies, each Secure; __Host- ones with Path=/ and no Domain', () => {
    const lines = admin.jar.setCookieLines;
    const names = new Set(lines.map(nameOf));
    for (const name of [
      '__Host-campus_web_signin',
      '__Host-campus_session',
      '__Host-campus_session.sig',
      '__Secure-campus_interaction',
      '__Secure-campus_interaction.sig',
      '__Secure-campus_resume',
      '__Host-campus_web',
    ]) {
      expect(names, `${name} among ${[...names].join(', ')}`).to.include(name);
    }
    for (const line of lines) {
      expect(nameOf(line), line).to.match(/^__(Host|Secure)-/);
      expect(line, line).to.match(/; secure(;|$)/i);
      expect(line, line).to.not.match(/; domain=/i);
      if (line.startsWith('__Host-')) expect(line, line).to.match(/; path=\/(;|$)/);
    }
    // oidc-provider keeps the interaction cookie to its own sign-in's path: __Secure-, not __Host-.
    const interaction = lines.find((line) => line.startsWith('__Secure-campus_interaction='));
    expect(interaction).to.match(/; path=\/v1\/oauth\/interaction\/[^;]+;/);
    expect(lines.find((line) => line.startsWith('__Secure-campus_resume='))).to.match(/; path=\/v1\/oauth\/authorize\/[^;]+;/);
  });

  it('the prefixed cookies carry the session: /admin opens, and a form posts with its CSRF token', async () => {
    const { res, html } = await admin.get('/admin');
    expect(res.status, html.slice(-300)).to.equal(200);
    expect(admin.jar.header()).to.not.match(/(^|; )campus_/);
  });

  it('sign-out clears __Host-campus_web and __Host-campus_session; /admin then asks to sign in', async () => {
    const csrf = await admin.csrf();
    const { res } = await admin.post('/web/signout', {}, csrf);
    expect(res.status).to.equal(303);
    const cleared = admin.jar.setCookieLines.filter((line) => /expires=Thu, 01 Jan 1970/i.test(line)).map(nameOf);
    expect(cleared).to.include.members(['__Host-campus_web', '__Host-campus_session', '__Host-campus_session.sig']);
    const after = await admin.get('/admin');
    expect(after.res.status).to.equal(303);
    expect(after.res.headers.get('location')).to.match(/^\/web\/signin\?next=/);
  });

  it('over plain HTTP (local development) the names stay unprefixed', async () => {
    const plain = await buildTestApp('plain_cookies', { db: t.db });
    try {
      const res = await plain.request('/web/signin?next=/admin', { redirect: 'manual' });
      const names = res.headers.getSetCookie().map(nameOf);
      expect(names).to.include('campus_web_signin');
      for (const name of names) expect(name).to.match(/^campus_/);
      expect(res.headers.getSetCookie()[0]).to.not.match(/; secure/i);
    } finally {
      await plain.close();
    }
  });
});
