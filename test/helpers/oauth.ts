import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Database } from '../../src/data/database.js';
import { AccountService } from '../../src/oauth/accounts.js';
import { ClientService, type ClientSummary, type CreateClientInput } from '../../src/oauth/clients.js';
import type { TestApp } from './app.js';

/** A minimal cookie jar for fetch (names only; the provider's cookies have distinct names). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
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
  input: Partial<CreateClientInput> = {},
): Promise<{ client: ClientSummary; secret: string | null }> {
  return new ClientService(db, { isProduction: false }).create({ name: 'Test app', redirectUris: [REDIRECT_URI], ...input });
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
  /** Statuses of every hop, in order (to check e.g. the 303s). */
  readonly statuses: number[];
  readonly jar: CookieJar;
}

/**
 * Drives the authorization endpoint like a browser without JavaScript: follows same-origin
 * redirects, fills the login form, answers the consent page, and stops at the redirect to
 * the client.
 */
export async function authorize(
  t: TestApp,
  params: Record<string, string>,
  user: { email: string; password: string },
  options: { consent?: 'allow' | 'deny'; jar?: CookieJar } = {},
): Promise<AuthorizeResult> {
  const jar = options.jar ?? new CookieJar();
  const statuses: number[] = [];
  let next: { url: string; init: RequestInit } = { url: `${t.url}/v1/oauth/authorize?${new URLSearchParams(params)}`, init: {} };
  for (let hop = 0; hop < 12; hop++) {
    const res = await fetch(next.url, { ...next.init, redirect: 'manual', headers: { ...(next.init.headers as Record<string, string>), cookie: jar.header() } });
    jar.store(res);
    statuses.push(res.status);
    const location = res.headers.get('location');
    if (location) {
      const target = new URL(location, next.url);
      if (target.origin !== t.url) return { location: target, code: target.searchParams.get('code'), statuses, jar };
      await res.arrayBuffer();
      next = { url: target.href, init: {} };
      continue;
    }
    const html = await res.text();
    expect(res.status, `unexpected answer at ${next.url}: ${html.slice(-700)}`).to.equal(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '';
    const body = html.includes('name="password"')
      ? new URLSearchParams({ csrf, email: user.email, password: user.password })
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
