import { LRUCache } from 'lru-cache';
import { compress, type ContentCoding } from '../http/compression.js';
// Where it is defined (src/http/compression.ts) the API reference's files use it too.
export { etagOf, matchesIfNoneMatch } from '../http/compression.js';

/**
 * A finished REST answer: the exact bytes and the strong ETag derived from them, and the coded
 * representations made so far (src/http/compression.ts), each made once, on first request.
 */
export interface CachedAnswer {
  readonly body: Buffer;
  readonly etag: string;
  encoded?: Partial<Record<ContentCoding, Buffer>>;
}

/** Told of every lookup (src/http/metrics.ts counts hits and misses). */
export type CacheLookupListener = (hit: boolean) => void;

/**
 * Answers keyed by (query, data version). An answer is a pure function of the query and the
 * data, so a repeated query at the same data version is served without running it again; a new
 * version makes every older entry unreachable. Bounded by total bytes, least recently used
 * dropped first.
 */
export class ResponseCache {
  private readonly entries: LRUCache<string, { version: number; answer: CachedAnswer }>;
  /** Compressions under way, so concurrent requests for one representation share one. */
  private readonly compressing = new WeakMap<CachedAnswer, Map<ContentCoding, Promise<Buffer>>>();

  constructor(
    maxBytes = 64 * 1024 * 1024,
    private readonly onLookup?: CacheLookupListener,
  ) {
    this.entries = new LRUCache({ maxSize: maxBytes, sizeCalculation: (entry) => Math.max(1, answerBytes(entry.answer)) });
  }

  get(key: string, version: number): CachedAnswer | undefined {
    const entry = this.entries.get(key);
    const answer = entry && entry.version === version ? entry.answer : undefined;
    this.onLookup?.(answer !== undefined);
    return answer;
  }

  set(key: string, version: number, answer: CachedAnswer): void {
    this.entries.set(key, { version, answer });
  }

  /**
   * The answer's bytes in `coding`: compressed on the first request that asks for it, then kept
   * on the answer, and the entry stored again so the byte budget counts the coded bytes too.
   */
  async encoded(key: string, version: number, answer: CachedAnswer, coding: ContentCoding): Promise<Buffer> {
    const done = answer.encoded?.[coding];
    if (done) return done;
    const pending = this.compressing.get(answer) ?? new Map<ContentCoding, Promise<Buffer>>();
    this.compressing.set(answer, pending);
    let running = pending.get(coding);
    if (!running) {
      running = compress(answer.body, coding).then((bytes) => {
        answer.encoded = { ...answer.encoded, [coding]: bytes };
        pending.delete(coding);
        const entry = this.entries.peek(key);
        if (entry?.answer === answer) this.entries.set(key, { version, answer });
        return bytes;
      });
      pending.set(coding, running);
    }
    return running;
  }
}

function answerBytes(answer: CachedAnswer): number {
  return answer.body.length + (answer.encoded?.gzip?.length ?? 0) + (answer.encoded?.br?.length ?? 0);
}
