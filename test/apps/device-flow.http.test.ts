import { expect } from 'chai';
import { decodeJwt } from 'jose';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import {
  approveDevice,
  DEVICE_GRANT,
  expireDeviceCode,
  openDevicePage,
  pollDeviceToken,
  postDevice,
  requestDeviceCode,
  seedDeviceApp,
  xsrfOf,
} from '../helpers/device.js';
import { expectOAuthError } from '../helpers/expect.js';
import { createClient } from '../helpers/oauth.js';

/**
 * Device sign-in (RFC 8628) over HTTP: a device app starts at the device authorization endpoint,
 * a person types the code at /device (our pages, Korean first), signs in and consents, and the
 * device's polling gets its tokens. Codes are single use and expire; guesses are limited. The
 * Chromium walk at phone width is test/apps/device-flow.browser.test.ts.
 */

const USER = { email: 'device.user@school.test', password: 'device user password' };

interface DeviceStart {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
}

describe('OAuth apps: device sign-in (RFC 8628) at /device', () => {
  let t: TestApp;
  let device: string;
  let browserOnly: string;

  before(async () => {
    t = await buildTestApp('oauth_device');
    // A cafeteria screen.
    device = await seedDeviceApp(
      t.db,
      { id: 5, name: '이도현', ...USER },
      { name: '급식 화면', scopes: ['openid', 'profile', 'account:read'] },
    );
    browserOnly = (await createClient(t.db, { name: 'Browser app', public: true })).client.id;
  });
  after(() => t.close());

  const start = (clientId = device, scope = 'openid profile account:read') =>
    requestDeviceCode(t, clientId, scope, { 'user-agent': 'campus-cli/1.0' });
  const poll = (deviceCode: string) => pollDeviceToken(t, deviceCode, device);

  it('discovery names the device authorization endpoint and the grant', async () => {
    const doc = (await (await t.request('/.well-known/openid-configuration')).json()) as Record<string, unknown>;
    expect(doc['device_authorization_endpoint']).to.equal(`${t.url}/v1/oauth/device/auth`);
    expect(doc['grant_types_supported']).to.include(DEVICE_GRANT);
  });

  it('a device app gets a short user code and /device; the device waits (authorization_pending) until the person is done', async () => {
    const res = await start();
    expect(res.status).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const body = (await res.json()) as DeviceStart;
    expect(Object.keys(body).sort()).to.deep.equal([
      'device_code',
      'expires_in',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
    ]);
    expect(body.user_code).to.match(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(body.verification_uri).to.equal(`${t.url}/device`);
    expect(body.verification_uri_complete).to.equal(`${t.url}/device?user_code=${body.user_code}`);
    expect(body.expires_in).to.equal(600);
    await expectOAuthError(await poll(body.device_code), 400, 'authorization_pending');
  });

  it('the person types the code, sees the app and the code, signs in and consents; the device gets tokens, once', async () => {
    const started = (await (await start()).json()) as DeviceStart;
    const walk = await approveDevice(t.url, started.user_code.toLowerCase().replace('-', ''), USER);
    const [form, confirm] = walk.pages;
    expect(form).to.include('<html lang="ko">');
    expect(form).to.include('<label for="f-user_code">기기에 보이는 코드</label>');
    expect(confirm).to.include('급식 화면');
    expect(confirm).to.include(`<code id="user-code">${started.user_code}</code>`);
    expect(confirm).to.include('요청한 곳: 127.0.0.1');
    const consent = walk.pages.find((p) => p.includes('name="decision"')) ?? '';
    expect(consent).to.include('<code>profile</code>');
    expect(consent).to.include('<code>account:read</code>');
    expect(walk.lastStatus).to.equal(200);
    expect(walk.last).to.include('급식 화면 앱에 로그인했습니다.');

    const res = await poll(started.device_code);
    expect(res.status).to.equal(200);
    const tokens = (await res.json()) as {
      access_token: string;
      refresh_token: string;
      id_token: string;
      scope: string;
      token_type: string;
    };
    expect(tokens.token_type).to.equal('Bearer');
    expect(decodeJwt(tokens.id_token)).to.include({ aud: device, name: '이도현', preferred_username: 'device.user' });
    const userinfo = await t.request('/userinfo', { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(((await userinfo.json()) as Record<string, unknown>)['email']).to.equal(USER.email);
    const refreshed = await t.request('/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: device }).toString(),
    });
    expect(refreshed.status).to.equal(200);

    // Single use: the user code reads as used; the device code presented again is a replay, which
    // ends what it gave (as a second use of an authorization code does).
    const again = await approveDevice(t.url, started.user_code, USER);
    expect(again.lastStatus).to.equal(400);
    expect(again.last).to.include('이미 쓴 코드입니다.');
    await expectOAuthError(await poll(started.device_code), 400, 'invalid_grant', 'device code already consumed');
    const revoked = await t.request('/userinfo', { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(revoked.status).to.equal(401);
  });

  it('a wrong code is refused at its field (400) and can be typed again', async () => {
    const page = await openDevicePage(t.url);
    expect(page.res.status).to.equal(200);
    const wrong = await postDevice(t.url, page.jar, { xsrf: xsrfOf(page.html), user_code: 'BCDF-GHJK' });
    expect(wrong.res.status).to.equal(400);
    expect(wrong.html).to.include('<p class="field-error" id="f-user_code-error">코드가 맞지 않습니다.');
    expect(wrong.html).to.include('value="BCDF-GHJK"');
    const empty = await postDevice(t.url, page.jar, { xsrf: xsrfOf(wrong.html), user_code: '' });
    expect(empty.res.status).to.equal(400);
    expect(empty.html).to.include('기기에 보이는 코드를 입력하세요.');
    // The form's anti-forgery token is the session's: a form from elsewhere is refused.
    const forged = await postDevice(t.url, page.jar, { xsrf: 'forged', user_code: 'BCDF-GHJK' });
    expect(forged.res.status).to.equal(400);
  });

  it('an expired code is refused at /device, and the device is told expired_token', async () => {
    const started = (await (await start()).json()) as DeviceStart;
    await expireDeviceCode(t.db, started.user_code);
    const walk = await approveDevice(t.url, started.user_code, USER);
    expect(walk.lastStatus).to.equal(400);
    expect(walk.last).to.include('코드가 만료되었습니다.');
    await expectOAuthError(await poll(started.device_code), 400, 'expired_token');
  });

  it('cancelling on the confirmation page tells the device access_denied', async () => {
    const started = (await (await start()).json()) as DeviceStart;
    const page = await openDevicePage(t.url, undefined, '?lang=en');
    const confirm = await postDevice(t.url, page.jar, { xsrf: xsrfOf(page.html), user_code: started.user_code });
    expect(confirm.html).to.include('<html lang="en">');
    expect(confirm.html).to.include('Sign in this device?');
    const cancelled = await postDevice(t.url, page.jar, { xsrf: xsrfOf(confirm.html), user_code: started.user_code, abort: 'yes' });
    expect(cancelled.res.status).to.equal(200);
    expect(cancelled.html).to.include('Device sign-in cancelled.');
    await expectOAuthError(await poll(started.device_code), 400, 'access_denied');
  });

  it('an app not registered for device sign-in is refused at the device authorization endpoint', async () => {
    await expectOAuthError(await start(browserOnly, 'openid'), 400, 'invalid_request', `${DEVICE_GRANT} is not allowed for this client`);
  });
});

describe('OAuth apps: guessing device sign-in codes is limited', () => {
  let t: TestApp;
  let device: string;

  before(async () => {
    t = await buildTestApp('oauth_device_guesses');
    device = (await createClient(t.db, { name: 'Screen', public: true, redirectUris: [], grants: ['device'], scopes: ['openid'] })).client
      .id;
  });
  after(() => t.close());

  it('per address: 30 codes that find nothing, then 429 with Retry-After and no form; a right code costs nothing', async () => {
    const start = () => requestDeviceCode(t, device, 'openid');
    const page = await openDevicePage(t.url);
    let xsrf = xsrfOf(page.html);
    for (let i = 0; i < 30; i++) {
      const guess = await postDevice(t.url, page.jar, { xsrf, user_code: `BCDF-GH${'BCDFGHJKLMNPQRSTVWXZ'[i % 20] ?? 'B'}K` });
      expect(guess.res.status, `guess ${i}`).to.equal(400);
      xsrf = xsrfOf(guess.html);
      if (i === 10) {
        // A right code in between gives its point back.
        const started = (await (await start()).json()) as DeviceStart;
        const right = await postDevice(t.url, page.jar, { xsrf, user_code: started.user_code });
        expect(right.res.status).to.equal(200);
        xsrf = xsrfOf(right.html);
      }
    }
    const refused = await postDevice(t.url, page.jar, { xsrf, user_code: 'BCDF-GHJK' });
    expect(refused.res.status).to.equal(429);
    expect(Number(refused.res.headers.get('retry-after'))).to.be.within(1, 600);
    expect(refused.html).to.include('잘못된 코드를 너무 많이 입력했습니다.');
    expect(refused.html).to.not.include('name="user_code"');
  });
});
