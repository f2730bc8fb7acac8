import { expect } from 'chai';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import { listenEverywhere, outsideAddress, productionSetUp } from '../helpers/production.js';
import { selfSignedCertificate } from '../helpers/tls.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope } from '../helpers/expect.js';
import { buildStudent, insertSchool, issueKey } from '../helpers/factories.js';
import { closeServer } from '../../src/app.js';

/** The value of the one sample line `name{labels}`, or undefined when it is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('operations: metrics, GET /metrics in Prometheus text (src/http/metrics.ts)', function () {
  this.timeout(60000);

  describe('the series', () => {
    let t: TestApp;
    let text: string;

    before(async () => {
      t = await buildTestApp('metrics');
      await insertSchool(t.db, { students: [1, 2, 3].map((id) => buildStudent({ _id: id })) });
      const key = await issueKey(t.db, { rateLimit: { points: 3, durationSeconds: 60 } });
      const headers = { 'X-API-KEY': key };
      // A miss, then a hit of the answer cache, then another answer (a miss); the 4th is refused (429).
      for (const query of ['?size=2', '?size=2', '?size=3', '?size=3'])
        await (await t.request(`/v1/students${query}`, { headers })).arrayBuffer();
      await (await t.request('/v1/no-such-thing')).arrayBuffer();
      await (await t.request('/livez')).arrayBuffer();
      // oidc-provider answers these itself, outside our routers.
      await (await t.request('/.well-known/openid-configuration')).arrayBuffer();
      await (await t.request('/v1/oauth/interaction/no-such-interaction')).arrayBuffer();
      // What src/data/neis/store.ts reports after a sync.
      t.db.telemetry.neisSync({
        outcome: 'partial',
        trigger: 'cli',
        from: '2026-03-02',
        to: '2026-03-06',
        startedAt: new Date(),
        finishedAt: new Date(),
        datasets: {
          meals: { outcome: 'ok', rows: 5, skippedRows: 0, error: null },
          schedules: { outcome: 'failed', rows: 0, skippedRows: 0, error: 'timeout' },
        },
        error: null,
      });
      const res = await t.request('/metrics');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
      expect(res.headers.get('cache-control')).to.equal('no-store');
      text = await res.text();
    });
    after(async () => {
      await t.close();
    });

    it('counts requests and times them by method, route pattern and status, never the raw URL', () => {
      expect(sample(text, 'campus_http_requests_total{method="GET",route="/v1/students",status="200"}')).to.equal(3);
      expect(sample(text, 'campus_http_requests_total{method="GET",route="/v1/students",status="429"}')).to.equal(1);
      expect(sample(text, 'campus_http_requests_total{method="GET",route="other",status="404"}')).to.equal(1);
      expect(sample(text, 'campus_http_requests_total{method="GET",route="/livez",status="200"}')).to.equal(1);
      expect(sample(text, 'campus_http_requests_total{method="GET",route="/.well-known/openid-configuration",status="200"}')).to.equal(1);
      expect(text).to.match(/^campus_http_requests_total\{method="GET",route="\/v1\/oauth\/interaction\/[^"]*",status="\d+"\} 1$/m);
      expect(sample(text, 'campus_http_request_duration_seconds_count{method="GET",route="/v1/students",status="200"}')).to.equal(3);
      expect(
        sample(text, 'campus_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/v1/students",status="200"}'),
      ).to.equal(3);
      expect(text).to.contain('# TYPE campus_http_request_duration_seconds histogram');
      expect(text).not.to.contain('size=');
      expect(text).not.to.contain('no-such-thing');
    });

    it('counts rate-limit refusals and answer-cache hits and misses', () => {
      expect(sample(text, 'campus_rate_limit_refusals_total{route="/v1/students"}')).to.equal(1);
      expect(sample(text, 'campus_response_cache_lookups_total{result="miss"}')).to.equal(2);
      expect(sample(text, 'campus_response_cache_lookups_total{result="hit"}')).to.equal(1);
    });

    it('times database operations by collection, operation and outcome', () => {
      // insertSchool's insertMany and the key's lookup, made after the app was built.
      expect(
        sample(text, 'campus_db_operation_duration_seconds_count{collection="students",operation="insertMany",outcome="ok"}'),
      ).to.equal(1);
      expect(text).to.match(/^campus_db_operation_duration_seconds_count\{collection="api_keys",operation="\w+",outcome="ok"\} [1-9]/m);
      expect(text).to.contain('# TYPE campus_read_model_load_duration_seconds histogram');
    });

    it('counts NEIS sync results, and per dataset', () => {
      expect(sample(text, 'campus_neis_sync_total{outcome="partial",trigger="cli"}')).to.equal(1);
      expect(sample(text, 'campus_neis_sync_datasets_total{dataset="meals",outcome="ok"}')).to.equal(1);
      expect(sample(text, 'campus_neis_sync_datasets_total{dataset="schedules",outcome="failed"}')).to.equal(1);
    });

    it("has the process's default metrics", () => {
      for (const name of [
        'process_cpu_user_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_eventloop_lag_seconds',
        'nodejs_heap_size_used_bytes',
      ])
        expect(text).to.match(new RegExp(`^${name} `, 'm'));
    });

    it('keeps one registry per app: another app starts from zero', async () => {
      const other = await buildTestApp('metrics_other', { db: t.db });
      try {
        const fresh = await (await other.request('/metrics')).text();
        expect(fresh).not.to.contain('route="/v1/students"');
        expect(sample(fresh, 'campus_response_cache_lookups_total{result="hit"}')).to.equal(undefined);
      } finally {
        await other.close();
      }
    });

    it('takes GET and HEAD only', async () => {
      const post = await t.request('/metrics', { method: 'POST' });
      await expectEnvelope(post, 405, 'METHOD_NOT_ALLOWED', 'Method not allowed; use GET, HEAD.');
    });
  });

  it("labels a data route by its pattern, whether its steps come from the routes' table or the router", async () => {
    const t = await buildTestApp('metrics_routes');
    try {
      // As written (the table of src/surfaces/data.ts), with a trailing slash and with a parameter (the router).
      for (const path of ['/v1/public/projects', '/v1/public/projects/', '/v1/public/projects/99', '/v1/public/projects/abc'])
        await (await t.request(path)).arrayBuffer();
      const text = await (await t.request('/metrics')).text();
      expect(sample(text, 'campus_http_requests_total{method="GET",route="/v1/public/projects",status="200"}')).to.equal(2);
      expect(sample(text, 'campus_http_requests_total{method="GET",route="/v1/public/projects/:id",status="404"}')).to.equal(1);
      expect(sample(text, 'campus_http_requests_total{method="GET",route="/v1/public/projects/:id",status="400"}')).to.equal(1);
    } finally {
      await t.close();
    }
  });

  describe('in production', () => {
    const production = productionSetUp('metrics_prod');

    it('answers loopback over plain HTTP, like the probes', async () => {
      const t = await buildTestApp('metrics_prod', { db: production.db, env: production.env({ TRUSTED_PROXIES: '10.9.9.9' }) });
      try {
        const res = await t.request('/metrics');
        expect(res.status).to.equal(200);
        expect(await res.text()).to.contain('campus_http_requests_total');
      } finally {
        await t.close();
      }
    });

    it('through the proxy (a forwarded header) it is refused, unless it carries Authorization: Bearer <METRICS_TOKEN>', async () => {
      const token = 'm'.repeat(40);
      const env = production.env({ TRUSTED_PROXIES: '127.0.0.1' });
      const withToken = await buildTestApp('metrics_proxy', { db: production.db, env: { ...env, METRICS_TOKEN: token } });
      const without = await buildTestApp('metrics_proxy_none', { db: production.db, env });
      try {
        const viaProxy = { 'x-forwarded-for': '203.0.113.5', 'x-forwarded-proto': 'https' };
        for (const t of [withToken, without]) {
          const refused = await t.request('/metrics', { headers: viaProxy });
          await expectEnvelope(
            refused,
            403,
            'FORBIDDEN',
            'Metrics are not served through the proxy without Authorization: Bearer <METRICS_TOKEN>; scrape this machine directly.',
          );
          const wrong = await t.request('/metrics', { headers: { ...viaProxy, authorization: `Bearer ${'x'.repeat(40)}` } });
          expect(wrong.status).to.equal(403);
          // The proxy's own scrape (no forwarded header) is served as before.
          expect((await t.request('/metrics')).status).to.equal(200);
        }
        const allowed = await withToken.request('/metrics', { headers: { ...viaProxy, authorization: `Bearer ${token}` } });
        expect(allowed.status).to.equal(200);
        expect(await allowed.text()).to.contain('campus_http_requests_total');
        expect((await without.request('/metrics', { headers: { ...viaProxy, authorization: `Bearer ${token}` } })).status).to.equal(403);
      } finally {
        await withToken.close();
        await without.close();
      }
    });

    it('refuses another address (403 envelope) unless it is a trusted proxy, over plain HTTP and over TLS', async function () {
      const address = outsideAddress();
      // A machine with loopback only cannot make a connection from anywhere else.
      if (!address) this.skip();
      const tls = await selfSignedCertificate();
      for (const trusted of ['', address]) {
        const t = await buildTestApp('metrics_remote', { db: production.db, env: production.env({ TRUSTED_PROXIES: trusted }) });
        const plain = createHttpServer(t.app.callback());
        const secure = createHttpsServer({ key: tls.key, cert: tls.cert }, t.app.callback());
        const plainPort = await listenEverywhere(plain);
        const securePort = await listenEverywhere(secure);
        try {
          const overHttp = await fetch(`http://${address}:${plainPort}/metrics`);
          const overTls = await httpsGet(`https://${address}:${securePort}/metrics`);
          if (trusted) {
            expect([overHttp.status, overTls.status]).to.deep.equal([200, 200]);
            expect(overTls.body).to.contain('campus_http_requests_total');
          } else {
            await expectEnvelope(overHttp, 403, 'FORBIDDEN', 'HTTPS is required');
            expect(overTls.status).to.equal(403);
            expect(JSON.parse(overTls.body)).to.deep.equal({
              status: 'FORBIDDEN',
              code: 403,
              message: 'Metrics are served only to this machine and the trusted proxies.',
              data: null,
            });
          }
        } finally {
          await closeServer(plain, 100);
          await closeServer(secure as unknown as Server, 100);
          await t.close();
        }
      }
    });
  });
});

/** GET over TLS, accepting the throwaway certificate. */
function httpsGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    const req = httpsRequest(url, { rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.on('end', () => done({ status: res.statusCode ?? 0, body }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}
