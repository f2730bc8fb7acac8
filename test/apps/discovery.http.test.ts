import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { expect } from 'chai';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import { API_SCOPES } from '../../src/data/keys/store.js';
import { AppService } from '../../src/oauth/apps.js';
import { OAUTH_SCOPES } from '../../src/oauth/constants.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { TEST_POLICY } from '../helpers/factories.js';
import { authorize, createAccount, REDIRECT_URI } from '../helpers/oauth.js';
import { buildStudent, insertSchool } from '../helpers/factories.js';

/**
 * The discovery documents say what the server does, and nothing it does not (RFC 8414, OpenID
 * Connect Discovery, RFC 9728). Each member of the authorization server's metadata is checked by
 * asking the server, not against a list written here: every advertised endpoint answers, and for
 * grants, client authentication methods, response types and modes, PKCE methods and scopes, a
 * wide set of candidates is tried, each supported exactly when it is advertised. A member this
 * test has no probe for fails it, so a new one is checked when it appears. The protected
 * resources' metadata is checked the same way.
 */

const USER = { email: 'discovery@school.test', password: 'discovery passphrase 42' };

/** Grant types of the IANA registry and of oidc-provider's features: each is supported exactly when advertised. */
const GRANT_CANDIDATES = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'password',
  'implicit',
  'urn:ietf:params:oauth:grant-type:device_code',
  'urn:ietf:params:oauth:grant-type:jwt-bearer',
  'urn:ietf:params:oauth:grant-type:saml2-bearer',
  'urn:ietf:params:oauth:grant-type:token-exchange',
  'urn:openid:params:grant-type:ciba',
  'urn:ietf:params:oauth:grant-type:pre-authorized_code',
];
const RESPONSE_TYPE_CANDIDATES = [
  'code',
  'token',
  'id_token',
  'code id_token',
  'code token',
  'id_token token',
  'code id_token token',
  'none',
];
const RESPONSE_MODE_CANDIDATES = ['query', 'fragment', 'form_post', 'jwt', 'query.jwt', 'fragment.jwt', 'form_post.jwt', 'web_message'];
const AUTH_METHOD_CANDIDATES = [
  'client_secret_basic',
  'client_secret_post',
  'client_secret_jwt',
  'private_key_jwt',
  'tls_client_auth',
  'self_signed_tls_client_auth',
  'none',
];
/** Scopes a library may ask for unless told otherwise, beside the service's own. */
const SCOPE_CANDIDATES = ['openid', 'offline_access', 'profile', 'email', 'address', 'phone', 'made_up:read', 'ADMIN_WRITE'];
/** Claims of every JWT (RFC 7519) or of every ID token's envelope: not identity claims a provider supplies. */
const ENVELOPE_CLAIMS = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'jti', 'nonce', 'at_hash', 'c_hash', 's_hash', 'azp']);

/**
 * Members whose behavior takes a whole flow of its own (an app's server receiving a logout
 * token): proven by that feature's test, which must exist when the member is advertised.
 */
const PROVEN_ELSEWHERE: Readonly<Record<string, string>> = {
  backchannel_logout_supported: 'test/apps/backchannel-logout.integration.test.ts',
  backchannel_logout_session_supported: 'test/apps/backchannel-logout.integration.test.ts',
};

type Metadata = Record<string, unknown>;

