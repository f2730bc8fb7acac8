import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildStudent, insertSchool, issueKey } from '../helpers/factories.js';
import { ResponseCache, etagOf, matchesIfNoneMatch } from '../../src/rest/response-cache.js';

/**
 * Compression of the data API's answers (src/http/compression.ts, src/rest/handler.ts): gzip and
 * brotli for answers over 1 KB when Accept-Encoding asks, q-values honoured, identity otherwise;
 * `Vary: Accept-Encoding` on every answer. ETags differ per encoding (strong ETags, and the
 * bytes differ: `"<hash>"`, `"<hash>-gz"`, `"<hash>-br"`), and If-None-Match naming any of them
 * is answered 304. Requests go through node:http, not fetch(), which would ask for gzip itself
 * and decode the body before the test could see its bytes.
 */

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

describe('data API: compression of answers (src/http/compression.ts)', function () {
  this.timeout(60000);
  let t: TestApp;
  let key: string;

  before(async () => {
    t = await buildTestApp('compression');
    await insertSchool(t.db, { students: Array.from({ length: 40 }, (_, i) => buildStudent({ _id: i + 1, number: (i % 30) + 1 })) });
    key = await issueKey(t.db);
  });
  after(async () => {
    await t.close();
  });

  /** GET with exactly these headers (and the key); the raw bytes as sent. */
  function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
    return new Promise((done, fail) => {
      const req = request(`${t.url}${path}`, { method, headers: { 'X-API-KEY': key, ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', fail);
      });
      req.on('error', fail);
      req.end();
    });
  }

  const LARGE = '/v1/students?size=40';

  async function identity(): Promise<Raw> {
    const plain = await get(LARGE);
    expect(plain.status).to.equal(200);
    expect(plain.body.length).to.be.greaterThan(1024);
    return plain;
  }

  it('sends identity without Accept-Encoding, with Vary and an exact Content-Length', async () => {
    const plain = await identity();
    expect(plain.headers['content-encoding']).to.equal(undefined);
    expect(plain.headers.vary).to.equal('Accept-Encoding');
    expect(plain.headers['content-length']).to.equal(String(plain.body.length));
    expect(plain.headers.etag).to.match(/^"[A-Za-z0-9_-]{32}"$/);
    expect((JSON.parse(plain.body.toString('utf8')) as { status: string }).status).to.equal('OK');
  });

  it('sends gzip when asked: the bytes decompress to the identity answer, its own strong ETag', async () => {
    const plain = await identity();
    const gz = await get(LARGE, { 'Accept-Encoding': 'gzip' });
    expect([gz.status, gz.headers['content-encoding'], gz.headers.vary]).to.deep.equal([200, 'gzip', 'Accept-Encoding']);
    expect(gz.headers['content-length']).to.equal(String(gz.body.length));
    expect(gz.body.length).to.be.lessThan(plain.body.length);
    expect(gunzipSync(gz.body).equals(plain.body)).to.equal(true);
    expect(gz.headers.etag).to.equal(`${plain.headers.etag?.slice(0, -1)}-gz"`);
    expect(gz.headers['content-type']).to.equal('application/json; charset=utf-8');
  });

  it('sends brotli when asked: the bytes decompress to the identity answer, its own strong ETag', async () => {
    const plain = await identity();
    const br = await get(LARGE, { 'Accept-Encoding': 'br' });
    expect([br.status, br.headers['content-encoding'], br.headers.vary]).to.deep.equal([200, 'br', 'Accept-Encoding']);
    expect(br.headers['content-length']).to.equal(String(br.body.length));
    expect(brotliDecompressSync(br.body).equals(plain.body)).to.equal(true);
    expect(br.headers.etag).to.equal(`${plain.headers.etag?.slice(0, -1)}-br"`);
  });

  it('honours q-values: the higher wins, q=0 refuses a coding, identity when none is acceptable', async () => {
    const cases: [string, string | undefined][] = [
      ['gzip;q=0.5, br', 'br'],
      ['br;q=0.2, gzip;q=0.9', 'gzip'],
      ['gzip, deflate', 'gzip'],
      ['br;q=0, gzip', 'gzip'],
      ['gzip;q=0', undefined],
      ['br;q=0, gzip;q=0', undefined],
      ['identity', undefined],
      ['deflate', undefined],
      ['*', 'br'],
      ['*;q=0, identity', undefined],
      // Even identity refused: identity all the same (RFC 9110 section 12.5.3), never a 406.
      ['gzip;q=0, br;q=0, identity;q=0', undefined],
    ];
    const plain = await identity();
    for (const [accept, expected] of cases) {
      const res = await get(LARGE, { 'Accept-Encoding': accept });
      expect([accept, res.status, res.headers['content-encoding'], res.headers.vary]).to.deep.equal([
        accept,
        200,
        expected,
        'Accept-Encoding',
      ]);
      const decoded = expected === 'gzip' ? gunzipSync(res.body) : expected === 'br' ? brotliDecompressSync(res.body) : res.body;
      expect(decoded.equals(plain.body), accept).to.equal(true);
    }
  });

  it('answers 304 to If-None-Match naming any encoding of the answer, with the ETag it would send, Vary, no body', async () => {
    const plain = await identity();
    const plainEtag = String(plain.headers.etag);
    const gzEtag = String((await get(LARGE, { 'Accept-Encoding': 'gzip' })).headers.etag);
    const brEtag = String((await get(LARGE, { 'Accept-Encoding': 'br' })).headers.etag);
    expect(new Set([plainEtag, gzEtag, brEtag]).size).to.equal(3);

    for (const held of [plainEtag, gzEtag, brEtag, `W/${gzEtag}`, `"other", ${brEtag}`]) {
      for (const [accept, etag] of [
        ['gzip', gzEtag],
        ['br', brEtag],
        ['identity', plainEtag],
      ] as const) {
        const res = await get(LARGE, { 'Accept-Encoding': accept, 'If-None-Match': held });
        expect([
          held,
          accept,
          res.status,
          res.headers.etag,
          res.headers.vary,
          res.headers['content-encoding'],
          res.body.length,
        ]).to.deep.equal([held, accept, 304, etag, 'Accept-Encoding', undefined, 0]);
      }
    }
    // Another answer's ETag, with its coding suffix: not a match.
    const other = await get('/v1/students?size=39', { 'Accept-Encoding': 'gzip', 'If-None-Match': gzEtag });
    expect([other.status, other.headers['content-encoding']]).to.deep.equal([200, 'gzip']);
  });

  it('a data change gives new ETags for every encoding', async () => {
    const before = await get(LARGE, { 'Accept-Encoding': 'br' });
    await insertSchool(t.db, { students: [buildStudent({ _id: 41, number: 5 })] });
    const after = await get(LARGE, { 'Accept-Encoding': 'br', 'If-None-Match': String(before.headers.etag) });
    expect(after.status).to.equal(200);
    expect(after.headers.etag).not.to.equal(before.headers.etag);
    expect(
      (JSON.parse(brotliDecompressSync(after.body).toString('utf8')) as { data: { totalElements: number } }).data.totalElements,
    ).to.equal(41);
  });

  it('HEAD gives the Content-Length of the coded body, and no body', async () => {
    const gz = await get(LARGE, { 'Accept-Encoding': 'gzip' });
    const head = await get(LARGE, { 'Accept-Encoding': 'gzip' }, 'HEAD');
    expect([head.status, head.headers['content-encoding'], head.headers['content-length'], head.body.length]).to.deep.equal([
      200,
      'gzip',
      String(gz.body.length),
      0,
    ]);
  });

  it('leaves answers of 1 KB or less as they are, still with Vary', async () => {
    const small = await get('/v1/students?size=1', { 'Accept-Encoding': 'gzip, br' });
    expect(small.status).to.equal(200);
    expect(small.body.length).to.be.at.most(1024);
    expect([small.headers['content-encoding'], small.headers.vary]).to.deep.equal([undefined, 'Accept-Encoding']);
    expect(small.headers.etag).to.match(/^"[A-Za-z0-9_-]{32}"$/);
  });
});

