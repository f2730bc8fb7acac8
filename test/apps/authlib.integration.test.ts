import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { authorize, CookieJar } from '../helpers/oauth.js';
import { eventually } from '../helpers/receiver.js';
import { serveDemo, type ServedDemo } from '../helpers/serve.js';

/**
 * Python's Authlib (Debian's python3-authlib, in a Flask app: test/helpers/authlib-app.py) against
 * a live `campus serve`: the code flow with PKCE, the ID token validated against the JWKS, userinfo
 * and a refresh, as Authlib's Flask integration does them. The test is the person's browser.
 * Needs /usr/bin/python3 with python3-authlib, python3-flask and python3-requests (.ci/run installs them).
 */

const DEMO = { email: 'hong1@gsm.hs.kr', password: 'campus-demo-password' };

describe('OAuth apps: Authlib (Python, Flask) signs a person in', function () {
  this.timeout(120_000);
  let served: ServedDemo;
  let flask: ChildProcess;
  let app = '';
  let output = '';

  before(async () => {
    served = await serveDemo('authlib');
    const port = await freePort();
    app = `http://127.0.0.1:${port}`;
    const created = JSON.parse(
      await served.campus(['apps', 'create', '--name', 'Flask app', '--redirect-uri', `${app}/callback`, '--json']),
    ) as { id: string; clientSecret: string };
    flask = spawn('/usr/bin/python3', ['test/helpers/authlib-app.py'], {
      env: {
        PATH: process.env['PATH'] ?? '',
        ISSUER: served.url,
        CLIENT_ID: created.id,
        CLIENT_SECRET: created.clientSecret,
        PORT: String(port),
        // Authlib refuses plain http unless told; the test serves on a loopback address.
        AUTHLIB_INSECURE_TRANSPORT: '1',
      },
    });
    flask.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    flask.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    await eventually(async () => (await fetch(`${app}/ready`).catch(() => undefined))?.ok, 20_000, `the Flask app (${output})`);
  });
  after(async () => {
    flask?.kill();
    await served?.stop();
  });

  it('code flow with PKCE: the ID token validates against the JWKS, userinfo and refresh work', async () => {
    const jar = new CookieJar();
    const login = await fetch(`${app}/login`, { redirect: 'manual' });
    jar.store(login);
    expect(login.status).to.equal(302);
    const authorization = new URL(login.headers.get('location') ?? '');
    expect(authorization.searchParams.get('scope')).to.equal('openid profile email');
    expect(authorization.searchParams.get('code_challenge_method')).to.equal('S256');
    expect(authorization.searchParams.get('nonce')).to.be.a('string');

    const walk = await authorize({ url: served.url }, Object.fromEntries(authorization.searchParams), DEMO);
    expect(walk.location.origin).to.equal(app);
    const callback = await fetch(walk.location, { headers: { cookie: jar.header() } });
    const text = await callback.text();
    expect(callback.status, `${text}\n${output}`).to.equal(200);
    const result = JSON.parse(text) as {
      id_token_claims: Record<string, unknown>;
      userinfo: Record<string, unknown>;
      scope: string;
      refreshed: boolean;
    };
    expect(result.id_token_claims).to.include({
      iss: served.url,
      name: '홍건우',
      email: DEMO.email,
      email_verified: true,
      preferred_username: 'hong1',
      nonce: authorization.searchParams.get('nonce'),
    });
    expect(result.userinfo).to.deep.equal({
      sub: result.id_token_claims['sub'],
      email: DEMO.email,
      email_verified: true,
      name: '홍건우',
      preferred_username: 'hong1',
    });
    expect(result.refreshed).to.equal(true);
  });
});
