import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { exportJWK, generateKeyPair } from 'jose';
import type { Database } from '../../src/data/database.js';
import { AccountService } from '../../src/oauth/accounts.js';
import { AppService, type AppSummary, type CreateAppInput } from '../../src/oauth/apps.js';
import type { TestApp } from './app.js';

/** A minimal cookie jar for fetch (names only; the provider's cookies have distinct names). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  /** Every Set-Cookie line received, in order (to check attributes such as Expires). */
  readonly setCookieLines: string[] = [];

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      this.setCookieLines.push(line);
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

/** Creates an account (argon2id-hashed password) and returns its id. */
export async function createAccount(db: Database, email: string, password: string): Promise<number> {
  return (await new AccountService(db).create({ email, password })).id;
}

/** Registers a client; confidential by default, with the test redirect address. */
export async function createClient(
  db: Database,
  input: Partial<CreateAppInput> = {},
): Promise<{ client: AppSummary; secret: string | null }> {
  return new AppService(db, { isProduction: false }).create({ name: 'Test app', redirectUris: [REDIRECT_URI], ...input });
}

/** A PKCE verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface AuthorizeResult {
  /** The final redirect to the client (its redirect_uri with code/state/iss or an error). */
  readonly location: URL;
  readonly code: string | null;
  /** The PKCE code_verifier to send with the code (when authorize added the challenge). */
  readonly verifier: string | undefined;
  /** Statuses of every hop, in order (to check e.g. the 303s). */
  readonly statuses: number[];
  readonly jar: CookieJar;
  /** The HTML of every page answered on the way (the login form, the consent page). */
  readonly pages: string[];
}

export interface AuthorizeOptions {
  consent?: 'allow' | 'deny';
  jar?: CookieJar;
  /**
   * Every client must use PKCE unless registered with `pkce: 'optional'`, so a S256 challenge is
   * added when `params` has none; `pkce: false` sends none (a legacy client, or a refusal test).
   */
  pkce?: boolean;
  /** Tick "keep me signed in" on the login form. */
  remember?: boolean;
  /** A page answered with this status ends the walk (its HTML is the last of `pages`; `code` is null). */
  stopOn?: number;
  /** Where the redirect to the client is, when it is on our own origin (e.g. /dev/callback). */
  stopAt?: (url: URL) => boolean;
  /** The browser's User-Agent header (every request of the walk). */
  userAgent?: string;
}

/**
 * Drives the authorization endpoint like a browser without JavaScript: follows same-origin
 * redirects, fills the login form, answers the consent page, and stops at the redirect to
 * the client.
 */