describe('data API: coded answers in the answer cache (src/rest/response-cache.ts)', () => {
  it('compresses a representation once, even for concurrent requests, and keeps it with the answer', async () => {
    const cache = new ResponseCache();
    const body = Buffer.from(JSON.stringify({ status: 'OK', data: Array.from({ length: 200 }, (_, i) => ({ id: i })) }));
    const answer = { body, etag: etagOf(body) };
    cache.set('k', 1, answer);
    const [first, second] = await Promise.all([cache.encoded('k', 1, answer, 'br'), cache.encoded('k', 1, answer, 'br')]);
    expect(first).to.equal(second);
    expect(await cache.encoded('k', 1, answer, 'br')).to.equal(first);
    expect(cache.get('k', 1)?.encoded?.br).to.equal(first);
    expect(brotliDecompressSync(first).equals(body)).to.equal(true);
  });

  it('counts coded bytes in its byte budget', async () => {
    // Random bytes do not compress: the gzip form is about as large as the body.
    const cache = new ResponseCache(2500);
    const a = { body: randomBytes(1000), etag: '"a"' };
    cache.set('a', 1, a);
    cache.set('b', 1, { body: randomBytes(1000), etag: '"b"' });
    expect([cache.get('a', 1)?.etag, cache.get('b', 1)?.etag]).to.deep.equal(['"a"', '"b"']);
    await cache.encoded('a', 1, a, 'gzip');
    expect([cache.get('a', 1)?.etag, cache.get('b', 1)]).to.deep.equal(['"a"', undefined]);
  });

  it('matches If-None-Match naming any coding of the answer, and nothing else', () => {
    const etag = etagOf(Buffer.from('{}'));
    const bare = etag.slice(1, -1);
    for (const held of [`"${bare}-gz"`, `"${bare}-br"`, `W/"${bare}-gz"`, `"x", "${bare}-br"`])
      expect(matchesIfNoneMatch(held, etag), held).to.equal(true);
    for (const held of [`"${bare}-zz"`, `"${bare}-gz-gz"`, `"${bare.slice(1)}-gz"`, `"${bare}"-gz`])
      expect(matchesIfNoneMatch(held, etag), held).to.equal(false);
  });
});