describe('OAuth apps: discovery documents match what the server does', function () {
  this.timeout(120000);
  let t: TestApp;
  let metadata: Metadata;
  /** A confidential app of every grant the registry offers, every login scope and every data scope. */
  let everything: { id: string; secret: string };
  let publicApp: string;
  /** Members whose probe ran: at the end, every member of the metadata must be among them. */
  const probed = new Set<string>();

  const form = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    t.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });
  const errorOf = async (res: Response) => ((await res.json()) as { error?: string }).error;
  const list = (member: string): string[] => {
    probed.add(member);
    const value = metadata[member];
    expect(value, member).to.be.an('array');
    return value as string[];
  };
  /** An authorization request of the public app (PKCE, state), with `params` on top; the first answer, not followed. */
  const authorizeRequest = (params: Record<string, string>) => {
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      client_id: publicApp,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'openid',
      state: 'probe',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      ...params,
    });
    return t.request(`/v1/oauth/authorize?${query}`, { redirect: 'manual' });
  };
  /** Where an authorization request went: on to our login (`login`), or back to the app with an error (its code). */
  const outcome = async (res: Response): Promise<string> => {
    const location = res.headers.get('location');
    await res.arrayBuffer();
    if (!location) return `status ${res.status}`;
    const url = new URL(location, t.url);
    if (url.origin === t.url && url.pathname.startsWith('/v1/oauth/interaction/')) return 'login';
    const fields = new URLSearchParams(url.search || url.hash.slice(1));
    return fields.get('error') ?? `redirect ${url.href}`;
  };

  /** Signs in with the public app asking for `scope`: the scopes its tokens were given (`openid` when an ID token came). */
  const loginScopes = async (scope: string): Promise<string[]> => {
    const login = await authorize(t, { client_id: publicApp, redirect_uri: REDIRECT_URI, response_type: 'code', scope, state: 's' }, USER);
    const res = await form('/v1/oauth/token', {
      grant_type: 'authorization_code',
      code: login.code ?? '',
      client_id: publicApp,
      redirect_uri: REDIRECT_URI,
      code_verifier: login.verifier ?? '',
    });
    const tokens = (await res.json()) as { scope?: string; id_token?: string };
    return [...(tokens.scope ?? '').split(' ').filter(Boolean), ...(tokens.id_token ? ['openid'] : [])];
  };

  before(async () => {
    t = await buildTestApp('discovery', { env: { API_KEY_FAILURE_LIMIT: '1000/60' } });
    // A student, so that every standard claim (name included) has a value to carry.
    await insertSchool(t.db, { students: [buildStudent({ _id: 1, email: USER.email })] });
    await createAccount(t.db, USER.email, USER.password);
    const apps = new AppService(t.db, { isProduction: false, policy: TEST_POLICY });
    const created = await apps.create({
      name: 'Every grant',
      redirectUris: [REDIRECT_URI],
      scopes: [...OAUTH_SCOPES],
      grants: ['authorization_code', 'client_credentials'],
      dataScopes: [...API_SCOPES],
    });
    everything = { id: created.client.id, secret: created.secret ?? '' };
    publicApp = (await apps.create({ name: 'Public', redirectUris: [REDIRECT_URI], scopes: [...OAUTH_SCOPES], public: true })).client.id;
    metadata = (await (await t.request('/.well-known/openid-configuration')).json()) as Metadata;
  });
  after(async () => {
    await t?.close();
  });

  it('serves the same metadata at both well-known paths, its issuer the address asked', async () => {
    const rfc8414 = (await (await t.request('/.well-known/oauth-authorization-server')).json()) as Metadata;
    expect(rfc8414).to.deep.equal(metadata);
    probed.add('issuer');
    expect(metadata['issuer']).to.equal(t.url);
  });

  it('every advertised endpoint answers at its address', async () => {
    const endpoints = Object.keys(metadata).filter((member) => member.endsWith('_endpoint') || member === 'jwks_uri');
    expect(endpoints).to.include.members(['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'userinfo_endpoint']);
    for (const member of endpoints) {
      probed.add(member);
      const url = new URL(String(metadata[member]));
      expect(url.origin, member).to.equal(t.url);
      // Asked without credentials or parameters: a refusal of the request (4xx but 404 and 405) or a page, never "no such endpoint".
      const answers = await Promise.all(['GET', 'POST'].map((method) => fetch(url, { method, redirect: 'manual' })));
      const statuses = answers.map((res) => res.status);
      expect(
        statuses.some((status) => status < 500 && status !== 404 && status !== 405),
        `${member} ${url.pathname}: ${statuses.join(', ')}`,
      ).to.equal(true);
    }
    const jwks = (await (await fetch(String(metadata['jwks_uri']))).json()) as { keys: { kid?: string; alg?: string }[] };
    expect(jwks.keys.length).to.be.greaterThan(0);
  });

  it('grant_types_supported: exactly the grants the token endpoint takes', async () => {
    const advertised = list('grant_types_supported');
    for (const grant of GRANT_CANDIDATES) {
      const error = await errorOf(await form('/v1/oauth/token', { grant_type: grant }, basic(everything.id, everything.secret)));
      expect(error !== 'unsupported_grant_type', `${grant}: ${error}`).to.equal(advertised.includes(grant));
    }
    expect(
      advertised.every((grant) => GRANT_CANDIDATES.includes(grant)),
      `a grant without a candidate: ${advertised}`,
    ).to.equal(true);
  });

  it('token_endpoint_auth_methods_supported: exactly the ways a client authenticates', async () => {
    const advertised = list('token_endpoint_auth_methods_supported');
    const hs256 = new TextEncoder().encode(everything.secret);
    const { privateKey } = await generateKeyPair('RS256');
    const assertion = (key: Parameters<SignJWT['sign']>[0], alg: string) =>
      new SignJWT({})
        .setProtectedHeader({ alg })
        .setIssuer(everything.id)
        .setSubject(everything.id)
        .setAudience(String(metadata['token_endpoint']))
        .setJti(randomBytes(8).toString('hex'))
        .setIssuedAt()
        .setExpirationTime('1m')
        .sign(key);
    const jwtAuth = async (key: Parameters<SignJWT['sign']>[0], alg: string) => ({
      client_id: everything.id,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: await assertion(key, alg),
    });
    const cc = { grant_type: 'client_credentials', scope: 'CLUB_READ' };
    const attempts: Record<string, () => Promise<Response>> = {
      client_secret_basic: () => form('/v1/oauth/token', cc, basic(everything.id, everything.secret)),
      client_secret_post: () => form('/v1/oauth/token', { ...cc, client_id: everything.id, client_secret: everything.secret }),
      client_secret_jwt: async () => form('/v1/oauth/token', { ...cc, ...(await jwtAuth(hs256, 'HS256')) }),
      private_key_jwt: async () => form('/v1/oauth/token', { ...cc, ...(await jwtAuth(privateKey, 'RS256')) }),
      // No certificate travels over this plain-HTTP listener: the client id alone, as such a request would reach us.
      tls_client_auth: () => form('/v1/oauth/token', { ...cc, client_id: everything.id }),
      self_signed_tls_client_auth: () => form('/v1/oauth/token', { ...cc, client_id: everything.id }),
      // A public client names itself only; its (unknown) refresh token is then judged, not its authentication.
      none: () => form('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: 'unknown', client_id: publicApp }),
    };
    for (const method of AUTH_METHOD_CANDIDATES) {
      const attempt = attempts[method];
      if (!attempt) throw new Error(`no attempt for ${method}`);
      const res = await attempt();
      const error = res.status === 200 ? undefined : await errorOf(res);
      expect(error !== 'invalid_client', `${method}: ${res.status} ${error}`).to.equal(advertised.includes(method));
    }
  });

  it('response_types_supported, response_modes_supported and code_challenge_methods_supported: exactly what authorize takes', async () => {
    const types = list('response_types_supported');
    for (const type of RESPONSE_TYPE_CANDIDATES) {
      const result = await outcome(await authorizeRequest({ response_type: type }));
      expect(result === 'login', `${type}: ${result}`).to.equal(types.includes(type));
    }
    // A refusal (no PKCE) travels back in the response mode asked for, when that mode is supported.
    const modes = list('response_modes_supported');
    for (const mode of RESPONSE_MODE_CANDIDATES) {
      const res = await authorizeRequest({ response_mode: mode, code_challenge: '', code_challenge_method: '' });
      const location = res.headers.get('location') ?? '';
      const body = await res.text();
      const delivered =
        mode === 'query'
          ? location.startsWith(`${REDIRECT_URI}?`) && location.includes('error=invalid_request')
          : mode === 'fragment'
            ? location.startsWith(`${REDIRECT_URI}#`) && location.includes('error=invalid_request')
            : mode === 'form_post'
              ? body.includes(`<form method="post" action="${REDIRECT_URI}">`) && body.includes('value="invalid_request"')
              : !location.includes('unsupported_response_mode') && res.status < 400;
      expect(delivered, `${mode}: ${res.status} ${location}`).to.equal(modes.includes(mode));
    }
    const methods = list('code_challenge_methods_supported');
    for (const method of ['S256', 'plain']) {
      const result = await outcome(await authorizeRequest({ code_challenge_method: method, code_challenge: 'x'.repeat(43) }));
      expect(result === 'login', `${method}: ${result}`).to.equal(methods.includes(method));
    }
  });

  it('scopes_supported: exactly the scopes a login or a machine token is granted', async () => {
    const advertised = list('scopes_supported');
    for (const scope of new Set([...advertised, ...OAUTH_SCOPES, ...API_SCOPES, ...SCOPE_CANDIDATES])) {
      // A login: refused at authorize, or signed in and given tokens whose scope says what was granted
      // (a scope silently dropped, as oidc-provider drops offline_access, is not granted).
      const login = await outcome(await authorizeRequest({ scope }));
      const granted = login === 'login' && (await loginScopes(scope)).includes(scope);
      const machine = await form('/v1/oauth/token', { grant_type: 'client_credentials', scope }, basic(everything.id, everything.secret));
      const machineScope = machine.status === 200 ? ((await machine.json()) as { scope: string }).scope.split(' ') : [];
      if (machine.status !== 200) await machine.arrayBuffer();
      const supported = granted || machineScope.includes(scope);
      expect(supported, `${scope}: login ${login}, granted ${granted}, machine token ${machine.status}`).to.equal(
        advertised.includes(scope),
      );
    }
  });

  it('the ID token: signed with an advertised algorithm, public subjects, and only advertised claims', async () => {
    const login = await authorize(
      t,
      // max_age asks for auth_time (OpenID Connect Core 3.1.2.1): a claim supplied on request; profile
      // and email ask for the standard claims the login-scope table releases.
      {
        client_id: publicApp,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        scope: 'openid profile email',
        state: 's',
        max_age: '3600',
      },
      USER,
    );
    expect(login.location.searchParams.get('iss'), 'authorization_response_iss_parameter_supported').to.equal(t.url);
    probed.add('authorization_response_iss_parameter_supported');
    expect(metadata['authorization_response_iss_parameter_supported']).to.equal(true);
    const tokens = (await (
      await form('/v1/oauth/token', {
        grant_type: 'authorization_code',
        code: login.code ?? '',
        client_id: publicApp,
        redirect_uri: REDIRECT_URI,
        code_verifier: login.verifier ?? '',
      })
    ).json()) as { id_token: string };
    const algs = list('id_token_signing_alg_values_supported');
    expect(algs).to.include(decodeProtectedHeader(tokens.id_token).alg);
    const jwks = (await (await fetch(String(metadata['jwks_uri']))).json()) as { keys: { alg?: string }[] };
    for (const alg of algs)
      expect(
        jwks.keys.map((k) => k.alg),
        `a key for ${alg}`,
      ).to.include(alg);
    const claims = decodeJwt(tokens.id_token);
    expect(list('subject_types_supported')).to.deep.equal(['public']);
    const [account] = await t.db.models.accounts.find({ email: USER.email }).lean<{ _id: number }[]>();
    expect(claims.sub, 'a public subject: the account id').to.equal(String(account?._id));
    const supplied = Object.keys(claims).filter((claim) => !ENVELOPE_CLAIMS.has(claim));
    expect(supplied).to.include.members(['sub', 'auth_time']);
    const supported = list('claims_supported');
    for (const claim of supplied) expect(supported, `the ID token's ${claim}`).to.include(claim);
    // sid goes only to apps told of logouts with their sessions (oidc-provider's includeSid): advertised exactly then.
    const sessions =
      metadata['backchannel_logout_session_supported'] === true || metadata['frontchannel_logout_session_supported'] === true;
    expect(supported.includes('sid'), 'sid is advertised exactly when a logout with sessions is').to.equal(sessions);
    for (const claim of supported.filter((c) => !ENVELOPE_CLAIMS.has(c) && c !== 'sid'))
      expect(supplied, `claims_supported lists ${claim}: an ID token carries it`).to.include(claim);
    expect(list('claim_types_supported')).to.deep.equal(['normal']);
  });

  it('request objects and the claims parameter: refused or ignored as the metadata says', async () => {
    probed.add('request_uri_parameter_supported');
    probed.add('request_parameter_supported');
    probed.add('claims_parameter_supported');
    expect(metadata['request_uri_parameter_supported']).to.equal(false);
    expect(await outcome(await authorizeRequest({ request_uri: 'urn:example:request' }))).to.equal('request_uri_not_supported');
    expect(metadata['request_parameter_supported'] ?? false).to.equal(false);
    expect(await outcome(await authorizeRequest({ request: 'eyJhbGciOiJub25lIn0.e30.' }))).to.equal('request_not_supported');
    expect(metadata['claims_parameter_supported']).to.equal(false);
    // Not supported: a claims request is not honoured (the ID token gains nothing it asks for).
    const login = await authorize(
      t,
      {
        client_id: publicApp,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        scope: 'openid',
        state: 's',
        claims: JSON.stringify({ id_token: { email: { essential: true } } }),
      },
      USER,
    );
    const tokens = (await (
      await form('/v1/oauth/token', {
        grant_type: 'authorization_code',
        code: login.code ?? '',
        client_id: publicApp,
        redirect_uri: REDIRECT_URI,
        code_verifier: login.verifier ?? '',
      })
    ).json()) as { id_token: string };
    expect(decodeJwt(tokens.id_token)).to.not.have.property('email');
  });

  it('protected_resources: each serves its metadata (RFC 9728), naming this issuer and scopes its server reads', async () => {
    const resources = list('protected_resources');
    expect(resources).to.have.length(2);
    for (const resource of resources) {
      const url = new URL(resource);
      const path = `/.well-known/oauth-protected-resource${url.pathname.replace(/\/$/, '')}`;
      const res = await t.request(path);
      expect(res.status, path).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
      const doc = (await res.json()) as {
        resource: string;
        authorization_servers: string[];
        scopes_supported: string[];
        bearer_methods_supported: string[];
      };
      expect(doc.resource).to.equal(resource);
      expect(doc.authorization_servers).to.deep.equal([metadata['issuer']]);
      // Its scopes are ones the issuer advertises.
      expect(list('scopes_supported')).to.include.members(doc.scopes_supported);
      // Only the Authorization header carries tokens: a token in the query is no token.
      expect(doc.bearer_methods_supported).to.deep.equal(['header']);
      // The server's own 401 names this document.
      const target = url.pathname === '/' ? '/v1/clubs' : url.pathname;
      const refused = await t.request(target);
      expect(refused.status, target).to.equal(401);
      expect(refused.headers.get('www-authenticate'), target).to.include(`resource_metadata="${new URL(path, t.url).href}"`);
    }
    // The data API reads a machine token in the header, and only there.
    const token = (
      (await (
        await form('/v1/oauth/token', { grant_type: 'client_credentials', scope: 'CLUB_READ' }, basic(everything.id, everything.secret))
      ).json()) as {
        access_token: string;
      }
    ).access_token;
    expect((await t.request('/v1/clubs', { headers: { authorization: `Bearer ${token}` } })).status).to.equal(200);
    expect((await t.request(`/v1/clubs?access_token=${token}`)).status).to.equal(401);
  });

  it('members proven by a flow of their own are advertised only with the test that proves them', () => {
    for (const [member, test] of Object.entries(PROVEN_ELSEWHERE)) {
      if (!(member in metadata)) continue;
      probed.add(member);
      expect(metadata[member], member).to.equal(true);
      expect(existsSync(test), `${member} is proven by ${test}`).to.equal(true);
    }
  });

  it('has no member without a probe above', () => {
    const unchecked = Object.keys(metadata).filter((member) => !probed.has(member));
    expect(unchecked, 'metadata members no probe checked: add one to this test').to.deep.equal([]);
  });
});