export async function authorize(
  t: Pick<TestApp, 'url'>,
  params: Record<string, string>,
  user: { email: string; password: string },
  options: AuthorizeOptions = {},
): Promise<AuthorizeResult> {
  const jar = options.jar ?? new CookieJar();
  const statuses: number[] = [];
  const pages: string[] = [];
  const pkce = options.pkce !== false && params['code_challenge'] === undefined ? pkcePair() : undefined;
  const query = pkce ? { ...params, code_challenge: pkce.challenge, code_challenge_method: 'S256' } : params;
  const verifier = pkce?.verifier;
  let next: { url: string; init: RequestInit } = { url: `${t.url}/v1/oauth/authorize?${new URLSearchParams(query)}`, init: {} };
  for (let hop = 0; hop < 12; hop++) {
    const res = await fetch(next.url, {
      ...next.init,
      redirect: 'manual',
      headers: {
        ...(next.init.headers as Record<string, string>),
        cookie: jar.header(),
        ...(options.userAgent ? { 'user-agent': options.userAgent } : {}),
      },
    });
    jar.store(res);
    statuses.push(res.status);
    const location = res.headers.get('location');
    if (location) {
      const target = new URL(location, next.url);
      if (target.origin !== t.url || options.stopAt?.(target))
        return { location: target, code: target.searchParams.get('code'), verifier, statuses, jar, pages };
      await res.arrayBuffer();
      next = { url: target.href, init: {} };
      continue;
    }
    const html = await res.text();
    pages.push(html);
    if (options.stopOn !== undefined && res.status === options.stopOn)
      return { location: new URL(next.url), code: null, verifier, statuses, jar, pages };
    expect(res.status, `unexpected answer at ${next.url}: ${html.slice(-700)}`).to.equal(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '';
    const body = html.includes('name="password"')
      ? new URLSearchParams({ csrf, email: user.email, password: user.password, ...(options.remember ? { remember: 'yes' } : {}) })
      : new URLSearchParams({ csrf, decision: options.consent ?? 'allow' });
    next = {
      url: new URL(action, t.url).href,
      init: { method: 'POST', body: body.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', origin: t.url } },
    };
  }
  throw new Error('too many redirects');
}

/** POSTs JSON to a path of the test app. */
export function postJson(t: TestApp, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return t.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** A JSON Web Key Set with one private RSA signing key and its kid, as OAUTH_JWKS holds it in production. */
export async function generateJwks(kid = 'test-key-1'): Promise<string> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' }] });
}

/** A signed-in session of our consoles, driven over HTTP (no browser): GET pages, POST forms with the CSRF token. */
export class ConsoleSession {
  constructor(
    private readonly t: Pick<TestApp, 'url'>,
    readonly jar: CookieJar,
  ) {}

  /** GETs a page (no redirects followed); the body as text. */
  async get(path: string): Promise<{ res: Response; html: string }> {
    const res = await fetch(`${this.t.url}${path}`, { headers: { cookie: this.jar.header() }, redirect: 'manual' });
    this.jar.store(res);
    return { res, html: await res.text() };
  }

  /** The CSRF token of the session's forms (read from a page). */
  async csrf(): Promise<string> {
    const { html } = await this.get('/console/account');
    const token = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    if (!token) throw new Error('no CSRF token on /console/account');
    return token;
  }

  /** POSTs a form as the browser would (same origin, the session's CSRF token unless given); no redirects followed. */
  async post(path: string, fields: Record<string, string | string[]>, csrf?: string): Promise<{ res: Response; html: string }> {
    const body = new URLSearchParams();
    body.set('csrf', csrf ?? (await this.csrf()));
    for (const [name, value] of Object.entries(fields)) for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
    const res = await fetch(`${this.t.url}${path}`, {
      method: 'POST',
      headers: { cookie: this.jar.header(), 'content-type': 'application/x-www-form-urlencoded', origin: this.t.url },
      body: body.toString(),
      redirect: 'manual',
    });
    this.jar.store(res);
    return { res, html: await res.text() };
  }
}

/**
 * Signs in to our consoles over HTTP as a browser without JavaScript would: /web/signin, the
 * authorization endpoint, our login form, the callback, and back to `next`.
 */
export async function signInToConsole(
  t: Pick<TestApp, 'url'>,
  user: { email: string; password: string },
  next = '/console',
): Promise<ConsoleSession> {
  const jar = new CookieJar();
  let request: { url: string; init: RequestInit } = { url: `${t.url}/web/signin?next=${encodeURIComponent(next)}`, init: {} };
  for (let hop = 0; hop < 15; hop++) {
    const res = await fetch(request.url, {
      ...request.init,
      redirect: 'manual',
      headers: { ...(request.init.headers as Record<string, string>), cookie: jar.header() },
    });
    jar.store(res);
    const location = res.headers.get('location');
    if (location) {
      await res.arrayBuffer();
      const target = new URL(location, request.url);
      if (target.pathname === next.split('?')[0]) return new ConsoleSession(t, jar);
      request = { url: target.href, init: {} };
      continue;
    }
    const html = await res.text();
    expect(res.status, `unexpected answer at ${request.url}: ${html.slice(-500)}`).to.equal(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '';
    request = {
      url: new URL(action, t.url).href,
      init: {
        method: 'POST',
        body: new URLSearchParams({ csrf, email: user.email, password: user.password }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: t.url },
      },
    };
  }
  throw new Error('too many redirects signing in to the consoles');
}

/** Password sign-ins so far by outcome, as the app's /metrics counts them (campus_login_attempts_total). */
export async function loginAttempts(t: TestApp): Promise<Record<'succeeded' | 'failed' | 'unchecked' | 'locked', number>> {
  const text = await (await t.request('/metrics')).text();
  const count = (outcome: string) =>
    Number(new RegExp(`^campus_login_attempts_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return { succeeded: count('succeeded'), failed: count('failed'), unchecked: count('unchecked'), locked: count('locked') };
}

/** An authorization stopped at the login page: its cookies, address, text, form token and form action. */
export interface LoginPage {
  jar: CookieJar;
  url: string;
  html: string;
  csrf: string;
  action: string;
  res: Response;
}

/** Starts an authorization (with PKCE) and stops at the login page. */
export async function openLoginPage(
  t: TestApp,
  clientId: string,
  init: { headers?: Record<string, string>; query?: string; params?: Record<string, string>; cookie?: string } = {},
): Promise<LoginPage> {
  const jar = new CookieJar();
  const { challenge } = pkcePair();
  const params = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    state: 'st-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...init.params,
  });
  const start = await t.request(`/v1/oauth/authorize?${params}`, { redirect: 'manual' });
  jar.store(start);
  expect(start.status).to.equal(303);
  const url = new URL(start.headers.get('location') ?? '', t.url).href + (init.query ?? '');
  const cookie = [jar.header(), init.cookie ?? ''].filter(Boolean).join('; ');
  const res = await fetch(url, { headers: { cookie, ...init.headers } });
  // As a browser: a language chosen with ?lang= is remembered for the form's posts.
  jar.store(res);
  const html = await res.clone().text();
  return {
    jar,
    url,
    html,
    res,
    csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '',
    action: new URL(/<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '/', t.url).href,
  };
}

/** Posts `fields` to the page's form (or to `action`) as a browser would, redirects not followed. */
export function postForm(
  page: LoginPage,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
  action = page.action,
): Promise<Response> {
  return fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.jar.header(), ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/** The problem a form shows: the first line of its error summary (src/surfaces/web/components.ts). */
export function alertText(html: string): string | undefined {
  return /<div class="error-summary" role="alert"[^>]*>\s*<h2>[^<]*<\/h2>\s*<ul>\s*<li><a href="#f-[a-z]+">([^<]*)<\/a><\/li>/.exec(
    html,
  )?.[1];
}
