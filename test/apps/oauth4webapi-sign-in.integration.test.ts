import { expect } from 'chai';
import * as oauth from 'oauth4webapi';
import { approveDevice } from '../helpers/device.js';
import { authorize, REDIRECT_URI } from '../helpers/oauth.js';
import { serveDemo, type ServedDemo } from '../helpers/serve.js';

/**
 * oauth4webapi (panva's low-level OAuth 2.0 / OpenID Connect client, which openid-client and
 * Auth.js build on), used as its documentation shows, against a live `campus serve`: discovery, the
 * authorization code with PKCE and an ID token, userinfo, refresh, and the device flow (RFC 8628)
 * with a person approving the code at /device. Plain http is allowed only because the test serves
 * on a loopback address.
 */

const DEMO = { email: 'hong1@gsm.hs.kr', password: 'campus-demo-password' };
const HTTP = { [oauth.allowInsecureRequests]: true } as const;

describe('OAuth apps: oauth4webapi signs in with the code (PKCE), refresh and device flows', function () {
  this.timeout(120_000);
  let served: ServedDemo;
  let as: oauth.AuthorizationServer;

  before(async () => {
    served = await serveDemo('oauth4webapi_sign_in');
    const issuer = new URL(served.url);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, HTTP));
  });
  after(() => served?.stop());

  async function createApp(args: string[]): Promise<{ id: string; clientSecret: string | null }> {
    return JSON.parse(await served.campus(['apps', 'create', '--name', 'oauth4webapi app', ...args, '--json'])) as {
      id: string;
      clientSecret: string | null;
    };
  }

  it('authorization code with PKCE: validated ID token with the standard claims, userinfo, refresh', async () => {
    const app = await createApp(['--redirect-uri', REDIRECT_URI]);
    const client: oauth.Client = { client_id: app.id };
    const clientAuth = oauth.ClientSecretBasic(app.clientSecret ?? '');
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const walk = await authorize(
      { url: served.url },
      {
        client_id: app.id,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        // The library's usual request: OpenID Connect's standard scopes, which the operator's app allows by default.
        scope: 'openid profile email',
        state,
        nonce,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      },
      DEMO,
    );
    const params = oauth.validateAuthResponse(as, client, walk.location, state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, REDIRECT_URI, verifier, HTTP);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: nonce, requireIdToken: true });
    const claims = oauth.getValidatedIdTokenClaims(tokens);
    expect(claims).to.include({
      iss: served.url,
      aud: app.id,
      name: '홍건우',
      email: DEMO.email,
      email_verified: true,
      preferred_username: 'hong1',
    });

    const userinfo = await oauth.processUserInfoResponse(
      as,
      client,
      claims?.sub ?? '',
      await oauth.userInfoRequest(as, client, tokens.access_token, HTTP),
    );
    expect(userinfo).to.deep.equal({
      sub: claims?.sub,
      email: DEMO.email,
      email_verified: true,
      name: '홍건우',
      preferred_username: 'hong1',
    });

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token ?? '', HTTP),
    );
    expect(refreshed.access_token).to.be.a('string').and.not.equal(tokens.access_token);
    expect(refreshed.refresh_token).to.be.a('string').and.not.equal(tokens.refresh_token);
  });

  it('device flow: a public device app polls (authorization_pending) until the person approves at /device, then gets its tokens', async () => {
    const app = await createApp(['--public', '--grant', 'device', '--scope', 'openid', '--scope', 'profile']);
    const client: oauth.Client = { client_id: app.id };
    const none = oauth.None();
    expect(as.device_authorization_endpoint).to.equal(`${served.url}/v1/oauth/device/auth`);
    const started = await oauth.processDeviceAuthorizationResponse(
      as,
      client,
      await oauth.deviceAuthorizationRequest(as, client, none, { scope: 'openid profile' }, HTTP),
    );
    expect(started.verification_uri).to.equal(`${served.url}/device`);

    const early = await oauth
      .processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, none, started.device_code, HTTP))
      .catch((err: unknown) => err);
    expect(early).to.be.instanceOf(oauth.ResponseBodyError);
    expect((early as oauth.ResponseBodyError).error).to.equal('authorization_pending');

    const walk = await approveDevice(served.url, started.user_code, DEMO);
    expect(walk.lastStatus).to.equal(200);

    const tokens = await oauth.processDeviceCodeResponse(
      as,
      client,
      await oauth.deviceCodeGrantRequest(as, client, none, started.device_code, HTTP),
    );
    expect(oauth.getValidatedIdTokenClaims(tokens)).to.include({ aud: app.id, name: '홍건우' });
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, none, tokens.refresh_token ?? '', HTTP),
    );
    expect(refreshed.access_token).to.be.a('string');
  });
});
