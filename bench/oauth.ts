import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { openDatabase, type Database } from '../src/data/database.js';
import { deleteMatching } from '../src/data/platform/delete-matching.js';
import type { BackendIndexer } from '../src/data/platform/embedded/index.js';
import { recordKey } from '../src/data/accounts/oauth-records.js';
import { seedDemoSchool } from '../src/data/school/demo.js';
import { AccountService } from '../src/oauth/accounts.js';
import { AppService } from '../src/oauth/apps.js';
import { Agent } from 'node:http';
import { alternate, benchDatabase, compare, cpuNow, cpuPerAnswer, type Figures, percentile, report, startProcess } from './lib.js';
import { codeAtRedirect, type SignInApp } from './signin.js';

/**
 * OAuth bench: the token endpoint (refresh grant, rotating) and userinfo of our app, each against
 * bare oidc-provider with its in-memory adapter measured in the same run (alternating rounds);
 * and the refresh grant again on a database that holds STORED used refresh tokens and as many
 * claims, against the fresh one (the cost of a refresh must not grow with the store).
 * Whole logins are their own part, against the hash floor (bench/logins.ts).
 *
 * Refresh tokens rotate, so every refresh request needs an unused one: each round starts with one
 * freshly minted token per connection in a shared pool; every answer puts its new refresh token
 * back, so the pool never runs dry while requests succeed.
 */

const CONNECTIONS = 10;
/** Used refresh tokens (and their claims, as many) in the store of the second refresh row. */
const STORED = 50_000;
/** Whole logins (bench/logins.ts, bench/flood.ts): this many browsers at a time, each logging in again and again. */
export const LOGIN_BROWSERS = 4;
const ROUNDS = 3;
/** Recorded rounds of the refresh rows (after a warm-up round each; see compareRefresh). */
const REFRESH_ROUNDS = 5;
const SECONDS = 3;
const CLIENT = { id: 'bench-client', secret: 'bench-client-secret', redirectUri: 'http://127.0.0.1:9/cb' } as const;
const USER = { email: '', password: 'bench password 1' };

export interface Server {
  readonly label: string;
  readonly url: string;
  /** Cookies of the logged-in browser session (SSO), so minting skips the login form. */
  readonly cookies: Map<string, string>;
}

/** Runs the OAuth bench and prints its table; false when a request failed. */
export async function runOAuthBench(): Promise<boolean> {
  const database = await benchDatabase('bench-oauth');
  const fresh = await prepare(database.uri, database.indexer, 'bench_oauth');
  const loaded = await prepare(database.uri, database.indexer, 'bench_oauth_stored');
  // Artifacts of earlier runs would only make the store bigger than a real one of this age; the
  // second store keeps its STORED used tokens and claims from run to run (loading them takes a while).
  await deleteMatching(fresh.db.models.oauthRecords.collection, {});
  await fillStore(loaded.db);

  const app = await startProcess('bench/serve-oauth.ts', { MONGODB_URI: fresh.uri, LOG_LEVEL: 'silent' });
  const appStored = await startProcess('bench/serve-oauth.ts', { MONGODB_URI: loaded.uri, LOG_LEVEL: 'silent' });
  const bareProcess = await startBareProvider();
  try {
    const ours: Server = { label: 'our app', url: app.url, cookies: new Map() };
    const oursStored: Server = { label: 'our app', url: appStored.url, cookies: new Map() };
    const bare: Server = { label: 'bare oidc-provider', url: bareProcess.url, cookies: new Map() };
    const [bareRefresh, freshRefresh, storedRefresh] = await compareRefresh([
      { server: bare, label: 'bare oidc-provider POST token (refresh)' },
      { server: ours, label: 'POST /v1/oauth/token (refresh)' },
      { server: oursStored, label: `  the same, ${STORED.toLocaleString('en')} used tokens + claims` },
    ] as const);
    const userinfo = await compare(
      {
        label: 'bare oidc-provider GET /me (opaque token)',
        options: { url: `${bare.url}/me`, headers: { authorization: `Bearer ${(await tokensFor(bare, 'openid')).access_token}` } },
      },
      {
        label: 'GET /userinfo (JWT, live grant, student)',
        options: { url: `${ours.url}/userinfo`, headers: { authorization: `Bearer ${(await tokensFor(ours, 'self:read')).access_token}` } },
      },
      ROUNDS,
      SECONDS,
    );
    return report(
      `OAuth (${CONNECTIONS} connections; after a warm-up, median of ${REFRESH_ROUNDS} alternating ${SECONDS} s rounds (refresh) and of ${ROUNDS} (userinfo))`,
      [
        { figures: bareRefresh },
        { figures: freshRefresh, baseline: bareRefresh, target: 0.5 },
        { figures: storedRefresh, baseline: freshRefresh, target: 0.8 },
        { figures: userinfo.baseline },
        { figures: userinfo.subject, baseline: userinfo.baseline, target: 0.5 },
      ],
    );
  } finally {
    await bareProcess.stop();
    await app.stop();
    await appStored.stop();
    await fresh.db.close();
    await loaded.db.close();
    await database.stop();
  }
}

