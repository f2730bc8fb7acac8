import { createHash } from 'node:crypto';

/** A finished REST answer: the exact bytes and the strong ETag derived from them. */
export interface CachedAnswer {
  readonly body: Buffer;
  readonly etag: string;
}

/** Strong ETag of a body: a hash of the exact bytes, so any change to them changes it. */
export function etagOf(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

/**
 * Answers keyed by (query, data version). An answer is a pure function of the query and the
 * data, so a repeated query at the same data version is served without re-running it; a new
 * version makes every older entry unreachable. Bounded by total bytes, oldest dropped first.
 */
export class ResponseCache {
  private readonly entries = new Map<string, { version: number; answer: CachedAnswer }>();
  private bytes = 0;

  constructor(private readonly maxBytes = 64 * 1024 * 1024) {}

  get(key: string, version: number): CachedAnswer | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.version !== version) return undefined;
    // Re-insert to mark it recently used (Map keeps insertion order).
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.answer;
  }

  set(key: string, version: number, answer: CachedAnswer): void {
    const previous = this.entries.get(key);
    if (previous) {
      this.bytes -= previous.answer.body.length;
      this.entries.delete(key);
    }
    if (answer.body.length > this.maxBytes) return;
    this.entries.set(key, { version, answer });
    this.bytes += answer.body.length;
    for (const [oldKey, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldKey);
      this.bytes -= old.answer.body.length;
    }
  }
}

/** RFC 9110 weak comparison of If-None-Match against our ETag (`*` and lists allowed). */
export function matchesIfNoneMatch(header: string, etag: string): boolean {
  if (header === etag) return true; // what a client that kept our ETag sends
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === bare);
}
