import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKeyService, API_SCOPES } from '../src/data/keys/store.js';
import { openDatabase } from '../src/data/database.js';
import { seedDemoSchool } from '../src/data/school/demo.js';
import { benchDatabase, compare, type Figures, report, startProcess, BENCH_POLICY } from './lib.js';

const STUDENT_SORTS = ['ID', 'NAME', 'EMAIL', 'STUDENT_NUMBER', 'GRADE', 'CLASS_NUM', 'NUMBER', 'MAJOR', 'ROLE', 'SEX', 'DORMITORY_ROOM'];

/**
 * Data API bench: /v1/students?size=300 cold and warm, and a 304 revalidation, each against a
 * bare Node http server answering the same bytes, measured in the same run.
 */
export async function runDataBench(): Promise<boolean> {
  const database = await benchDatabase('bench');
  const uri = database.uri;
  const db = await openDatabase(uri, { backendIndexes: database.indexer });
  await seedDemoSchool(db);
  // The bench key's own limit is far above the load, so no request is refused.
  const { key } = await new ApiKeyService(db, BENCH_POLICY).issue({
    scopes: [...API_SCOPES],
    rateLimit: { points: 1e9, durationSeconds: 60 },
    label: 'bench',
  });
  const app = await startProcess('bench/serve-app.ts', { MONGODB_URI: uri, LOG_LEVEL: 'silent' });
  const headers = { 'X-API-KEY': key };
  const path = '/v1/students?size=300';
  const dir = mkdtempSync(join(tmpdir(), 'campus-bench-'));
  try {
    const cold = await coldRequests(app.url, headers);
    const plain = await recordAnswers(app.url + path, headers, dir, 'plain');
    const brotli = await recordAnswers(app.url + path, { ...headers, 'Accept-Encoding': 'br' }, dir, 'br');
    const bare = await startProcess('bench/serve-bare.ts', { BARE_BODY_FILE: plain.bodyFile, BARE_HEADERS_FILE: plain.headersFile });
    const bareBrotli = await startProcess('bench/serve-bare.ts', {
      BARE_BODY_FILE: brotli.bodyFile,
      BARE_HEADERS_FILE: brotli.headersFile,
    });
    const bareKoa = await startProcess('bench/serve-bare.ts', {
      BARE_BODY_FILE: plain.bodyFile,
      BARE_HEADERS_FILE: plain.headersFile,
      BARE_KOA: '1',
    });
    try {
      console.log(`${path} answers ${plain.bytes} bytes (ETag ${plain.etag}), ${brotli.bytes} with brotli (ETag ${brotli.etag})`);
      const ok200 = await compare(
        { label: 'bare node http, same bytes (200)', options: { ...at(bare, path) } },
        { label: 'GET /v1/students?size=300, warm (200)', options: { ...at(app, path), headers } },
      );
      const br200 = await compare(
        {
          label: 'bare node http, same brotli bytes (200)',
          options: { ...at(bareBrotli, path), headers: { 'Accept-Encoding': 'br' } },
        },
        {
          label: 'GET /v1/students?size=300, warm, br (200)',
          options: { ...at(app, path), headers: { ...headers, 'Accept-Encoding': 'br' } },
        },
      );
      const bare304 = {
        label: 'bare node http, 304',
        options: { ...at(bare, path), headers: { 'If-None-Match': plain.etag }, expectStatus: 304 },
      };
      const ok304 = await compare(bare304, {
        label: 'GET /v1/students?size=300, If-None-Match (304)',
        options: { ...at(app, path), headers: { ...headers, 'If-None-Match': plain.etag }, expectStatus: 304 },
      });
      // What Koa itself allows before any middleware of ours runs (docs/benchmarks.md).
      const koa304 = await compare(bare304, {
        label: 'bare Koa, one middleware, 304',
        options: { ...at(bareKoa, path), headers: { 'If-None-Match': plain.etag }, expectStatus: 304 },
      });
      return report('Data API (10 connections; after a warm-up, median of 5 alternating 2 s rounds)', [
        { figures: cold, baseline: ok200.baseline },
        { figures: ok200.baseline },
        { figures: ok200.subject, baseline: ok200.baseline, target: 0.3 },
        { figures: br200.baseline },
        { figures: br200.subject, baseline: br200.baseline, target: 0.8 },
        { figures: ok304.baseline },
        { figures: ok304.subject, baseline: ok304.baseline, target: 0.3 },
        { figures: koa304.subject, baseline: koa304.baseline },
      ]);
    } finally {
      await bare.stop();
      await bareBrotli.stop();
      await bareKoa.stop();
    }
  } finally {
    await app.stop();
    rmSync(dir, { recursive: true, force: true });
    await db.close();
    await database.stop();
  }
}

/** Where a load goes: `path` on a bench server, whose process is named for its CPU time per answer. */
function at(server: { url: string; child: { pid?: number | undefined } }, path: string): { url: string; serverPid: number | undefined } {
  return { url: server.url + path, serverPid: server.child.pid };
}

/**
 * The service's 200 and 304 for `url` with `headers`, exactly as sent (no decompression, unlike
 * fetch), written to files for the bare server to answer with the same bytes.
 */
async function recordAnswers(
  url: string,
  headers: Record<string, string>,
  dir: string,
  name: string,
): Promise<{ bodyFile: string; headersFile: string; etag: string; bytes: number }> {
  const first = await rawGet(url, headers);
  const etag = String(first.headers.etag ?? '');
  const revalidated = await rawGet(url, { ...headers, 'If-None-Match': etag });
  const bodyFile = join(dir, `${name}.body`);
  const headersFile = join(dir, `${name}.headers.json`);
  writeFileSync(bodyFile, first.body);
  writeFileSync(headersFile, JSON.stringify({ ok: recordedHeaders(first.headers), notModified: recordedHeaders(revalidated.headers) }));
  return { bodyFile, headersFile, etag, bytes: first.body.length };
}

function rawGet(url: string, headers: Record<string, string>): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((done, fail) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', fail);
  });
}

/** The headers the service sent, for the bare server to send the same bytes; Node adds these three itself. */
function recordedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const own = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
  for (const name of ['date', 'connection', 'keep-alive']) delete own[name];
  return own;
}

/** First requests: each of 22 distinct queries once, so none is answered from the cache. */
async function coldRequests(url: string, headers: Record<string, string>): Promise<Figures> {
  const times: number[] = [];
  let failures = 0;
  const started = performance.now();
  for (const sortBy of STUDENT_SORTS) {
    for (const direction of ['ASC', 'DESC']) {
      const t0 = performance.now();
      const res = await fetch(`${url}/v1/students?size=300&sortBy=${sortBy}&sortDirection=${direction}`, { headers });
      await res.arrayBuffer();
      times.push(performance.now() - t0);
      if (res.status !== 200) failures++;
    }
  }
  const elapsed = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
  return { label: 'GET /v1/students?size=300, first request (cold)', rps: times.length / elapsed, p50: at(0.5), p99: at(0.99), failures };
}
