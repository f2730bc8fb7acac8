import type { Collection } from 'mongoose';
import { isDuplicateKey } from './errors.js';

export type VersionKind = 'data' | 'keys' | 'oauth';
export interface VersionStamp {
  readonly data: number;
  readonly keys: number;
  /** Moves when an account changes or a grant is revoked: what userinfo and access tokens rest on. */
  readonly oauth: number;
}

/** How a process tells the others that it moved a version (src/data/version-bus.ts: Redis pub/sub). */
export interface VersionAnnouncer {
  announce(kind: VersionKind): void;
}

const VERSION_KINDS: readonly VersionKind[] = ['data', 'keys', 'oauth'];
const DOC_ID = 'versions';

/**
 * A shared clock of changes: every write of served data bumps `data`, every change to API keys
 * bumps `keys`, every change to an account and every revocation of an OAuth grant bumps `oauth`. Answers are cached per version, so a change is visible at once in the writing
 * process; in every other one (other instances, the `campus` CLI) within `maxAgeMs`, or at once
 * when the processes share Redis (src/data/version-bus.ts): a bump is announced there, and each
 * process drops its cached stamp the moment it hears of one.
 */
export class DataVersions {
  private cached: { stamp: VersionStamp; readAt: number } | undefined;
  private inFlight: Promise<VersionStamp> | undefined;
  /** Moves on every invalidation, so that a read begun before it cannot cache what it saw. */
  private epoch = 0;
  private announcer: VersionAnnouncer | undefined;

  constructor(
    private readonly meta: Collection,
    private readonly maxAgeMs = 1000,
  ) {}

  /** The cached stamp while it is fresh, without a promise (the hot path), else undefined. */
  peek(now = Date.now()): VersionStamp | undefined {
    return this.cached && now - this.cached.readAt < this.maxAgeMs ? this.cached.stamp : undefined;
  }

  /** The current stamp, read from the database at most once per `maxAgeMs`. */
  async current(now = Date.now()): Promise<VersionStamp> {
    if (this.cached && now - this.cached.readAt < this.maxAgeMs) return this.cached.stamp;
    if (this.inFlight) return this.inFlight;
    const reading = this.read().finally(() => {
      if (this.inFlight === reading) this.inFlight = undefined;
    });
    this.inFlight = reading;
    return reading;
  }

  /** Records a change of the given kind; visible to this process immediately, and announced to the others. */
  async bump(kind: VersionKind): Promise<void> {
    await this.increment(kind);
    this.invalidate();
    this.announcer?.announce(kind);
  }

  /**
   * Two first bumps racing to create the document: one upsert inserts it and the other fails on
   * the duplicate `_id` (MongoDB and FerretDB alike); the document now exists, so that second
   * increment is simply made again.
   */
  private async increment(kind: VersionKind): Promise<void> {
    const inc = () => this.meta.updateOne({ _id: DOC_ID } as never, { $inc: { [kind]: 1 } }, { upsert: true });
    try {
      await inc();
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      await inc();
    }
  }

  /**
   * Forgets the cached stamp (and any read already on its way, which may predate the change):
   * the next caller reads the database. Called after a bump here and when another process
   * announces one.
   */
  invalidate(): void {
    this.epoch += 1;
    this.cached = undefined;
    this.inFlight = undefined;
  }

  /** Announces this process's bumps through `announcer` (one per process; undefined: stop). */
  announceWith(announcer: VersionAnnouncer | undefined): void {
    this.announcer = announcer;
  }

  /** The stamp as the database holds it now (no cache): for work that must not miss a change. */
  async readFresh(): Promise<VersionStamp> {
    return this.read();
  }

  /**
   * Sets every version past `floor` and the stored ones (after a restore replaced the meta
   * collection), so no instance can mistake the restored data for what it cached before.
   */
  async moveBeyond(floor: VersionStamp): Promise<void> {
    const stored = await this.read();
    const next = {
      data: Math.max(floor.data, stored.data) + 1,
      keys: Math.max(floor.keys, stored.keys) + 1,
      oauth: Math.max(floor.oauth, stored.oauth) + 1,
    };
    await this.meta.updateOne({ _id: DOC_ID } as never, { $set: next }, { upsert: true });
    this.invalidate();
    for (const kind of VERSION_KINDS) this.announcer?.announce(kind);
  }

  private async read(): Promise<VersionStamp> {
    const epoch = this.epoch;
    const doc = await this.meta.findOne({ _id: DOC_ID } as never);
    const stamp = { data: Number(doc?.['data'] ?? 0), keys: Number(doc?.['keys'] ?? 0), oauth: Number(doc?.['oauth'] ?? 0) };
    // A change heard of while this read was under way may be newer than what it saw.
    if (epoch === this.epoch) this.cached = { stamp, readAt: Date.now() };
    return stamp;
  }
}
