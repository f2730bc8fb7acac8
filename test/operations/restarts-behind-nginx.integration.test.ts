import { expect } from 'chai';
import type { TestApp } from '../helpers/app.js';
import { runCampus, startCampus, type RunningCampus } from '../helpers/cli.js';
import { testDatabaseUri } from '../helpers/database.js';
import { nginxBinary, SITE_CONFIG, startNginx, type RunningNginx } from '../helpers/nginx.js';
import { authorize } from '../helpers/oauth.js';
import { startProxyLoad, type LoadSummary } from '../helpers/proxy-load.js';
import { openDatabase } from '../../src/data/database.js';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { DEMO_API_KEY, demoAccountEmail } from '../../src/data/school/demo.js';
import { DEMO_OAUTH } from '../../src/oauth/seed.js';

/**
 * Two real `campus serve` processes on one database behind nginx with the documented site
 * configuration (deploy/nginx/campus.conf, replaced only in its ports and certificate paths), under
 * GET and token-POST load for at least 20 s, restarted one after the other as an upgrade does
 * (SIGTERM, wait for the exit, start again, wait until /readyz answers): every request answered
 * 200. Before the processes drained on SIGTERM, about 4 requests in 10 were answered 502
 * (docs/benchmarks.md, "Restarts behind nginx").
 */

const LOAD_MS = 20_000;
/** 120 GETs and 15 token POSTs a second, as long as the answers keep up. */
const GET_LOOPS = 6;
const GET_EVERY_MS = 50;
const POST_LOOPS = 3;
const POST_EVERY_MS = 200;
/** Refresh tokens of grants of their own per POST loop: the one it starts with and its spares. */
const GRANTS_PER_POST_LOOP = 3;

interface Served {
  readonly port: number;
  process: RunningCampus;
}

