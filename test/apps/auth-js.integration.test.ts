import { expect } from 'chai';
import { authorize, CookieJar } from '../helpers/oauth.js';
import { serveDemo, type ServedDemo } from '../helpers/serve.js';

/**
 * Auth.js (@auth/core, the engine of next-auth) configured as a generic OpenID Connect provider
 * with nothing but the issuer, the client id and its secret, against a live `campus serve`: its
 * default scopes (`openid profile email`), PKCE, the ID token's claims as the profile, and the
 * session a Next.js app reads (`/api/auth/session`) showing the person's name and email. The
 * requests go to `Auth()` as next-auth's route handler passes them; the person's browser is the
 * test (test/helpers/oauth.ts drives our login page).
 */

const DEMO = { email: 'hong1@gsm.hs.kr', password: 'campus-demo-password' };
/** Where the Next.js app would be; Auth.js builds its callback address from the request. */
const APP = 'http://127.0.0.1:3000';

/**
 * `Auth(request, config)`, the one function next-auth's route handler calls. @auth/core's type
 * declarations bring Preact's JSX types, which add the DOM library to the whole project's
 * type-check (where it clashes with Node's types), so the module is loaded by a name the compiler
 * does not follow and this function is typed here.
 */
type AuthHandler = (request: Request, config: Record<string, unknown>) => Promise<Response>;
const AUTH_CORE = '@auth/core';

describe('OAuth apps: Auth.js (next-auth) signs a person in with its defaults', function () {
  this.timeout(120_000);
  let served: ServedDemo;
  let config: Record<string, unknown>;
  let Auth: AuthHandler;

  before(async () => {
    ({ Auth } = (await import(AUTH_CORE)) as { Auth: AuthHandler });
    served = await serveDemo('auth_js');
    // An operator's app with the default scopes (which include profile and email).
    const app = JSON.parse(
      await served.campus(['apps', 'create', '--name', 'Next.js app', '--redirect-uri', `${APP}/api/auth/callback/campus`, '--json']),
    ) as { id: string; clientSecret: string; scopes: string[] };
    expect(app.scopes).to.include.members(['openid', 'profile', 'email']);
    config = {
      basePath: '/api/auth',
      secret: 'a test secret that is long enough for Auth.js',
      trustHost: true,
      providers: [{ id: 'campus', name: '학교 계정', type: 'oidc', issuer: served.url, clientId: app.id, clientSecret: app.clientSecret }],
    };
  });
  after(() => served?.stop());

  /** One request to the app's Auth.js route, with the browser's cookies; the jar keeps what it sets. */
  async function toApp(jar: CookieJar, path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('cookie', jar.header());
    const res = await Auth(new Request(path.startsWith('http') ? path : `${APP}${path}`, { ...init, headers }), config);
    jar.store(res);
    return res;
  }

  it('sign in with the defaults: the session shows the name and email from the ID token', async () => {
    const jar = new CookieJar();
    const { csrfToken } = (await (await toApp(jar, '/api/auth/csrf')).json()) as { csrfToken: string };
    const signIn = await toApp(jar, '/api/auth/signin/campus', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrfToken, callbackUrl: `${APP}/dashboard` }).toString(),
    });
    expect(signIn.status).to.equal(302);
    const authorization = new URL(signIn.headers.get('location') ?? '');
    expect(authorization.origin + authorization.pathname).to.equal(`${served.url}/v1/oauth/authorize`);
    expect(authorization.searchParams.get('scope')).to.equal('openid profile email');
    expect(authorization.searchParams.get('code_challenge_method')).to.equal('S256');

    // The person's browser at the school: our login and consent pages, then back to the app.
    const walk = await authorize({ url: served.url }, Object.fromEntries(authorization.searchParams), DEMO);
    expect(walk.location.origin).to.equal(APP);
    expect(walk.pages.some((page) => page.includes('<code>profile</code>') && page.includes('<code>email</code>'))).to.equal(true);

    const callback = await toApp(jar, walk.location.href);
    expect(callback.status, await callback.clone().text()).to.equal(302);
    expect(callback.headers.get('location')).to.equal(`${APP}/dashboard`);

    const session = (await (await toApp(jar, '/api/auth/session')).json()) as { user?: Record<string, unknown>; expires?: string };
    expect(session.user).to.deep.equal({ name: '홍건우', email: DEMO.email });
    expect(session.expires).to.be.a('string');
  });
});
