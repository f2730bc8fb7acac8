// One whole sign-in as a browser and an app make it, in raw HTTP requests (no browser, no fetch:
// the rush's load generator must cost little CPU, bench/rush-client.ts): authorize, the login
// page, the password, the code at the app's redirect, the app's token exchange (authorization
// code with PKCE) and one userinfo request.
import { createHash, randomBytes } from 'node:crypto';
import { request, type Agent, type IncomingHttpHeaders } from 'node:http';
import { OAUTH_PATHS } from '../src/oauth/constants.js';

/** The app that people sign in to, registered on the server at `url`. */
export interface SignInApp {
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUri: string;
  readonly scope: string;
  /** Where the authorization starts, when not at our path (bare oidc-provider's is `/auth`). */
  readonly authorizePath?: string;
}

export interface Credentials {
  readonly email: string;
  readonly password: string;
}

export interface SignInOptions {
  /** Connections to the server (the caller's, so they are reused across sign-ins). */
  readonly agent: Agent;
  /** Called after each request, named by its method and path (bench/signin-ops.ts counts between them). */
  readonly afterStep?: (step: string) => Promise<void>;
}

/** A step that answered other than a sign-in expects: the step, its status, and what its page said. */
export class SignInError extends Error {
  constructor(
    readonly step: string,
    readonly status: number | null,
    detail: string,
  ) {
    super(`${step}: ${status === null ? '' : `${status} `}${detail}`.trim());
  }
}

/** How long one request may take before the sign-in counts as failed. */
const REQUEST_TIMEOUT_MS = 30_000;
/** Redirects and pages between authorize and the app's redirect: five in a sign-in without consent. */
const MAX_HOPS = 10;

/** Signs in and resolves with the milliseconds from the authorize request to the tokens. */
export async function signIn(app: SignInApp, who: Credentials, options: SignInOptions): Promise<{ tokensMs: number }> {
  const verifier = randomBytes(32).toString('base64url');
  const started = performance.now();
  const code = await codeAtRedirect(app, who, verifier, options);
  const tokens = await send(options, 'POST', new URL(OAUTH_PATHS.token, app.url), {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: app.redirectUri,
      client_id: app.clientId,
      client_secret: app.clientSecret,
      code_verifier: verifier,
    }).toString(),
  });
  const accessToken = tokens.status === 200 ? (JSON.parse(tokens.body) as { access_token?: string }).access_token : undefined;
  if (!accessToken) throw new SignInError(tokens.step, tokens.status, tokens.body.slice(0, 120));
  const tokensMs = performance.now() - started;
  const userinfo = await send(options, 'GET', new URL(OAUTH_PATHS.userinfo, app.url), {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  if (userinfo.status !== 200) throw new SignInError(userinfo.step, userinfo.status, userinfo.body.slice(0, 120));
  return { tokensMs };
}

/** Follows the authorization through the login form to the app's redirect and returns its code. */
export async function codeAtRedirect(app: SignInApp, who: Credentials, verifier: string, options: SignInOptions): Promise<string> {
  const cookies = new Map<string, string>();
  let url = new URL(app.authorizePath ?? OAUTH_PATHS.authorize, app.url);
  url.search = new URLSearchParams({
    client_id: app.clientId,
    redirect_uri: app.redirectUri,
    response_type: 'code',
    scope: app.scope,
    state: randomBytes(8).toString('base64url'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  let form: { body: string } | undefined;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const answer = await send(options, form ? 'POST' : 'GET', url, {
      headers: {
        ...(cookie ? { cookie } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded', origin: app.url } : {}),
      },
      ...(form ? { body: form.body } : {}),
    });
    for (const line of answer.headers['set-cookie'] ?? []) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const location = answer.headers.location;
    if ((answer.status === 302 || answer.status === 303) && location) {
      if (location.startsWith(app.redirectUri)) {
        const code = new URL(location).searchParams.get('code');
        if (!code) throw new SignInError(answer.step, answer.status, `the redirect carried no code: ${location.slice(0, 200)}`);
        return code;
      }
      url = new URL(location, url);
      form = undefined;
      continue;
    }
    // The login page: its form, with the password (a second page means the password was refused).
    const csrf = /name="csrf" value="([^"]+)"/.exec(answer.body)?.[1];
    const action = /<form method="post" action="([^"]+)"/.exec(answer.body)?.[1];
    if (answer.status !== 200 || form || !csrf || !action) throw new SignInError(answer.step, answer.status, pageProblem(answer.body));
    url = new URL(action, url);
    form = { body: new URLSearchParams({ csrf, email: who.email, password: who.password }).toString() };
  }
  throw new SignInError('authorize', null, `no redirect to the app after ${MAX_HOPS} requests`);
}

/** What a page that stopped the sign-in said: its alert, else its title. */
function pageProblem(html: string): string {
  const said = /role="alert"[^>]*>([^<]*)</.exec(html)?.[1] ?? /<title>([^<]*)</.exec(html)?.[1] ?? html.slice(0, 80);
  return said.trim().slice(0, 120);
}

interface Answer {
  readonly step: string;
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One request; `step` names it by method and path, a sign-in's own id in the path as `:uid`. */
async function send(
  options: SignInOptions,
  method: 'GET' | 'POST',
  url: URL,
  init: { headers: Record<string, string>; body?: string },
): Promise<Answer> {
  const step = `${method} ${url.pathname.replace(/\/[A-Za-z0-9_-]{16,}(?=\/|$)/g, '/:uid')}`;
  const answer = await new Promise<Answer>((done, fail) => {
    const req = request(url, { method, headers: init.headers, agent: options.agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ step, status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', (err) => fail(new SignInError(step, null, err.message)));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => fail(new SignInError(step, null, err.message)));
    req.end(init.body);
  });
  await options.afterStep?.(step);
  return answer;
}