/** Bare oidc-provider in its own process (bench/serve-oauth-bare.ts), knowing the bench's client and password. */
export function startBareProvider(): ReturnType<typeof startProcess> {
  return startProcess('bench/serve-oauth-bare.ts', {
    BENCH_CLIENT_ID: CLIENT.id,
    BENCH_CLIENT_SECRET: CLIENT.secret,
    BENCH_REDIRECT_URI: CLIENT.redirectUri,
    BENCH_PASSWORD: USER.password,
  });
}

/** A database of the bench's server with the demo school, the bench's account and its client. */
export async function prepare(
  serverUri: string,
  indexer: BackendIndexer | undefined,
  name: string,
): Promise<{ uri: string; db: Database }> {
  const url = new URL(serverUri);
  url.pathname = `/${name}`;
  const db = await openDatabase(url.toString(), { backendIndexes: indexer });
  await seedDemoSchool(db);
  const student = await db.models.students.findOne({ _id: 1 }).lean<{ email: string }>();
  USER.email = student?.email ?? 'bench@school.test';
  await new AccountService(db).ensure({ email: USER.email, password: USER.password, role: 'USER' });
  // PKCE optional, as in the bare oidc-provider it is compared with (pkce.required: false).
  await new AppService(db, { isProduction: false }).put({
    ...CLIENT,
    name: 'bench',
    redirectUris: [CLIENT.redirectUri],
    firstParty: true,
    pkce: 'optional',
  });
  return { uri: url.toString(), db };
}

/**
 * Brings the store to STORED used refresh tokens, each with its claim naming a successor, as a
 * school's store holds them after that many refreshes (they stay until they expire, 30 days).
 */
async function fillStore(db: Database): Promise<void> {
  const records = db.connection.collection('oauth_records');
  const have = await records.countDocuments({ kind: 'RefreshToken' });
  const expiresAt = new Date(Date.now() + 30 * 24 * 3600 * 1000);
  const payload = JSON.stringify({
    kind: 'RefreshToken',
    iat: Math.floor(Date.now() / 1000),
    exp: Math.floor(expiresAt.getTime() / 1000),
    accountId: '1',
    clientId: CLIENT.id,
    grantId: 'g',
    scope: 'self:read',
    resource: 'http://127.0.0.1/userinfo',
    gty: 'authorization_code refresh_token',
    rotations: 1,
  });
  const BATCH = 1000;
  for (let done = have; done < STORED; done += BATCH) {
    const docs = [];
    for (let i = 0; i < Math.min(BATCH, STORED - done); i++) {
      const key = recordKey('RefreshToken', randomBytes(32).toString('base64url'));
      const grantId = randomBytes(16).toString('base64url');
      docs.push({
        _id: key,
        kind: 'RefreshToken',
        payload,
        grantId,
        uid: null,
        userCode: null,
        clientId: CLIENT.id,
        accountId: '1',
        expiresAt,
      });
      docs.push({
        _id: `${key}#claim`,
        kind: 'Claim',
        payload: '{}',
        grantId: null,
        uid: null,
        userCode: null,
        clientId: null,
        accountId: null,
        expiresAt,
        claimedAt: new Date(),
        successor: recordKey('RefreshToken', randomBytes(32).toString('base64url')),
      });
    }
    await records.insertMany(docs as never[], { ordered: false });
    if ((done / BATCH) % 10 === 0) process.stderr.write(`  storing used refresh tokens and claims: ${done} of ${STORED}\n`);
  }
}

/**
 * Refresh-grant rounds, alternating between the servers after a warm-up round each
 * (bench/lib.ts, alternate), each round from freshly minted tokens; each one's median round.
 * Five rounds rather than three, because a refresh moves more with the machine's noise than any
 * other row (docs/benchmarks.md).
 */
async function compareRefresh<T extends readonly { server: Server; label: string }[]>(sides: T): Promise<{ [K in keyof T]: Figures }> {
  const measured = await alternate(
    sides.map((side) => () => measureRefresh(side.server, side.label)),
    REFRESH_ROUNDS,
  );
  return measured as { [K in keyof T]: Figures };
}

