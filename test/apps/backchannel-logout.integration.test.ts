import { expect } from 'chai';
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload } from 'jose';
import { eventually, TestReceiver } from '../helpers/receiver.js';
import { serveDemo, type ServedDemo } from '../helpers/serve.js';
import { authorize, type CookieJar, REDIRECT_URI, signInToConsole } from '../helpers/oauth.js';

/**
 * OpenID Connect Back-Channel Logout through a live `campus serve`: an app registered with
 * `campus apps create --backchannel-logout-uri` receives, at a local receiver, a logout token that
 * verifies against /v1/oauth/jwks for each of the four causes: the person signs out (the
 * end_session endpoint), ends one of their sign-ins (`campus accounts sessions end`), is disabled
 * (`campus accounts disable`), or disconnects the app (/console/connected). The webhook worker
 * sends it; a failure is retried and every attempt recorded (`campus apps logouts`).
 */

const DEMO = { email: 'hong1@gsm.hs.kr', password: 'campus-demo-password' };
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

interface Notice {
  id: string;
  clientId: string;
  sub: string;
  sid: string | null;
  cause: string;
  state: string;
  attempts: { status: number | null; ok: boolean }[];
}

describe('OAuth apps: back-channel logout tokens reach the app for each cause', function () {
  this.timeout(240_000);
  let served: ServedDemo;
  let receiver: TestReceiver;
  let app: { id: string; secret: string };
  let jwks: ReturnType<typeof createRemoteJWKSet>;

  before(async () => {
    // The first delivery fails (503): the worker retries it on the webhooks' schedule (0.2 s here).
    receiver = await new TestReceiver([503]).open();
    served = await serveDemo('backchannel_logout', { WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2' });
    const created = JSON.parse(
      await served.campus([
        'apps',
        'create',
        '--name',
        'Club attendance',
        '--redirect-uri',
        REDIRECT_URI,
        '--scope',
        'openid',
        '--scope',
        'account:read',
        '--backchannel-logout-uri',
        receiver.url,
        '--json',
      ]),
    ) as { id: string; clientSecret: string; backchannelLogoutUri: string };
    expect(created.backchannelLogoutUri).to.equal(receiver.url);
    app = { id: created.id, secret: created.clientSecret };
    jwks = createRemoteJWKSet(new URL(`${served.url}/v1/oauth/jwks`));
  });
  after(async () => {
    await served?.stop();
    await receiver?.close();
  });

  /** Signs the demo student in to the app in a fresh browser: its cookies and the ID token's claims. */
  async function signIn(): Promise<{ jar: CookieJar; idToken: JWTPayload }> {
    const result = await authorize(
      { url: served.url },
      { client_id: app.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's', scope: 'openid account:read' },
      DEMO,
    );
    expect(result.code, result.location.href).to.be.a('string');
    const res = await fetch(`${served.url}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${app.id}:${app.secret}`)}` },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: result.code ?? '',
        redirect_uri: REDIRECT_URI,
        code_verifier: result.verifier ?? '',
      }).toString(),
    });
    expect(res.status).to.equal(200);
    const idToken = decodeJwt(((await res.json()) as { id_token: string }).id_token);
    // The app finds the sign-in of a logout token in its ID tokens.
    expect(idToken['sid']).to.be.a('string');
    return { jar: result.jar, idToken };
  }

  /** The next logout token the receiver accepted, verified as an app would (signature, iss, aud, typ). */
  async function nextToken(already: number): Promise<{ claims: JWTPayload; contentType: string | undefined }> {
    const received = await eventually(() => receiver.delivered.length > already && receiver.delivered[already], 20_000, 'a logout token');
    expect(received.headers['content-type']).to.equal('application/x-www-form-urlencoded');
    const token = new URLSearchParams(received.body).get('logout_token') ?? '';
    const { payload, protectedHeader } = await jwtVerify(token, jwks, {
      issuer: served.url,
      audience: app.id,
      typ: 'logout+jwt',
      maxTokenAge: 120,
    });
    expect(protectedHeader.kid).to.be.a('string');
    expect(payload['events']).to.deep.equal({ [EVENT]: {} });
    expect(payload).to.not.have.property('nonce');
    expect(payload.jti).to.match(/^lo_[0-9a-f]{24}$/);
    return { claims: payload, contentType: received.headers['content-type'] };
  }

  async function notices(): Promise<Notice[]> {
    return JSON.parse(await served.campus(['apps', 'logouts', app.id, '--json'])) as Notice[];
  }

  it('discovery says back-channel logout is supported, with sessions', async () => {
    const doc = (await (await fetch(`${served.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(doc).to.include({ backchannel_logout_supported: true, backchannel_logout_session_supported: true });
  });

  it('signing out at the end_session endpoint: the app gets sub and sid (a failed delivery is retried and recorded)', async () => {
    const { jar, idToken } = await signIn();
    const page = await fetch(`${served.url}/v1/oauth/logout?client_id=${app.id}`, { headers: { cookie: jar.header() } });
    const html = await page.text();
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const confirmed = await fetch(`${served.url}/v1/oauth/logout/confirm`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
    });
    expect(confirmed.status).to.equal(303);
    const { claims } = await nextToken(0);
    expect(claims).to.include({ sub: idToken.sub, sid: idToken['sid'] });
    expect(receiver.received.map((r) => r.status)).to.deep.equal([503, 200]);
    const [notice] = await notices();
    expect(notice).to.include({ clientId: app.id, sub: idToken.sub, sid: idToken['sid'], cause: 'signed_out', state: 'DELIVERED' });
    expect(notice?.attempts.map((a) => a.status)).to.deep.equal([503, 200]);
    expect(notice?.id).to.equal(claims.jti);
  });

  it('ending one sign-in (campus accounts sessions end): the app gets that sign-in’s sid', async () => {
    const { idToken } = await signIn();
    const listed = JSON.parse(await served.campus(['accounts', 'sessions', DEMO.email, '--json'])) as { sessions: { id: string }[] };
    expect(listed.sessions).to.have.length(1);
    await served.campus(['accounts', 'sessions', 'end', DEMO.email, '--id', listed.sessions[0]?.id ?? '']);
    const { claims } = await nextToken(1);
    expect(claims).to.include({ sub: idToken.sub, sid: idToken['sid'] });
    expect((await notices())[0]).to.include({ cause: 'session_ended', state: 'DELIVERED' });
  });

  it('the account disabled (campus accounts disable): the app gets its sub and the sid of the sign-in that holds it', async () => {
    const { idToken } = await signIn();
    await served.campus(['accounts', 'disable', DEMO.email]);
    try {
      const { claims } = await nextToken(2);
      expect(claims).to.include({ sub: idToken.sub, sid: idToken['sid'] });
      expect((await notices())[0]).to.include({ cause: 'account_disabled', state: 'DELIVERED' });
    } finally {
      await served.campus(['accounts', 'enable', DEMO.email]);
    }
  });

  it('the app disconnected in /console/connected: the app gets its sub and sid', async () => {
    const { idToken } = await signIn();
    const console = await signInToConsole({ url: served.url }, DEMO, '/console/connected');
    const revoked = await console.post(`/console/connected/${app.id}/revoke`, {});
    expect(revoked.res.status).to.equal(303);
    const { claims } = await nextToken(3);
    expect(claims).to.include({ sub: idToken.sub, sid: idToken['sid'] });
    expect((await notices())[0]).to.include({ cause: 'app_revoked', state: 'DELIVERED' });
    // Four causes, four tokens: nothing else was sent.
    expect(receiver.delivered).to.have.length(4);
    expect(new Set((await notices()).map((n) => n.cause))).to.deep.equal(
      new Set(['signed_out', 'session_ended', 'account_disabled', 'app_revoked']),
    );
  });
});
