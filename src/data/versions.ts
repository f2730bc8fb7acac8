import { randomInt } from 'node:crypto';
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
  /** Resolves once the others can hear of it, or after a short bound (never rejects). */
  announce(kind: VersionKind): Promise<void>;
}

const VERSION_KINDS: readonly VersionKind[] = ['data', 'keys', 'oauth'];
/** One document per kind in `meta`, so that a write of one kind can never touch another. */
const DOC_IDS: Readonly<Record<VersionKind, string>> = { data: 'version:data', keys: 'version:keys', oauth: 'version:oauth' };
/** Versions are drawn from [1, 2^48): a repeat is practically impossible, and each is exact as a JavaScript number. */
const VERSION_RANGE = 2 ** 48;

/**
 * A version is a fresh random number, not a counter. FerretDB 1.24 applies an update as read,
 * modify, write without isolation (test/integration/versions.test.ts shows it): concurrent
 * `$inc`s lose increments, and when the kinds shared one document a bump of one wrote back the
 * old value of another, returning it to a version whose cached answers predate a change (a revoked
 * key accepted again). A value written whole, each kind in its own document, cannot go back: of
 * concurrent bumps one value wins, and it is new.
 */
function freshVersion(): number {
  return randomInt(1, VERSION_RANGE);
}

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

  /**
   * Records a change of the given kind; visible to this process immediately, and announced to the
   * others before it returns, so that the answer to the change (a revocation's 200) leaves after
   * the other processes were told: a client's next request, at any of them, sees the change.
   */
  async bump(kind: VersionKind): Promise<void> {
    await this.renew(kind);
    this.invalidate();
    await this.announcer?.announce(kind);
  }

  /**
   * Two first bumps racing to create the document: one upsert inserts it and the other fails on
   * the duplicate `_id` (MongoDB and FerretDB alike); the document now exists, so that second
   * write is simply made again.
   */
  private async renew(kind: VersionKind): Promise<void> {
    const write = () => this.meta.updateOne({ _id: DOC_IDS[kind] } as never, { $set: { value: freshVersion() } }, { upsert: true });
    try {
      await write();
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      await write();
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
   * Gives every kind a fresh version: after a restore replaced the meta collection, so that no
   * process can mistake the restored data for what it cached before.
   */
  async bumpAll(): Promise<void> {
    await Promise.all(VERSION_KINDS.map((kind) => this.renew(kind)));
    this.invalidate();
    const announcer = this.announcer;
    if (announcer) await Promise.all(VERSION_KINDS.map((kind) => announcer.announce(kind)));
  }

  private async read(): Promise<VersionStamp> {
    const epoch = this.epoch;
    const docs = await this.meta.find({ _id: { $in: Object.values(DOC_IDS) } } as never).toArray();
    const valueOf = (kind: VersionKind) => Number(docs.find((d) => d._id === (DOC_IDS[kind] as unknown))?.['value'] ?? 0);
    const stamp = { data: valueOf('data'), keys: valueOf('keys'), oauth: valueOf('oauth') };
    // A change heard of while this read was under way may be newer than what it saw.
    if (epoch === this.epoch) this.cached = { stamp, readAt: Date.now() };
    return stamp;
  }
}