describe('operations: two campus serve processes behind nginx (needs Debian’s nginx), restarted one after the other under load', function () {
  this.timeout(300_000);
  let env: Record<string, string>;
  let uri: string;
  let servers: Served[] = [];
  let nginx: RunningNginx | undefined;

  before(async function () {
    if (!nginxBinary()) {
      process.stderr.write('    skipped: nginx is not installed (Debian: apt-get install nginx; .ci/run installs it)\n');
      this.skip();
    }
    uri = testDatabaseUri('restarts');
    const seeded = await runCampus({ MONGODB_URI: uri }, ['seed', '--demo']);
    expect(seeded.code, seeded.stderr).to.equal(0);
    const ports = [await freePort(), await freePort()] as const;
    const origin = `http://127.0.0.1:${ports[0]}`;
    env = {
      MONGODB_URI: uri,
      HOST: '127.0.0.1',
      // One issuer for both, as behind one public address: a refresh token issued through one
      // process is refreshed at either.
      AUTH_URL: origin,
      USERINFO_URL: origin,
      BASE_URL: origin,
      TRUSTED_PROXIES: '127.0.0.1',
      NEIS_SYNC_ENABLED: 'false',
      SHUTDOWN_DRAIN_SECONDS: '5',
      // The load is one client at one address with one key: no limit is under test here.
      RATE_LIMIT: '1000000/60',
      RATE_LIMIT_ACCOUNT: '1000000/60',
      RATE_LIMIT_ADDRESS: '1000000/60',
      OAUTH_LOGIN_DELAY_MS: '0',
    };
    // One after the other: the first migrates the database.
    for (const port of ports) servers.push({ port, process: await serve(port) });
    nginx = await startNginx({ upstreamPorts: ports, httpPort: await freePort(), httpsPort: await freePort() });
  });

  after(async () => {
    await nginx?.stop();
    for (const server of servers) await server.process.stop();
    servers = [];
    if (uri) {
      const db = await openDatabase(uri);
      await db.connection.dropDatabase().catch(() => {});
      await db.close();
    }
  });

  async function serve(port: number): Promise<RunningCampus> {
    const process = await startCampus({ ...env, PORT: String(port) }, ['serve', '--json']);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (res) => res.status,
        () => 0,
      );
      if (ready === 200) return process;
      if (Date.now() > deadline) throw new Error(`the process on port ${port} is not ready after 30 s (last answer ${ready})`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** A refresh token of a grant of its own (a fresh browser signs in each time), minted at the first process directly. */
  async function refreshToken(): Promise<string> {
    const url = `http://127.0.0.1:${servers[0]?.port}`;
    const app = { url, request: (path: string, init?: RequestInit) => fetch(`${url}${path}`, init) } as unknown as TestApp;
    const { code, verifier } = await authorize(
      app,
      {
        client_id: DEMO_OAUTH.clientId,
        redirect_uri: DEMO_OAUTH.redirectUri,
        response_type: 'code',
        state: 's',
        scope: 'openid self:read',
      },
      { email: demoAccountEmail(), password: DEMO_OAUTH.password },
    );
    const issued = await fetch(`${url}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: code ?? '',
        redirect_uri: DEMO_OAUTH.redirectUri,
        code_verifier: verifier ?? '',
        client_id: DEMO_OAUTH.clientId,
        client_secret: DEMO_OAUTH.clientSecret,
      }).toString(),
    });
    expect(issued.status, await issued.clone().text()).to.equal(200);
    return ((await issued.json()) as { refresh_token: string }).refresh_token;
  }

  it(`answers every GET and token POST with 200 through ${SITE_CONFIG} while both processes restart in turn`, async () => {
    const refreshTokens: string[][] = [];
    for (let loop = 0; loop < POST_LOOPS; loop++) {
      const grants: string[] = [];
      for (let i = 0; i < GRANTS_PER_POST_LOOP; i++) grants.push(await refreshToken());
      refreshTokens.push(grants);
    }
    const proxy = nginx as RunningNginx;
    const load = await startProxyLoad({
      url: proxy.url,
      ca: proxy.ca,
      get: { path: '/v1/students?size=5', apiKey: DEMO_API_KEY, loops: GET_LOOPS, everyMs: GET_EVERY_MS },
      post: { everyMs: POST_EVERY_MS, clientId: DEMO_OAUTH.clientId, clientSecret: DEMO_OAUTH.clientSecret, refreshTokens },
    });
    const timeline: string[] = [];
    const mark = (what: string) => timeline.push(`${(load.elapsedMs() / 1000).toFixed(1)} s ${what}`);
    let summary: LoadSummary | undefined;
    try {
      await new Promise((r) => setTimeout(r, 2000));
      for (const server of servers) {
        mark(`SIGTERM to the process on port ${server.port}`);
        const code = await server.process.stop();
        mark(`it exited with ${String(code)}`);
        expect(code).to.equal(0);
        server.process = await serve(server.port);
        mark('started again and ready');
      }
      // At least LOAD_MS in all, and a while after the last restart.
      await new Promise((r) => setTimeout(r, Math.max(2000, LOAD_MS - load.elapsedMs())));
    } finally {
      summary = await load.stop();
    }
    const failed = summary.failures.map((f) => `${(f.atMs / 1000).toFixed(1)} s ${f.kind} ${f.outcome}`);
    const report = [
      ...timeline,
      `failures (the first ${failed.length}): ${failed.join(', ')}`,
      `nginx's error log:`,
      proxy.errorLog().slice(-2000),
    ];
    process.stderr.write(
      `    restarts behind nginx: ${summary.get.sent} GETs ${JSON.stringify(summary.get.outcomes)}, ` +
        `${summary.post.sent} token POSTs ${JSON.stringify(summary.post.outcomes)} in ${(summary.durationMs / 1000).toFixed(1)} s; ` +
        `nginx's errors: ${JSON.stringify(upstreamErrors(proxy.errorLog()))}; ${timeline.join(', ')}\n`,
    );
    expect(failed, report.join('\n')).to.deep.equal([]);
    expect(summary.get.outcomes).to.deep.equal({ '200': summary.get.sent });
    expect(summary.post.outcomes).to.deep.equal({ '200': summary.post.sent });
    expect(summary.exhaustedPostLoops).to.equal(0);
    // Enough traffic that a restart could not slip between requests.
    expect(summary.get.sent).to.be.greaterThan(200);
    expect(summary.post.sent).to.be.greaterThan(100);
  });
});

/** nginx's error log lines counted by what went wrong with the upstream ("no live upstreams", "connect() failed (111: Connection refused)", ...). */
function upstreamErrors(log: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [, what = ''] of log.matchAll(/\[(?:error|warn)\] \d+#\d+: \*\d+ (.+?) while /g)) counts[what] = (counts[what] ?? 0) + 1;
  return counts;
}
