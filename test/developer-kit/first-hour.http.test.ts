import { expect } from 'chai';
import { DEV_CALLBACK_PATH } from '../../src/surfaces/web/dev-callback.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectOk } from '../helpers/expect.js';
import { authorize, createAccount, generateJwks, signInToConsole, type ConsoleSession } from '../helpers/oauth.js';
import { PRODUCTION_ENV } from '../helpers/production.js';

/**
 * The developer's first hour over HTTP: right after a key is made, a curl with that
 * key (and a client snippet) that answers; right after an app is registered, its discovery
 * address, client id and the example app's command with its secret; /dev/callback as a
 * registrable redirect address that shows the code and the token request, which works as
 * shown; and no /dev/callback in production.
 */

/** The text of a snippet on a page (its <code>, unescaped). */
function snippets(html: string): string[] {
  return [...html.matchAll(/<div class="snippet">[\s\S]*?<code id="[^"]+">([\s\S]*?)<\/code>/g)].map((m) =>
    (m[1] ?? '')
      .replace(/&#39;/g, "'")
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&'),
  );
}

async function follow(session: ConsoleSession, res: Response): Promise<{ res: Response; html: string }> {
  expect(res.status).to.equal(303);
  return session.get(res.headers.get('location') ?? '');
}

describe("developer kit: the developer's first hour, snippets in the console and /dev/callback", function () {
  this.timeout(120000);
  let t: TestApp;
  let dev: ConsoleSession;
  const person = { email: 'first@school.test', password: 'first hour of building' };

  before(async () => {
    t = await buildTestApp('first_hour');
    await createAccount(t.db, person.email, person.password);
    dev = await signInToConsole(t, person);
  });
  after(() => t?.close());

  it('a new key comes with a curl that answers with it, and a client snippet with it', async () => {
    const created = await dev.post('/console/keys', { label: 'meals', scopes: ['NEIS_READ'] });
    const page = await follow(dev, created.res);
    const key = /<code id="shown-once" class="secret-value">([^<]+)<\/code>/.exec(page.html)?.[1] ?? '';
    expect(key).to.match(/^[0-9a-f-]{36}$/);
    const [curl, client] = snippets(page.html);
    expect(curl).to.equal(`curl -s '${t.url}/v1/neis/meals' -H 'X-API-KEY: ${key}'`);
    expect(client).to.equal(
      [
        "import { createClient } from '@campus/client';",
        '',
        `const campus = createClient({ baseUrl: '${t.url}', apiKey: '${key}' });`,
        "const { data, error } = await campus.GET('/v1/neis/meals');",
        'console.log(error ?? data.data);',
      ].join('\n'),
    );
    expect(page.html).to.include('data-copy="snippet-0"').and.include('data-copy="snippet-1"');
    // The curl as written: its address and header answer.
    const [, url = '', header = ''] = /^curl -s '([^']+)' -H 'X-API-KEY: ([^']+)'$/.exec(curl ?? '') ?? [];
    await expectOk(await fetch(url, { headers: { 'X-API-KEY': header } }));
    // Shown once, with the key: the next visit has neither.
    const again = await dev.get(created.res.headers.get('location') ?? '');
    expect(again.html).not.to.include(key);
    expect(snippets(again.html)).to.deep.equal([]);
  });

  it('a new app comes with its discovery address, client id and the example app command; /dev/callback shows the code and a token request that works', async () => {
    const callback = `${t.url}${DEV_CALLBACK_PATH}`;
    const created = await dev.post('/console/apps', {
      name: 'First app',
      redirectUris: callback,
      type: 'confidential',
      scopes: ['self:read'],
    });
    const page = await follow(dev, created.res);
    const clientId = /<code id="client-id">([^<]+)<\/code>/.exec(page.html)?.[1] ?? '';
    const secret = /<code id="shown-once" class="secret-value">([^<]+)<\/code>/.exec(page.html)?.[1] ?? '';
    expect(clientId).to.not.equal('');
    const [discovery, id, example, kept] = snippets(page.html);
    expect(discovery).to.equal(`${t.url}/.well-known/openid-configuration`);
    expect(id).to.equal(clientId);
    expect(example).to.equal(
      [
        'cd examples/login-with-school',
        `CAMPUS_ISSUER='${t.url}' \\`,
        `CLIENT_ID='${clientId}' \\`,
        `CLIENT_SECRET='${secret}' \\`,
        `REDIRECT_URI='${callback}' \\`,
        `PORT=${new URL(t.url).port} npm start`,
      ].join('\n'),
    );
    // The app's page keeps the way to start (without the secret) and names /dev/callback.
    expect(kept).to.equal(example?.replace(secret, '앱의_시크릿'));
    expect(page.html).to.include(`개발 중에는 ${callback} 을 리디렉션 주소로 등록하면`);
    const metadata = (await (await fetch(discovery ?? '')).json()) as { issuer: string; token_endpoint: string };
    expect(metadata.issuer).to.equal(t.url);

    // A real login with /dev/callback as the redirect address.
    const login = await authorize(
      t,
      { client_id: clientId, redirect_uri: callback, response_type: 'code', state: 'first-state', scope: 'self:read' },
      person,
      { stopAt: (url) => url.pathname === DEV_CALLBACK_PATH },
    );
    expect(login.location.pathname).to.equal(DEV_CALLBACK_PATH);
    const shown = await fetch(login.location);
    expect(shown.status).to.equal(200);
    const html = await shown.text();
    expect(html).to.include(`<code id="code">${login.code}</code>`).and.include('<code>first-state</code>');
    const [request] = snippets(html);
    const body = /-d '(.+)'$/.exec(request ?? '')?.[1] ?? '';
    expect(request?.startsWith(`curl -s '${t.url}/v1/oauth/token' \\\n  -H 'Content-Type: application/json' \\\n  -d '`)).to.equal(true);
    // Filled in as the page says, the request gets tokens.
    const filled = body
      .replace('"CLIENT_ID"', JSON.stringify(clientId))
      .replace('"CLIENT_SECRET"', JSON.stringify(secret))
      .replace('"CODE_VERIFIER"', JSON.stringify(login.verifier));
    const tokens = await fetch(metadata.token_endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: filled });
    expect(tokens.status, await tokens.clone().text()).to.equal(200);
    expect(((await tokens.json()) as { token_type: string }).token_type).to.equal('Bearer');
  });

  it('/dev/callback: an explanation without a code, the error the server sent back, 400 naming a malformed parameter', async () => {
    const empty = await t.request(DEV_CALLBACK_PATH);
    expect(empty.status).to.equal(200);
    const emptyHtml = await empty.text();
    expect(emptyHtml).to.include('<h1>OAuth 콜백 (개발용)</h1>').and.include(`<code>${t.url}${DEV_CALLBACK_PATH}</code>`);
    const denied = await t.request(`${DEV_CALLBACK_PATH}?error=access_denied&error_description=End-User+aborted&state=x`);
    expect(denied.status).to.equal(200);
    expect(await denied.text())
      .to.include('인가 서버가 오류를 돌려보냈습니다: access_denied')
      .and.include('End-User aborted');
    const english = await t.request(`${DEV_CALLBACK_PATH}?lang=en&code=${encodeURIComponent('<script>')}`);
    expect(english.status).to.equal(400);
    expect(await english.text())
      .to.include('The code parameter is malformed.')
      .and.not.include('<script>');
  });

  it('is not there in production', async () => {
    const production = await buildTestApp('first_hour_prod', {
      env: { ...PRODUCTION_ENV, OAUTH_JWKS: await generateJwks(), TRUSTED_PROXIES: '127.0.0.1' },
    });
    try {
      const res = await production.request(`${DEV_CALLBACK_PATH}?code=abc&state=x`, { headers: { 'X-Forwarded-Proto': 'https' } });
      expect(res.status).to.equal(404);
      expect(await res.text()).to.not.include('OAuth 콜백');
    } finally {
      await production.close();
    }
  });
});