async function measureRefresh(server: Server, label: string): Promise<Figures> {
  const pool: string[] = [];
  for (let i = 0; i < CONNECTIONS; i++) pool.push((await tokensFor(server, 'self:read')).refresh_token);
  let failures = 0;
  const result = await autocannon({
    url: `${server.url}${tokenPath(server)}`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: SECONDS,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    requests: [
      {
        setupRequest: (request) => ({ ...request, body: refreshBody(pool.shift() ?? 'pool-exhausted') }),
        onResponse: (status, body) => {
          if (status !== 200) {
            failures++;
            return;
          }
          pool.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
        },
      },
    ],
  });
  return {
    label,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: failures + result.errors + result.timeouts,
  };
}

/** Both servers know the same client (registered in each), so the bodies are the same. */
function refreshBody(refreshToken: string): string {
  return new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
  }).toString();
}

function tokenPath(server: Server): string {
  return server.label === 'our app' ? '/v1/oauth/token' : '/token';
}

function authorizePath(server: Server): string {
  return server.label === 'our app' ? '/v1/oauth/authorize' : '/auth';
}

/** Runs the code flow (logging in through the form the first time) and exchanges the code. */
export async function tokensFor(server: Server, scope: string): Promise<{ access_token: string; refresh_token: string }> {
  return exchange(server, await codeFor(server, scope));
}

/**
 * Whole logins, each by a new browser (no cookies, so no single sign-on): LOGIN_BROWSERS run at
 * once, each starting its next login when the last one reached the client's redirect. The
 * requests are raw `node:http` ones over kept-alive connections (bench/signin.ts), the cheapest
 * client there is, because the load generator shares the two cores with the server and its
 * database. With the server's process named, the CPU a login cost is counted on each side: the
 * server, the load generator, and the rest of the machine (the database's processes, mostly).
 */
export async function measureLogins(server: Server, seconds: number, label: string, serverPid?: number): Promise<Figures> {
  const latencies: number[] = [];
  let failures = 0;
  const app: SignInApp = {
    url: server.url,
    clientId: CLIENT.id,
    clientSecret: CLIENT.secret,
    redirectUri: CLIENT.redirectUri,
    scope: 'self:read',
    authorizePath: authorizePath(server),
  };
  const agent = new Agent({ keepAlive: true, maxSockets: LOGIN_BROWSERS });
  const cpuBefore = cpuNow(serverPid);
  const stopAt = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: LOGIN_BROWSERS }, async () => {
      while (performance.now() < stopAt) {
        const started = performance.now();
        try {
          await codeAtRedirect(app, USER, randomBytes(32).toString('base64url'), { agent });
          latencies.push(performance.now() - started);
        } catch {
          failures++;
        }
      }
    }),
  );
  const cpu = cpuPerAnswer(cpuBefore, cpuNow(serverPid), latencies.length);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    label,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    failures,
    ...(cpu ? { cpu } : {}),
  };
}

/** Follows the authorization through the login form (when the browser has no session) to the code. */
async function codeFor(server: Server, scope: string): Promise<string> {
  const query = new URLSearchParams({
    client_id: CLIENT.id,
    redirect_uri: CLIENT.redirectUri,
    response_type: 'code',
    scope,
    state: 'bench',
  });
  let url = `${server.url}${authorizePath(server)}?${query}`;
  let init: RequestInit = {};
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: cookieHeader(server) },
    });
    keepCookies(server, res);
    const location = res.headers.get('location');
    if (location?.startsWith(CLIENT.redirectUri)) {
      const code = new URL(location).searchParams.get('code');
      if (!code) throw new Error(`${server.label}: the redirect carried no code: ${location}`);
      return code;
    }
    if (location) {
      await res.arrayBuffer();
      url = new URL(location, url).href;
      init = {};
      continue;
    }
    // Our login page: post the form (only on the first mint; later the session signs in).
    const html = await res.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '';
    url = new URL(action, server.url).href;
    init = {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({ csrf, email: USER.email, password: USER.password }).toString(),
    };
  }
  throw new Error(`${server.label}: the authorization did not reach the client`);
}

async function exchange(server: Server, code: string): Promise<{ access_token: string; refresh_token: string }> {
  const res = await fetch(`${server.url}${tokenPath(server)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: CLIENT.redirectUri,
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
    }).toString(),
  });
  if (res.status !== 200) throw new Error(`${server.label}: token exchange answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { access_token: string; refresh_token: string };
}

function keepCookies(server: Server, res: Response): void {
  for (const line of res.headers.getSetCookie()) {
    const [pair = ''] = line.split(';');
    const eq = pair.indexOf('=');
    server.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
}

function cookieHeader(server: Server): string {
  return [...server.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
}
