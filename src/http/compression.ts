import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { AppContext } from './context.js';

/** The content codings the data API sends besides identity (RFC 9110 section 8.4.1). */
export type ContentCoding = 'br' | 'gzip';

/** Answers up to this size go as they are: below it the coding costs more than the bytes saved. */
export const COMPRESS_MIN_BYTES = 1024;

/**
 * Brotli quality 5 of 11 (and gzip's default level 6): each representation is compressed once
 * and kept with its ETag in the answer cache (src/rest/response-cache.ts), but that once is paid
 * by the first request after every data change, on the request path. Quality 5 already gets most
 * of brotli's gain over gzip on JSON at a few milliseconds for a large page; 11 takes a hundred
 * times longer for a few per cent more.
 */
const BROTLI_QUALITY = 5;

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Compresses `body` in libuv's thread pool, off the event loop. */
export function compress(body: Buffer, coding: ContentCoding): Promise<Buffer> {
  if (coding === 'gzip') return gzipAsync(body);
  return brotli(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  });
}

/**
 * The coding the request's Accept-Encoding asks for, with q-values honoured (Koa's negotiator;
 * ties go to the client's own order), or undefined for identity: no header, `identity`, only
 * codings we do not have, or both of ours at q=0. When even identity is refused (`identity;q=0`
 * with nothing else acceptable) identity is sent all the same, which RFC 9110 section 12.5.3
 * allows instead of a 406.
 */
export function negotiateCoding(ctx: AppContext): ContentCoding | undefined {
  const header = ctx.get('Accept-Encoding');
  if (!header) return undefined;
  // Clients send a handful of distinct headers; each is negotiated once (a 304's ETag needs it too).
  const known = negotiated.get(header);
  if (known !== undefined) return known || undefined;
  const chosen = ctx.acceptsEncodings('br', 'gzip', 'identity');
  const coding = chosen === 'br' || chosen === 'gzip' ? chosen : undefined;
  if (negotiated.size >= MAX_NEGOTIATED) negotiated.clear();
  negotiated.set(header, coding ?? '');
  return coding;
}

/** Accept-Encoding headers already negotiated ('' for identity), bounded: a flood of odd headers empties it. */
const negotiated = new Map<string, ContentCoding | ''>();
const MAX_NEGOTIATED = 256;

/**
 * The strong ETag of a coded representation: its bytes differ from identity's, so its strong
 * validator must differ too (RFC 9110 section 8.8.3); the coding is appended inside the quotes.
 */
export function codedEtag(etag: string, coding: ContentCoding): string {
  return `${etag.slice(0, -1)}-${coding === 'gzip' ? 'gz' : 'br'}"`;
}

/** Strong ETag of a body: a hash of the exact bytes, so any change to them changes it. */
export function etagOf(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

/**
 * RFC 9110 section 13.1.2: weak comparison of If-None-Match against our ETag (`*` and lists
 * allowed). Koa's `ctx.fresh` is not used: it calls every request with `Cache-Control: no-cache`
 * stale, and fetch() adds that header to any request that carries If-None-Match (the Fetch
 * standard's "no-store" cache mode), so browser and Node clients would never get a 304. The
 * directive is addressed to caches, not to the origin server (RFC 9111 section 5.2.1.4).
 * `etag` is the identity representation's; a candidate naming any coded representation of the
 * same answer (`"...-gz"`, `"...-br"`, src/http/compression.ts) matches too: it is the same
 * content, so a client that switched encodings still gets its 304.
 */
export function matchesIfNoneMatch(header: string, etag: string): boolean {
  if (header === etag) return true; // what a client that kept our ETag sends
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  const same = new Set([bare, codedEtag(bare, 'gzip'), codedEtag(bare, 'br')]);
  return header.split(',').some((candidate) => same.has(candidate.trim().replace(/^W\//, '')));
}
