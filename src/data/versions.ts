import type { Collection } from 'mongoose';

export type VersionKind = 'data' | 'keys';
export interface VersionStamp {
  readonly data: number;
  readonly keys: number;
}

const DOC_ID = 'versions';

/**
 * A shared clock of changes: every write of served data bumps `data`, every change to API keys
 * bumps `keys`. Answers are cached per version, so a change is visible at once in the writing
 * process and within `maxAgeMs` in every other one (other instances, the `campus` CLI).
 */
export class DataVersions {
  private cached: { stamp: VersionStamp; readAt: number } | undefined;
  private inFlight: Promise<VersionStamp> | undefined;

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
    this.inFlight ??= this.read().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** Records a change of the given kind; visible to this process immediately. */
  async bump(kind: VersionKind): Promise<void> {
    await this.meta.updateOne({ _id: DOC_ID } as never, { $inc: { [kind]: 1 } }, { upsert: true });
    this.cached = undefined;
  }

  private async read(): Promise<VersionStamp> {
    const doc = await this.meta.findOne({ _id: DOC_ID } as never);
    const stamp = { data: Number(doc?.['data'] ?? 0), keys: Number(doc?.['keys'] ?? 0) };
    this.cached = { stamp, readAt: Date.now() };
    return stamp;
  }
}
