import { LRUCache } from 'lru-cache';
import type { DataVersions, VersionKind } from './versions.js';

/**
 * Look-ups remembered per process while one kind of the shared version clock stands still
 * (src/data/versions.ts): every write that could change an answer moves that kind, in this
 * process at once and in the others as soon as they hear of it (src/data/version-bus.ts), so a
 * remembered answer is never used past a change. The version is read before the value, so a
 * value read while a change was being made is remembered under the old version, never the new.
 * Absent values are not remembered: what appears later (a new grant) is found when it exists.
 */
export class RememberedLookups<K extends NonNullable<unknown>, V extends NonNullable<unknown>> {
  private readonly cache: LRUCache<K, { value: V; version: number }>;

  constructor(
    private readonly versions: DataVersions,
    private readonly kind: VersionKind,
    max: number,
    private readonly load: (key: K) => Promise<V | undefined>,
    /** False for a remembered value that went stale on its own (e.g. it expired). */
    private readonly stillGood: (value: V) => boolean = () => true,
  ) {
    this.cache = new LRUCache({ max });
  }

  async get(key: K): Promise<V | undefined> {
    const version = await this.version();
    const hit = this.cache.get(key);
    if (hit && hit.version === version && this.stillGood(hit.value)) return hit.value;
    const value = await this.load(key);
    if (value === undefined) this.cache.delete(key);
    else this.cache.set(key, { value, version });
    return value;
  }

  /**
   * Remembers a value this process has just written, so that its next look-up reads nothing
   * (write-through). Whatever changes it later moves the version, as for any remembered value.
   */
  async remember(key: K, value: V): Promise<void> {
    this.cache.set(key, { value, version: await this.version() });
  }

  /** Forgets a value (e.g. one used up). */
  forget(key: K): void {
    this.cache.delete(key);
  }

  private async version(): Promise<number> {
    return (this.versions.peek() ?? (await this.versions.current()))[this.kind];
  }
}
