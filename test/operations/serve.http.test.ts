import { expect } from 'chai';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { connect } from 'node:net';
import { buildTestApp } from '../helpers/app.js';
import { runCampus, startCampus } from '../helpers/cli.js';
import { createTestDatabase, testDatabaseUri } from '../helpers/database.js';
import { expectEnvelope } from '../helpers/expect.js';
import { PRODUCTION_ENV } from '../helpers/production.js';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { AppService } from '../../src/oauth/apps.js';
import { generateJwks, pkcePair } from '../helpers/oauth.js';

/** A production environment that passes start-up checks (only the data surface is built). */
const PRODUCTION = { ...PRODUCTION_ENV, USERINFO_URL: 'https://auth.school.test', OAUTH_JWKS: '{"keys":[]}' };

/** Starts `campus serve` as a real process and waits for its start-up line. */
async function startServe(env: Record<string, string>): Promise<{ child: ChildProcessWithoutNullStreams; url: string }> {
  const campus = await startCampus(env, ['serve', '--json']);
  return { child: campus.child, url: (JSON.parse(campus.firstLine) as { url: string }).url };
}

describe('operations: campus serve stopping, behind TLS and refusing a bad environment', function () {
  this.timeout(30000);

  it('SIGTERM stops accepting, finishes the request in flight, then exits 0', async () => {
    const port = await freePort();
    const { child } = await startServe({ MONGODB_URI: testDatabaseUri('sigterm'), PORT: String(port), LOG_LEVEL: 'silent' });
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));

    // A POST whose body is only half sent is a request in flight inside the handler.
    const body = JSON.stringify({ query: '{ __typename }' });
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let response = '';
    socket.on('data', (chunk) => (response += chunk.toString()));
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-API-KEY: 00000000-0000-4000-8000-000000000000\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));

    const refused = await fetch(`http://127.0.0.1:${port}/v1/health`).then(
      () => 'accepted',
      () => 'refused',
    );
    expect(refused).to.equal('refused');

    socket.write(body.slice(5));
    const code = await exited;
    // The unknown key earns a 401, which proves the in-flight request ran to completion.
    expect(response).to.match(/^HTTP\/1\.1 401 Unauthorized/);
    expect(code).to.equal(0);
  });

  it('production refuses plain HTTP, and accepts TLS reported by a trusted proxy', async () => {
    const db = await createTestDatabase('tls');
    const env = { ...PRODUCTION, OAUTH_JWKS: await generateJwks(), TRUSTED_PROXIES: '127.0.0.1' };
    const t = await buildTestApp('tls', { db, env, surfaces: ['data'] });
    try {
      await expectEnvelope(await t.request('/v1/health'), 403, 'FORBIDDEN', 'HTTPS is required');
      await expectEnvelope(await t.request('/v1/health', { headers: { 'X-Forwarded-Proto': 'http' } }), 403, 'FORBIDDEN');
      const viaProxy = await t.request('/v1/health', { headers: { 'X-Forwarded-Proto': 'https' } });
      expect(viaProxy.status).to.equal(200);
    } finally {
      await t.close();
      await db.drop();
    }
  });

  it("production: Strict-Transport-Security on every answer (data API, oidc-provider's own, login page, userinfo)", async () => {
    const db = await createTestDatabase('hsts');
    const env = { ...PRODUCTION, OAUTH_JWKS: await generateJwks(), TRUSTED_PROXIES: '127.0.0.1' };
    const t = await buildTestApp('hsts', { db, env });
    const HSTS = 'max-age=31536000; includeSubDomains';
    const tls = { 'X-Forwarded-Proto': 'https' };
    try {
      const { client } = await new AppService(db, { isProduction: true }).create({
        name: 'HSTS app',
        redirectUris: ['https://app.school.test/cb'],
      });
      const authorize = new URLSearchParams({
        client_id: client.id,
        redirect_uri: 'https://app.school.test/cb',
        response_type: 'code',
        state: 's',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      });
      const answers: [string, Response][] = [
        ['data', await t.request('/v1/health', { headers: tls })],
        ['data error', await t.request('/v1/students', { headers: tls })],
        ['discovery', await t.request('/.well-known/openid-configuration', { headers: tls })],
        ['authorize', await t.request(`/v1/oauth/authorize?${authorize}`, { headers: tls, redirect: 'manual' })],
        ['authorize error page', await t.request('/v1/oauth/authorize?client_id=nope', { headers: tls, redirect: 'manual' })],
        [
          'token',
          await t.request('/v1/oauth/token', { method: 'POST', headers: { ...tls, 'content-type': 'application/json' }, body: '{}' }),
        ],
        ['logout', await t.request('/v1/oauth/logout', { headers: tls, redirect: 'manual' })],
        ['userinfo', await t.request('/userinfo', { headers: tls })],
        ['plain http refusal', await t.request('/v1/health')],
      ];
      const interaction = answers[3]?.[1].headers.get('location') ?? '';
      answers.push(['login page', await t.request(new URL(interaction, t.url).pathname, { headers: tls })]);
      const statuses = answers.map(([name, res]) => `${name} ${res.status}`);
      expect(statuses).to.deep.equal([
        'data 200',
        'data error 401',
        'discovery 200',
        'authorize 303',
        'authorize error page 400',
        'token 400',
        'logout 200',
        'userinfo 401',
        'plain http refusal 403',
        'login page 400',
      ]);
      for (const [name, res] of answers) expect(res.headers.get('strict-transport-security'), name).to.equal(HSTS);
    } finally {
      await t.close();
      await db.drop();
    }
  });

  it('development sends no Strict-Transport-Security (plain HTTP on a developer machine)', async () => {
    const t = await buildTestApp('no_hsts');
    try {
      expect((await t.request('/v1/health')).headers.get('strict-transport-security')).to.equal(null);
      expect((await t.request('/.well-known/openid-configuration')).headers.get('strict-transport-security')).to.equal(null);
    } finally {
      await t.close();
    }
  });

  it('production ignores X-Forwarded-Proto from an untrusted address', async () => {
    const db = await createTestDatabase('tls2');
    const env = { ...PRODUCTION, OAUTH_JWKS: await generateJwks(), TRUSTED_PROXIES: '10.9.9.9' };
    const t = await buildTestApp('tls2', { db, env, surfaces: ['data'] });
    try {
      await expectEnvelope(await t.request('/v1/health', { headers: { 'X-Forwarded-Proto': 'https' } }), 403, 'FORBIDDEN');
    } finally {
      await t.close();
      await db.drop();
    }
  });

  it('an invalid environment stops the process with one message listing every problem', async () => {
    const { code, stderr } = await runCampus({ PORT: 'x', RATE_LIMIT: 'lots' }, ['serve']);
    expect(code).to.equal(1);
    expect(stderr).to.include('campus: Invalid configuration:');
    expect(stderr).to.include('  - PORT:');
    expect(stderr).to.include('  - RATE_LIMIT: must look like <requests>/<seconds>, e.g. 100/60');
  });
});
