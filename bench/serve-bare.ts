// The baseline: a bare Node http server answering the same bytes as the service: the same
// status, headers and body for the 200, and the same headers for the 304. With BARE_KOA=1, the
// same answers from a Koa app of one middleware: the ceiling of any Koa service (a reference row).
import { readFileSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import Koa from 'koa';
import { listenOnLoopback, serve } from './serve.js';

interface Recorded {
  /** Headers of the service's 200 and 304 answers, as it sent them (minus Date, Connection, Keep-Alive). */
  readonly ok: Record<string, string>;
  readonly notModified: Record<string, string>;
}

const body = readFileSync(process.env['BARE_BODY_FILE'] ?? '');
const recorded = JSON.parse(readFileSync(process.env['BARE_HEADERS_FILE'] ?? '', 'utf8')) as Recorded;
const etag = recorded.ok['etag'];
const answer: RequestListener = (req, res) => {
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, recorded.notModified);
    res.end();
    return;
  }
  res.writeHead(200, recorded.ok);
  res.end(body);
};
const koa = new Koa();
koa.use((ctx) => {
  const notModified = ctx.get('If-None-Match') === etag;
  ctx.set(notModified ? recorded.notModified : recorded.ok);
  if (notModified) ctx.status = 304;
  else ctx.body = body;
});
const { server, url } = await listenOnLoopback();
serve(server, url, process.env['BARE_KOA'] === '1' ? koa.callback() : answer);
