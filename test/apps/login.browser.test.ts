import { expect } from 'chai';
import type { Server } from 'node:http';
import * as oidc from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, startCallback } from '../helpers/browser.js';
import { buildStudent, insertSchool } from '../helpers/factories.js';
import { createAccount, createClient } from '../helpers/oauth.js';

/**
 * The whole flow with a standard relying party (openid-client) as the client and the login
 * page driven in headless Chromium (Debian's `chromium`), as a confidential client and as a
 * public client, both with PKCE. The log of the whole flow must hold none of its secrets.
 */

const USER = { email: 'choi@school.test', password: 'choi browser pw' };

describe('OAuth apps: login in a browser with openid-client', function () {
  this.timeout(60000);
  let t: TestApp;
  let browser: Browser;
  let redirectUri: string;
  let callbackServer: Server;

  before(async () => {
    t = await buildTestApp('oauth_browser');
    ({ server: callbackServer, redirectUri } = await startCallback());
    await insertSchool(t.db, { students: [buildStudent({ _id: 11, email: USER.email, name: '최지우' })] });
    await createAccount(t.db, USER.email, USER.password);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    callbackServer.close();
    await t.close();
  });

  /** Opens the authorization URL, runs the login steps, returns the address the client was sent to. */
  async function inBrowser(
    url: URL,
    locale: string,
    steps: (page: Page) => Promise<void>,
  ): Promise<{ callback: URL; consoleErrors: string[] }> {
    const context = await browser.newContext({ locale });
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    const isCallback = (url: URL) => url.href.startsWith(`${redirectUri}?`);
    try {
      await page.goto(url.href);
      await steps(page);
      await page.waitForURL(isCallback);
      return { callback: new URL(page.url()), consoleErrors };
    } finally {
      await context.close();
    }
  }

  it('confidential client: openid-client + Chromium login (keyboard only) and consent, refresh, userinfo; nothing secret in the log', async () => {
    const { client, secret } = await createClient(t.db, { name: 'Club Manager', redirectUris: [redirectUri] });
    const clientSecret = secret ?? '';
    const config = await oidc.discovery(new URL(t.url), client.id, clientSecret, oidc.ClientSecretPost(clientSecret), {
      execute: [oidc.allowInsecureRequests],
    });
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    // Confidential clients use PKCE too (required by default, RFC 9700).
    const verifier = oidc.randomPKCECodeVerifier();
    const challenge = await oidc.calculatePKCECodeChallenge(verifier);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid self:read',
      state,
      nonce,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });

    const { callback, consoleErrors } = await inBrowser(url, 'ko-KR', async (page) => {
      await page.waitForSelector('html[lang="ko"]');
      expect(await page.title()).to.equal('로그인 · 광주소프트웨어마이스터고등학교');
      // The email field has focus on arrival; the whole form works from the keyboard.
      expect(await page.evaluate('document.activeElement && document.activeElement.id')).to.equal('f-email');
      await page.keyboard.type(USER.email);
      await page.keyboard.press('Tab');
      await page.keyboard.type(USER.password);
      await page.keyboard.press('Enter');
      await page.waitForSelector('h1:has-text("권한 요청")');
      expect(await page.textContent('ul')).to.include('내 학생 정보 읽기');
      await page.getByRole('button', { name: '허용' }).click();
    });
    expect(consoleErrors, 'no CSP or other console errors on our pages').to.deep.equal([]);
    const code = callback.searchParams.get('code') ?? '';
    expect(callback.searchParams.get('iss')).to.equal(t.url);

    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    expect(tokens.token_type).to.equal('bearer');
    expect(tokens.expires_in).to.equal(3600);
    expect(tokens.scope).to.equal('self:read');
    const sub = tokens.claims()?.sub ?? '';
    const info = await oidc.fetchUserInfo(config, tokens.access_token, sub);
    expect(info).to.include({ sub, email: USER.email, isStudent: true });

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token ?? '');
    expect(refreshed.refresh_token).to.not.equal(tokens.refresh_token);
    const again = await oidc.fetchUserInfo(config, refreshed.access_token, sub);
    expect(again.sub).to.equal(sub);

    const introspection = await oidc.tokenIntrospection(config, refreshed.access_token);
    expect(introspection.active).to.equal(true);
    await oidc.tokenRevocation(config, refreshed.refresh_token ?? '');
    await expectRefused(() => oidc.fetchUserInfo(config, refreshed.access_token, sub));

    const log = t.logText();
    expect(log).to.include('"path":"/v1/oauth/token"');
    const secrets = {
      password: USER.password,
      clientSecret,
      code,
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token ?? '',
      idToken: tokens.id_token ?? '',
      refreshedAccessToken: refreshed.access_token,
      refreshedRefreshToken: refreshed.refresh_token ?? '',
    };
    for (const [name, value] of Object.entries(secrets)) {
      expect(value.length, name).to.be.greaterThan(8);
      expect(log.includes(value), `the log holds the ${name}`).to.equal(false);
    }
  });

  it('public client: openid-client with PKCE (S256) + Chromium login in English, refresh, userinfo', async () => {
    const { client } = await createClient(t.db, { name: 'Campus Mobile', redirectUris: [redirectUri], public: true, firstParty: true });
    const config = await oidc.discovery(new URL(t.url), client.id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const challenge = await oidc.calculatePKCECodeChallenge(verifier);
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'self:read',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });

    const { callback } = await inBrowser(url, 'en-US', async (page) => {
      await page.waitForSelector('html[lang="en"]');
      await page.getByLabel('Email').fill(USER.email);
      await page.getByLabel('Password').fill(USER.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      // First-party: no consent page; the browser goes straight back to the client.
    });

    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      idTokenExpected: false,
    });
    expect(tokens.scope).to.equal('self:read');
    const info = await oidc.fetchUserInfo(config, tokens.access_token, oidc.skipSubjectCheck);
    expect(info).to.include({ email: USER.email, isStudent: true });
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token ?? '');
    const again = await oidc.fetchUserInfo(config, refreshed.access_token, info.sub);
    expect(again.email).to.equal(USER.email);
    const latest = await oidc.refreshTokenGrant(config, refreshed.refresh_token ?? '');
    // A rotated refresh token whose successor is in use is refused, and its reuse ends the grant.
    await expectRefused(() => oidc.refreshTokenGrant(config, tokens.refresh_token ?? ''));
    await expectRefused(() => oidc.fetchUserInfo(config, latest.access_token, info.sub));
  });
});

async function expectRefused(fn: () => Promise<unknown>): Promise<void> {
  let failed = false;
  try {
    await fn();
  } catch {
    failed = true;
  }
  expect(failed, 'the request should have been refused').to.equal(true);
}
