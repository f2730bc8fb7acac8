import { expect } from 'chai';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectOAuthError } from '../helpers/expect.js';
import { buildStudent, insertSchool } from '../helpers/factories.js';
import { authorize, createAccount, createClient, pkcePair, postJson, REDIRECT_URI } from '../helpers/oauth.js';

/**
 * The authorization server over HTTP: authorize, token (JSON as the spec shows it, and form
 * bodies as RFC 6749 does), rotation, replay, PKCE, expiry, errors. Login is driven like a
 * browser without JavaScript (test/helpers/oauth.ts); the Chromium tests are test/apps/*.browser.test.ts.
 */

interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  scope: string;
  id_token?: string;
}

const USER = { email: 'kim@school.test', password: 'correct horse battery' };
const DAY = 24 * 3600 * 1000;

describe('OAuth apps: the token endpoint and the authorization flow', () => {
  let t: TestApp;
  let offsetMs = 0;
  let confidential: { id: string; secret: string };
  let legacy: { id: string; secret: string };
  let publicClient: string;
  let firstParty: { id: string; secret: string };
  /** The PKCE verifier of each code codeFor() obtained (every client uses PKCE by default). */
  const verifiers = new Map<string, string>();

  before(async () => {
    t = await buildTestApp('oauth_token', { now: () => new Date(Date.now() + offsetMs) });
    await insertSchool(t.db, { students: [buildStudent({ _id: 7, email: USER.email, name: '김민준' })] });
    await createAccount(t.db, USER.email, USER.password);
    const c = await createClient(t.db, { name: 'Third-party app' });
    confidential = { id: c.client.id, secret: c.secret ?? '' };
    publicClient = (await createClient(t.db, { name: 'Mobile app', public: true })).client.id;
    const f = await createClient(t.db, { name: 'Our app', firstParty: true });
    firstParty = { id: f.client.id, secret: f.secret ?? '' };
    const l = await createClient(t.db, { name: 'Legacy app', pkce: 'optional' });
    legacy = { id: l.client.id, secret: l.secret ?? '' };
  });
  after(() => t.close());
  beforeEach(() => {
    offsetMs = 0;
  });

  /** An authorization code for the confidential client (consent given), obtained with PKCE. */
  async function codeFor(extra: Record<string, string> = {}, clientId = confidential.id): Promise<string> {
    const result = await authorize(
      t,
      { client_id: clientId, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's1', ...extra },
      USER,
    );
    expect(result.code, result.location.href).to.be.a('string');
    const code = result.code ?? '';
    if (result.verifier) verifiers.set(code, result.verifier);
    return code;
  }

  /** Exchanges a code as the confidential client, with the code's PKCE verifier unless `extra` sets one. */
  function exchange(code: string, extra: Record<string, unknown> = {}): Promise<Response> {
    return postJson(t, '/v1/oauth/token', {
      grant_type: 'authorization_code',
      code,
      client_id: confidential.id,
      redirect_uri: REDIRECT_URI,
      client_secret: confidential.secret,
      code_verifier: verifiers.get(code),
      ...extra,
    });
  }

  /** The PKCE parameters every authorization request of a default client carries. */
  function challenge(): { code_challenge: string; code_challenge_method: string } {
    return { code_challenge: pkcePair().challenge, code_challenge_method: 'S256' };
  }

  /** Starts an authorization with these parameters; the address the client is sent back to (303). */
  async function sentBack(params: Record<string, string>): Promise<URL> {
    const res = await t.request(`/v1/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
    expect(res.status).to.equal(303);
    return new URL(res.headers.get('location') ?? '');
  }

  function refresh(refreshToken: string, extra: Record<string, unknown> = {}): Promise<Response> {
    return postJson(t, '/v1/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: confidential.id,
      client_secret: confidential.secret,
      ...extra,
    });
  }

  async function tokens(res: Response): Promise<TokenResponse> {
    expect(res.status, await res.clone().text()).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    return (await res.json()) as TokenResponse;
  }

  function userinfo(accessToken: string): Promise<Response> {
    return t.request('/userinfo', { headers: { Authorization: `Bearer ${accessToken}` } });
  }

  describe('the flow exactly as the spec shows it (JSON bodies)', () => {
    it('authorize redirects with 303 to the login page, then to redirect_uri with code, state and iss', async () => {
      const result = await authorize(
        t,
        { client_id: confidential.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'opaque-123' },
        USER,
      );
      expect(result.statuses[0]).to.equal(303);
      expect(result.statuses.at(-1)).to.equal(303);
      expect(`${result.location.origin}${result.location.pathname}`).to.equal(REDIRECT_URI);
      expect(result.location.searchParams.get('state')).to.equal('opaque-123');
      expect(result.location.searchParams.get('iss')).to.equal(t.url);
      expect(result.code).to.match(/^[A-Za-z0-9_-]{30,}$/);
    });

    it('exchanges the code (JSON body) for the token response of the spec, then refreshes and reads userinfo', async () => {
      const code = await codeFor();
      const body = await tokens(await exchange(code));
      expect(Object.keys(body).sort()).to.deep.equal(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
      expect(body.token_type).to.equal('Bearer');
      expect(body.expires_in).to.equal(3600);
      expect(body.scope).to.equal('self:read');

      const refreshed = await tokens(await refresh(body.refresh_token));
      expect(refreshed.expires_in).to.equal(3600);
      expect(refreshed.scope).to.equal('self:read');
      expect(refreshed.refresh_token).to.not.equal(body.refresh_token);

      const res = await userinfo(refreshed.access_token);
      expect(res.status).to.equal(200);
      const info = (await res.json()) as { sub: string; email: string; isStudent: boolean; student: { id: number; name: string } };
      expect(info).to.include({ email: USER.email, isStudent: true });
      expect(info.student).to.include({ id: 7, name: '김민준' });
    });

    it('issues a JWT access token signed with a key that has a kid, with the claims of docs/decisions.md', async () => {
      const body = await tokens(await exchange(await codeFor()));
      const header = decodeProtectedHeader(body.access_token);
      expect(header.alg).to.equal('RS256');
      expect(header.typ).to.equal('at+jwt');
      const jwks = (await (await t.request('/v1/oauth/jwks')).json()) as { keys: { kid: string; d?: string }[] };
      expect(jwks.keys.map((k) => k.kid)).to.include(header.kid);
      expect(jwks.keys.every((k) => k.d === undefined)).to.equal(true);
      const claims = decodeJwt(body.access_token);
      expect(claims.iss).to.equal(t.url);
      expect(claims.aud).to.equal(`${t.url}/userinfo`);
      expect(claims.client_id).to.equal(confidential.id);
      expect(claims.scope).to.equal('self:read');
      expect(claims.sub).to.be.a('string');
      expect(claims.jti).to.be.a('string');
      expect((claims.exp ?? 0) - (claims.iat ?? 0)).to.equal(3600);
    });

    it('accepts scope as an array in a JSON refresh request (narrowing to a granted scope)', async () => {
      const body = await tokens(await exchange(await codeFor({ scope: 'openid self:read' })));
      expect(body.scope).to.equal('self:read');
      expect(body.id_token).to.be.a('string');
      const narrowed = await tokens(await refresh(body.refresh_token, { scope: ['self:read'] }));
      expect(narrowed.scope).to.equal('self:read');
      expect(narrowed.id_token).to.equal(undefined);
    });

    it('also accepts RFC 6749 form bodies and HTTP Basic client authentication', async () => {
      const code = await codeFor();
      const res = await t.request('/v1/oauth/token', {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${confidential.id}:${confidential.secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT_URI,
          code_verifier: verifiers.get(code) ?? '',
        }).toString(),
      });
      const body = await tokens(res);
      expect(body.token_type).to.equal('Bearer');
    });

    it('serves discovery at both well-known paths with issuer equal to the address used', async () => {
      for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
        const res = await t.request(path);
        expect(res.status).to.equal(200);
        const doc = (await res.json()) as Record<string, unknown>;
        expect(doc).to.include({
          issuer: t.url,
          authorization_endpoint: `${t.url}/v1/oauth/authorize`,
          token_endpoint: `${t.url}/v1/oauth/token`,
          jwks_uri: `${t.url}/v1/oauth/jwks`,
          revocation_endpoint: `${t.url}/v1/oauth/revoke`,
          introspection_endpoint: `${t.url}/v1/oauth/introspect`,
          userinfo_endpoint: `${t.url}/userinfo`,
          authorization_response_iss_parameter_supported: true,
        });
        expect(doc['code_challenge_methods_supported']).to.deep.equal(['S256']);
        // The login scopes, then the data scopes of machine tokens (client_credentials).
        expect(doc['scopes_supported']).to.deep.equal([
          ...['account:read', 'student:read', 'club:read', 'project:read', 'self:read', 'profile', 'email', 'openid'],
          ...['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ', 'NEIS_READ'],
        ]);
      }
    });
  });

  describe('authorization codes', () => {
    it('authorization-code replay: the second use fails with invalid_grant and revokes the tokens of the first', async () => {
      const code = await codeFor();
      const first = await tokens(await exchange(code));
      expect((await userinfo(first.access_token)).status).to.equal(200);

      await expectOAuthError(await exchange(code), 400, 'invalid_grant', 'authorization code already consumed');
      // Every token issued from the code is gone: the refresh token and (through its grant) the access token.
      await expectOAuthError(await refresh(first.refresh_token), 400, 'invalid_grant');
      const res = await userinfo(first.access_token);
      expect(res.status).to.equal(401);
      expect(res.headers.get('www-authenticate')).to.include('error="invalid_token"');
    });

    it('a code expires after 5 minutes (injected clock)', async () => {
      const code = await codeFor();
      offsetMs = 5 * 60 * 1000 + 1000;
      await expectOAuthError(await exchange(code), 400, 'invalid_grant', 'authorization code not found');
    });

    it('a code is bound to its client', async () => {
      const code = await codeFor();
      const res = await postJson(t, '/v1/oauth/token', {
        grant_type: 'authorization_code',
        code,
        client_id: firstParty.id,
        client_secret: firstParty.secret,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifiers.get(code),
      });
      await expectOAuthError(res, 400, 'invalid_grant');
    });
  });

  describe('redirect_uri', () => {
    it('redirect_uri mismatch at authorize: 400, never redirected (page, or JSON when asked)', async () => {
      const query = new URLSearchParams({
        client_id: confidential.id,
        redirect_uri: 'http://127.0.0.1:9/callback/evil',
        response_type: 'code',
        state: 's',
      });
      const page = await t.request(`/v1/oauth/authorize?${query}`, { redirect: 'manual' });
      expect(page.status).to.equal(400);
      expect(page.headers.get('location')).to.equal(null);
      expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(await page.text()).to.include('redirect_uri');

      const json = await t.request(`/v1/oauth/authorize?${query}`, { redirect: 'manual', headers: { accept: 'application/json' } });
      expect(json.headers.get('location')).to.equal(null);
      await expectOAuthError(json, 400, 'invalid_redirect_uri');
    });

    it('redirect_uri must match exactly (a trailing slash or a different port is a mismatch)', async () => {
      for (const uri of [`${REDIRECT_URI}/`, 'http://127.0.0.1:10/callback', REDIRECT_URI.toUpperCase()]) {
        const query = new URLSearchParams({ client_id: confidential.id, redirect_uri: uri, response_type: 'code', state: 's' });
        const res = await t.request(`/v1/oauth/authorize?${query}`, { redirect: 'manual', headers: { accept: 'application/json' } });
        await expectOAuthError(res, 400, 'invalid_redirect_uri');
      }
    });

    it('redirect_uri mismatch at token: 400 invalid_grant', async () => {
      const code = await codeFor();
      await expectOAuthError(
        await exchange(code, { redirect_uri: 'http://127.0.0.1:9/other' }),
        400,
        'invalid_grant',
        'redirect_uri mismatch',
      );
    });

    it('an unknown client at authorize: 400 page, never redirected', async () => {
      const query = new URLSearchParams({ client_id: 'no-such-client', redirect_uri: REDIRECT_URI, response_type: 'code', state: 's' });
      const res = await t.request(`/v1/oauth/authorize?${query}`, { redirect: 'manual', headers: { accept: 'application/json' } });
      expect(res.headers.get('location')).to.equal(null);
      await expectOAuthError(res, 400, 'invalid_client');
    });

    it('errors about the request itself go back to the client with error, error_description and state', async () => {
      // prompt=none without a login session: the user would have to log in.
      const location = await sentBack({
        client_id: confidential.id,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        state: 'keep-me',
        prompt: 'none',
        ...challenge(),
      });
      expect(`${location.origin}${location.pathname}`).to.equal(REDIRECT_URI);
      expect(location.searchParams.get('error')).to.equal('login_required');
      expect(location.searchParams.get('iss')).to.equal(t.url);
      expect(location.searchParams.get('error_description')).to.be.a('string');
      expect(location.searchParams.get('state')).to.equal('keep-me');
    });

    it('an unknown or disallowed scope is invalid_scope, sent back to the client', async () => {
      const location = await sentBack({
        client_id: confidential.id,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        state: 's',
        scope: 'self:read admin:write',
        ...challenge(),
      });
      expect(location.searchParams.get('error')).to.equal('invalid_scope');
    });
  });

  describe('PKCE', () => {
    async function publicCode(params: Record<string, string>): Promise<URL> {
      const result = await authorize(
        t,
        { client_id: publicClient, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'p', ...params },
        USER,
      );
      return result.location;
    }

    it('a public client completes the flow with S256 and no secret', async () => {
      const { verifier, challenge } = pkcePair();
      const location = await publicCode({ code_challenge: challenge, code_challenge_method: 'S256' });
      const res = await postJson(t, '/v1/oauth/token', {
        grant_type: 'authorization_code',
        code: location.searchParams.get('code'),
        client_id: publicClient,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      });
      const body = await tokens(res);
      const refreshed = await tokens(
        await postJson(t, '/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: body.refresh_token, client_id: publicClient }),
      );
      expect(refreshed.token_type).to.equal('Bearer');
    });

    it('PKCE downgrade: a public client without code_challenge is refused', async () => {
      const location = await sentBack({ client_id: publicClient, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'p' });
      expect(location.searchParams.get('error')).to.equal('invalid_request');
      expect(location.searchParams.get('error_description')).to.include('PKCE');
    });

    it('PKCE downgrade: code_challenge_method=plain is refused', async () => {
      const location = await sentBack({
        client_id: publicClient,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        state: 'p',
        code_challenge: 'a'.repeat(43),
        code_challenge_method: 'plain',
      });
      expect(location.searchParams.get('error')).to.equal('invalid_request');
      expect(location.searchParams.get('error_description')).to.include('code_challenge_method');
    });

    it('PKCE wrong verifier: invalid_grant', async () => {
      const { challenge } = pkcePair();
      const location = await publicCode({ code_challenge: challenge, code_challenge_method: 'S256' });
      const res = await postJson(t, '/v1/oauth/token', {
        grant_type: 'authorization_code',
        code: location.searchParams.get('code'),
        client_id: publicClient,
        redirect_uri: REDIRECT_URI,
        code_verifier: pkcePair().verifier,
      });
      await expectOAuthError(res, 400, 'invalid_grant', 'code_verifier does not match code_challenge');
    });

    it('PKCE downgrade at token: a challenged code without code_verifier is refused', async () => {
      const { challenge } = pkcePair();
      const location = await publicCode({ code_challenge: challenge, code_challenge_method: 'S256' });
      const res = await postJson(t, '/v1/oauth/token', {
        grant_type: 'authorization_code',
        code: location.searchParams.get('code'),
        client_id: publicClient,
        redirect_uri: REDIRECT_URI,
      });
      await expectOAuthError(res, 400, 'invalid_grant', 'code_verifier must be provided');
    });

    it('a code_verifier for a code issued without a challenge is refused (a client registered with PKCE optional)', async () => {
      const result = await authorize(t, { client_id: legacy.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'l' }, USER, {
        pkce: false,
      });
      expect(result.code, result.location.href).to.be.a('string');
      const body = {
        grant_type: 'authorization_code',
        code: result.code,
        client_id: legacy.id,
        client_secret: legacy.secret,
        redirect_uri: REDIRECT_URI,
      };
      await expectOAuthError(await postJson(t, '/v1/oauth/token', { ...body, code_verifier: pkcePair().verifier }), 400, 'invalid_grant');
    });
  });

  describe('refresh tokens', () => {
    it('refresh rotation: a rotated token presented after its successor was used is reuse, and revokes the whole grant', async () => {
      const first = await tokens(await exchange(await codeFor()));
      const second = await tokens(await refresh(first.refresh_token));
      expect(second.refresh_token).to.not.equal(first.refresh_token);
      const third = await tokens(await refresh(second.refresh_token));

      // Presenting the rotated token again, once its successor is in use, is treated as theft...
      await expectOAuthError(await refresh(first.refresh_token), 400, 'invalid_grant', 'refresh token already used');
      // ...so the current refresh token and every access token of the grant stop working too.
      await expectOAuthError(await refresh(third.refresh_token), 400, 'invalid_grant');
      expect((await userinfo(third.access_token)).status).to.equal(401);
      expect((await userinfo(first.access_token)).status).to.equal(401);
    });

    it('a rotated token presented again after the 60 s grace is reuse too, even with its successor unused', async () => {
      const first = await tokens(await exchange(await codeFor()));
      const second = await tokens(await refresh(first.refresh_token));
      offsetMs = 61 * 1000;
      await expectOAuthError(await refresh(first.refresh_token), 400, 'invalid_grant', 'refresh token already used');
      await expectOAuthError(await refresh(second.refresh_token), 400, 'invalid_grant');
      expect((await userinfo(second.access_token)).status).to.equal(401);
    });

    it('a refresh whose answer was lost is retried within the grace: a new pair, and the person stays signed in', async () => {
      const first = await tokens(await exchange(await codeFor()));
      // The answer to this refresh never reaches the client (the service died, the network broke).
      const lost = await tokens(await refresh(first.refresh_token));
      offsetMs = 30 * 1000;
      const retried = await tokens(await refresh(first.refresh_token));
      expect(retried.refresh_token).to.not.equal(lost.refresh_token);
      expect(retried.refresh_token).to.not.equal(first.refresh_token);
      expect((await userinfo(retried.access_token)).status).to.equal(200);
      // Lost again and retried again: still within the grace of the first token's use.
      offsetMs = 50 * 1000;
      const again = await tokens(await refresh(first.refresh_token));
      // The person is still signed in: the last pair works, and rotates as usual.
      const next = await tokens(await refresh(again.refresh_token));
      expect((await userinfo(next.access_token)).status).to.equal(200);
      // Once its successor is in use, the first token is spent for good: reuse, the grant goes.
      await expectOAuthError(await refresh(first.refresh_token), 400, 'invalid_grant', 'refresh token already used');
      await expectOAuthError(await refresh(next.refresh_token), 400, 'invalid_grant');
    });

    it('the successor a retry replaced is dead: presented later it counts as reuse, and the grant goes', async () => {
      const first = await tokens(await exchange(await codeFor()));
      const lost = await tokens(await refresh(first.refresh_token));
      const retried = await tokens(await refresh(first.refresh_token));
      // Only someone who intercepted the lost answer can hold its refresh token.
      await expectOAuthError(await refresh(lost.refresh_token), 400, 'invalid_grant', 'refresh token already used');
      await expectOAuthError(await refresh(retried.refresh_token), 400, 'invalid_grant');
      expect((await userinfo(retried.access_token)).status).to.equal(401);
    });

    it('a refresh token is still valid after 29 days (injected clock)', async () => {
      const first = await tokens(await exchange(await codeFor()));
      offsetMs = 29 * DAY;
      await tokens(await refresh(first.refresh_token));
    });

    it('expired refresh token: invalid_grant after 30 days (injected clock); the user must log in again', async () => {
      const first = await tokens(await exchange(await codeFor()));
      offsetMs = 30 * DAY + 1000;
      await expectOAuthError(await refresh(first.refresh_token), 400, 'invalid_grant');
    });

    it('each rotated refresh token is valid for another 30 days, until the login is a year old', async () => {
      let current = (await tokens(await exchange(await codeFor()))).refresh_token;
      for (let day = 25; day <= 350; day += 25) {
        offsetMs = day * DAY;
        current = (await tokens(await refresh(current))).refresh_token;
      }
      offsetMs = 366 * DAY;
      await expectOAuthError(await refresh(current), 400, 'invalid_grant');
    });

    it('a refresh token is bound to its client', async () => {
      const first = await tokens(await exchange(await codeFor()));
      const res = await postJson(t, '/v1/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token,
        client_id: firstParty.id,
        client_secret: firstParty.secret,
      });
      await expectOAuthError(res, 400, 'invalid_grant');
    });

    it('a scope wider than the grant is invalid_scope', async () => {
      const first = await tokens(await exchange(await codeFor()));
      await expectOAuthError(await refresh(first.refresh_token, { scope: 'self:read openid' }), 400, 'invalid_scope');
    });
  });

  describe('client authentication and errors', () => {
    it('wrong client secret: 401 invalid_client (body and Basic)', async () => {
      const code = await codeFor();
      await expectOAuthError(await exchange(code, { client_secret: 'not-the-secret' }), 401, 'invalid_client');
      const basic = await t.request('/v1/oauth/token', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${confidential.id}:wrong`).toString('base64')}`,
        },
        body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }),
      });
      expect(basic.headers.get('www-authenticate')).to.match(/^Basic /);
      await expectOAuthError(basic, 401, 'invalid_client');
      // The code survived the failed attempts: client authentication comes first.
      await tokens(await exchange(code));
    });

    it('wrong client id: 401 invalid_client', async () => {
      const code = await codeFor();
      await expectOAuthError(await exchange(code, { client_id: 'no-such-client' }), 401, 'invalid_client');
    });

    it('a confidential client without its secret: 401 invalid_client', async () => {
      const code = await codeFor();
      await expectOAuthError(await exchange(code, { client_secret: undefined }), 401, 'invalid_client');
    });

    it('missing parameters: 400 invalid_request naming each one', async () => {
      const code = await codeFor();
      const base = {
        grant_type: 'authorization_code',
        code,
        client_id: confidential.id,
        redirect_uri: REDIRECT_URI,
        client_secret: confidential.secret,
        code_verifier: verifiers.get(code),
      };
      for (const name of ['grant_type', 'code', 'redirect_uri', 'client_id'] as const) {
        const { [name]: _omitted, ...body } = base;
        const res = await postJson(t, '/v1/oauth/token', body);
        expect(res.headers.get('cache-control')).to.equal('no-store');
        await expectOAuthError(res, 400, 'invalid_request', `'${name}'`);
      }
      const noRefresh = await postJson(t, '/v1/oauth/token', {
        grant_type: 'refresh_token',
        client_id: confidential.id,
        client_secret: confidential.secret,
      });
      await expectOAuthError(noRefresh, 400, 'invalid_request', "'refresh_token'");
      // A form body (what OAuth clients send) without client_id is named the same way, at every client endpoint.
      for (const path of ['/v1/oauth/token', '/v1/oauth/revoke', '/v1/oauth/introspect']) {
        const form = await t.request(path, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: 'x',
            token: 'x',
            client_secret: confidential.secret,
          }).toString(),
        });
        expect(form.headers.get('cache-control')).to.equal('no-store');
        await expectOAuthError(form, 400, 'invalid_request', "missing required parameter 'client_id'");
      }
    });

    it('missing parameters at authorize: 400 naming them (or, once client and redirect_uri are known, sent back there)', async () => {
      const noResponseType = new URLSearchParams({ client_id: confidential.id, redirect_uri: REDIRECT_URI, state: 's' });
      const res = await t.request(`/v1/oauth/authorize?${noResponseType}`, { redirect: 'manual' });
      expect(res.status).to.equal(303);
      const location = new URL(res.headers.get('location') ?? '');
      expect(location.searchParams.get('error')).to.equal('invalid_request');
      expect(location.searchParams.get('error_description')).to.equal("missing required parameter 'response_type'");
      const noClient = new URLSearchParams({ redirect_uri: REDIRECT_URI, response_type: 'code' });
      const res2 = await t.request(`/v1/oauth/authorize?${noClient}`, { redirect: 'manual', headers: { accept: 'application/json' } });
      await expectOAuthError(res2, 400, 'invalid_request', 'client_id');
      const noRedirect = new URLSearchParams({ client_id: confidential.id, response_type: 'code' });
      const res3 = await t.request(`/v1/oauth/authorize?${noRedirect}`, { redirect: 'manual', headers: { accept: 'application/json' } });
      await expectOAuthError(res3, 400, 'invalid_request', 'redirect_uri');
    });

    it('a malformed JSON body or a non-string field is 400 invalid_request', async () => {
      const broken = await t.request('/v1/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"grant_type":',
      });
      await expectOAuthError(broken, 400, 'invalid_request', 'failed to parse the request body');
      const wrongType = await postJson(t, '/v1/oauth/token', { grant_type: 'authorization_code', code: 42, client_id: confidential.id });
      await expectOAuthError(wrongType, 400, 'invalid_request', "'code'");
    });

    it('an unknown grant type is 400 unsupported_grant_type', async () => {
      const res = await postJson(t, '/v1/oauth/token', {
        grant_type: 'password',
        client_id: confidential.id,
        client_secret: confidential.secret,
      });
      await expectOAuthError(res, 400, 'unsupported_grant_type');
    });
  });

  describe('revocation and introspection (client-authenticated)', () => {
    it('revoking a refresh token revokes the grant; introspection then reports it inactive', async () => {
      const body = await tokens(await exchange(await codeFor()));
      const auth = { client_id: confidential.id, client_secret: confidential.secret };
      const active = await postJson(t, '/v1/oauth/introspect', { token: body.refresh_token, ...auth });
      expect(active.status).to.equal(200);
      expect(await active.json()).to.include({ active: true, client_id: confidential.id, scope: 'self:read' });

      const revoked = await postJson(t, '/v1/oauth/revoke', { token: body.refresh_token, ...auth });
      expect(revoked.status).to.equal(200);
      const after = await postJson(t, '/v1/oauth/introspect', { token: body.refresh_token, ...auth });
      expect(await after.json()).to.deep.equal({ active: false });
      await expectOAuthError(await refresh(body.refresh_token), 400, 'invalid_grant');
    });

    it('introspection reports a rotated refresh token inactive and its successor active', async () => {
      const first = await tokens(await exchange(await codeFor()));
      const second = await tokens(await refresh(first.refresh_token));
      const auth = { client_id: confidential.id, client_secret: confidential.secret };
      const used = await postJson(t, '/v1/oauth/introspect', { token: first.refresh_token, ...auth });
      expect(await used.json()).to.deep.equal({ active: false });
      const current = await postJson(t, '/v1/oauth/introspect', { token: second.refresh_token, ...auth });
      expect(await current.json()).to.include({ active: true, client_id: confidential.id });
    });

    it('introspects a JWT access token for its own client only', async () => {
      const body = await tokens(await exchange(await codeFor()));
      const own = await postJson(t, '/v1/oauth/introspect', {
        token: body.access_token,
        client_id: confidential.id,
        client_secret: confidential.secret,
      });
      expect(own.status).to.equal(200);
      expect(own.headers.get('cache-control')).to.equal('no-store');
      const claims = (await own.json()) as Record<string, unknown>;
      expect(claims).to.include({ active: true, client_id: confidential.id, scope: 'self:read', token_type: 'Bearer', iss: t.url });
      const other = await postJson(t, '/v1/oauth/introspect', {
        token: body.access_token,
        client_id: firstParty.id,
        client_secret: firstParty.secret,
      });
      expect(await other.json()).to.deep.equal({ active: false });
    });

    it('introspection and revocation require client authentication', async () => {
      const res = await postJson(t, '/v1/oauth/introspect', { token: 'x', client_id: confidential.id, client_secret: 'wrong' });
      await expectOAuthError(res, 401, 'invalid_client');
      const res2 = await postJson(t, '/v1/oauth/revoke', { token: 'x' });
      await expectOAuthError(res2, 400, 'invalid_request', "'client_id'");
    });
  });

  describe('first-party clients', () => {
    it('skip the consent page', async () => {
      const result = await authorize(t, { client_id: firstParty.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'f' }, USER, {
        consent: 'deny',
      });
      // Denying would have produced an error: no consent page was shown.
      expect(result.code).to.be.a('string');
    });
  });
});
