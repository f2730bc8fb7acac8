import type { StatusBoard } from '../data/operations/status.js';
import type { AppMiddleware } from './context.js';
import { codedEtag, compress, COMPRESS_MIN_BYTES, etagOf, matchesIfNoneMatch, negotiateCoding, type ContentCoding } from './compression.js';
import { successEnvelope } from './envelope.js';

export const STATUS_PATH = '/v1/status';

/** One representation of the report: its bytes and strong ETag, and its coded forms as they are asked for. */
interface Representation {
  readonly body: Buffer;
  readonly etag: string;
  readonly coded: Map<ContentCoding, Promise<Buffer>>;
}

/**
 * GET /v1/status: the status page's report (src/data/operations/status.ts) in the success
 * envelope, always 200 (a part that is down is what it reports). No key, no database round trip
 * per request (the board answers from the minute's checks and what it read last); cacheable like
 * the other answers without a key: a strong ETag of the body, `Cache-Control: private, no-cache`,
 * 304 to a matching If-None-Match, compressed when asked (br, gzip).
 */
export function statusHandler(board: StatusBoard): AppMiddleware {
  let last: Representation | undefined;
  const representationOf = (report: unknown): Representation => {
    const body = Buffer.from(JSON.stringify(successEnvelope(report)));
    const etag = etagOf(body);
    if (last?.etag !== etag) last = { body, etag, coded: new Map() };
    return last;
  };
  return async (ctx) => {
    const answer = representationOf(await board.report());
    const coding = answer.body.length >= COMPRESS_MIN_BYTES ? negotiateCoding(ctx) : undefined;
    ctx.set('ETag', coding ? codedEtag(answer.etag, coding) : answer.etag);
    ctx.set('Cache-Control', 'private, no-cache');
    ctx.vary('Accept-Encoding');
    if (matchesIfNoneMatch(ctx.get('If-None-Match'), answer.etag)) {
      ctx.status = 304;
      return;
    }
    ctx.status = 200;
    ctx.type = 'application/json; charset=utf-8';
    if (!coding) {
      ctx.body = answer.body;
      return;
    }
    let coded = answer.coded.get(coding);
    if (!coded) {
      coded = compress(answer.body, coding);
      answer.coded.set(coding, coded);
    }
    ctx.set('Content-Encoding', coding);
    ctx.body = await coded;
  };
}
