import { expect } from 'chai';
import { decodeProtectedHeader } from 'jose';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { expectOAuthError } from '../helpers/expect.js';
import { authorize, createAccount, createClient, generateJwks, pkcePair, postJson, REDIRECT_URI } from '../helpers/oauth.js';
import type { Database } from '../../src/data/database.js';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { generateCookieKey, parseJwks } from '../../src/oauth/signing-keys.js';

/**
 * Rotating OAUTH_JWKS and OAUTH_COOKIE_KEYS without logging anyone out (README "Running in
 * production"): the first key signs, every key verifies. The same database and the same public
 * address throughout, as in a real deployment; only the keys change between the app's starts.
 */

interface Tokens {
  access_token: string;
  refresh_token: string;
  id_token?: string;
}

const USER = { email: 'rotation@school.test', password: 'rotation password 1' };

/** The private keys of two key sets, joined in the given order (the first signs). */
function keySet(...sets: string[]): string {
  return JSON.stringify({ keys: sets.flatMap((s) => (JSON.parse(s) as { keys: unknown[] }).keys) });
}

/** The name=value pairs of a Cookie header, so a copy of a browser's cookies can be kept. */
function cookieMap(header: string): Map<string, string> {
  return new Map(header.split('; ').filter(Boolean).map(nameValue));
}

/** The name and value of a Cookie pair or of a Set-Cookie line. */
function nameValue(text: string): [string, string] {
  const [pair = ''] = text.split(';');
  return [pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1).trim()];
}

describe('operations: signing-key and cookie-key rotation', function () {
  this.timeout(60000);
  let db: Database & { drop(): Promise<void> };
  let port: number;
  let client: { id: string; secret: string };
  const oldJwks = generateJwks('old-signing-key');
  const newJwks = generateJwks('new-signing-key');
  const oldCookieKey = generateCookieKey();
  const newCookieKey = generateCookieKey();

  before(async () => {
    db = await createTestDatabase('rotation');
    port = await freePort();
    await createAccount(db, USER.email, USER.password);
    const created = await createClient(db, { name: 'Rotation app', scopes: ['self:read', 'openid'] });
    client = { id: created.client.id, secret: created.secret ?? '' };
  });
  after(async () => {
    await db.drop();
  });

  /** The app on the same port (the same issuer and audience) with these keys. */
  function start(jwks: string, cookieKeys: string[]): Promise<TestApp> {
    return buildTestApp('rotation', { db, port, env: { OAUTH_JWKS: jwks, OAUTH_COOKIE_KEYS: cookieKeys.join(',') } });
  }

  function authorizeParams(): Record<string, string> {
    return { client_id: client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'rotation', scope: 'openid self:read' };
  }

  /** One authorize request with the browser's cookies: where does it send the browser? */
  async function authorizeWithCookies(t: TestApp, cookies: Map<string, string>): Promise<{ location: URL; setCookies: string[] }> {
    const pkce = { code_challenge: pkcePair().challenge, code_challenge_method: 'S256' };
    const res = await t.request(`/v1/oauth/authorize?${new URLSearchParams({ ...authorizeParams(), ...pkce })}`, {
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    await res.arrayBuffer();
    expect(res.status).to.equal(303);
    return { location: new URL(res.headers.get('location') ?? '', t.url), setCookies: res.headers.getSetCookie() };
  }

  async function userinfo(t: TestApp, accessToken: string): Promise<Response> {
    return t.request('/userinfo', { headers: { authorization: `Bearer ${accessToken}` } });
  }

  it('old tokens and sessions keep working after the switch; new ones are signed by the new keys', async () => {
    // Before: one signing key and one cookie key. A user logs in (a session cookie) and the app
    // holds an access token and a refresh token.
    let t = await start(await oldJwks, [oldCookieKey]);
    let before: Tokens;
    let browser: Map<string, string>;
    try {
      const login = await authorize(t, authorizeParams(), USER);
      expect(login.code).to.be.a('string');
      const exchanged = await postJson(t, '/v1/oauth/token', {
        grant_type: 'authorization_code',
        code: login.code,
        client_id: client.id,
        client_secret: client.secret,
        redirect_uri: REDIRECT_URI,
        code_verifier: login.verifier,
      });
      expect(exchanged.status).to.equal(200);
      before = (await exchanged.json()) as Tokens;
      browser = cookieMap(login.jar.header());
      expect(browser.has('campus_session')).to.equal(true);
    } finally {
      await t.close();
    }
    expect(decodeProtectedHeader(before.access_token).kid).to.equal('old-signing-key');
    expect(before.refresh_token).to.be.a('string');

    // The switch: the new keys first, the old ones kept second.
    t = await start(keySet(await newJwks, await oldJwks), [newCookieKey, oldCookieKey]);
    let after: Tokens;
    let resigned: Map<string, string>;
    try {
      const jwks = (await (await t.request('/v1/oauth/jwks')).json()) as { keys: Record<string, unknown>[] };
      expect(jwks.keys.map((k) => k['kid'])).to.deep.equal(['new-signing-key', 'old-signing-key']);
      expect(jwks.keys.every((k) => k['d'] === undefined && k['p'] === undefined)).to.equal(true);

      // The access token signed by the old key is still accepted at userinfo.
      const old = await userinfo(t, before.access_token);
      expect(old.status).to.equal(200);
      expect(((await old.json()) as { email: string }).email).to.equal(USER.email);

      // A refresh after the switch: its access token and ID token are signed by the new key.
      const refreshed = await postJson(t, '/v1/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: before.refresh_token,
        client_id: client.id,
        client_secret: client.secret,
      });
      expect(refreshed.status).to.equal(200);
      after = (await refreshed.json()) as Tokens;
      expect(decodeProtectedHeader(after.access_token)).to.include({ kid: 'new-signing-key', alg: 'RS256', typ: 'at+jwt' });
      expect(decodeProtectedHeader(after.id_token ?? '').kid).to.equal('new-signing-key');
      expect((await userinfo(t, after.access_token)).status).to.equal(200);

      // The session cookie signed with the old cookie key still signs the user in: the next app
      // gets a code at once, no login page; the answer re-signs the cookie with the new key.
      const sso = await authorizeWithCookies(t, browser);
      expect(sso.location.origin + sso.location.pathname).to.equal(REDIRECT_URI);
      expect(sso.location.searchParams.get('code')).to.be.a('string');
      resigned = new Map([...browser, ...sso.setCookies.map(nameValue)]);
      expect(resigned.get('campus_session.sig')).to.not.equal(browser.get('campus_session.sig'));
    } finally {
      await t.close();
    }

    // Once the old keys are removed, what only they signed stops working: this is what keeping
    // them second until every token and session they signed has expired prevents.
    t = await start(await newJwks, [newCookieKey]);
    try {
      await expectOAuthError(await userinfo(t, before.access_token), 401, 'invalid_token');
      expect((await userinfo(t, after.access_token)).status).to.equal(200);
      const stale = await authorizeWithCookies(t, browser);
      expect(stale.location.pathname).to.match(/^\/v1\/oauth\/interaction\//);
      const fresh = await authorizeWithCookies(t, resigned);
      expect(fresh.location.origin + fresh.location.pathname).to.equal(REDIRECT_URI);
    } finally {
      await t.close();
    }
  });

  it('a key set naming one kid twice is refused with a message naming the kid', async () => {
    const twice = keySet(await oldJwks, await oldJwks);
    expect(() => parseJwks(twice)).to.throw('OAUTH_JWKS: kid old-signing-key is used by two keys; every key needs its own kid.');
  });
});
