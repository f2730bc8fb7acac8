import { LRUCache } from 'lru-cache';
import type { DataVersions, TargetedCache, VersionKind } from './versions.js';

/**
 * Look-ups remembered per process until what they rest on changes (src/data/platform/versions.ts): every
 * write that could change an answer is a change of one kind of the shared clock that names what
 * it touched (`cacheTarget`), heard in this process at once and in the others as soon as they
 * hear of it (src/data/platform/version-bus.ts). An entry goes when a change names one of its targets
 * (`targetsOf`), and every entry of the kind goes when this process cannot account for a change
 * (its generation moved). A value loaded while a change of the kind was heard of is not
 * remembered: it may predate the change. Absent values are not remembered: what appears later
 * (a new grant) is found when it exists.
 */
export class RememberedLookups<K extends NonNullable<unknown>, V extends NonNullable<unknown>> implements TargetedCache {
  private readonly cache: LRUCache<K, { value: V; generation: number }>;

  constructor(
    private readonly versions: DataVersions,
    private readonly kind: VersionKind,
    max: number,
    private readonly load: (key: K) => Promise<V | undefined>,
    /** What an entry rests on (cacheTarget): a change naming one of them forgets it. */
    private readonly targetsOf: (key: K, value: V) => readonly string[],
    /** False for a remembered value that went stale on its own (e.g. it expired). */
    private readonly stillGood: (value: V) => boolean = () => true,
  ) {
    this.cache = new LRUCache({ max });
    versions.watch(kind, this);
  }

  async get(key: K): Promise<V | undefined> {
    const generation = await this.versions.generation(this.kind);
    const hit = this.cache.get(key);
    if (hit && hit.generation === generation && this.stillGood(hit.value)) return hit.value;
    const changes = this.versions.changesOf(this.kind);
    const value = await this.load(key);
    if (value === undefined || this.versions.changesOf(this.kind) !== changes) this.cache.delete(key);
    else this.cache.set(key, { value, generation });
    return value;
  }

  /**
   * Remembers a value this process has just written, so that its next look-up reads nothing
   * (write-through). Whatever changes it later names it, as for any remembered value.
   */
  async remember(key: K, value: V): Promise<void> {
    this.cache.set(key, { value, generation: await this.versions.generation(this.kind) });
  }

  /** Forgets a value (e.g. one used up). */
  forget(key: K): void {
    this.cache.delete(key);
  }

  /** Forgets every entry that rests on one of `targets` (DataVersions calls it). */
  forgetTargets(targets: ReadonlySet<string>): void {
    const gone: K[] = [];
    for (const [key, { value }] of this.cache.entries()) {
      if (this.targetsOf(key, value).some((target) => targets.has(target))) gone.push(key);
    }
    for (const key of gone) this.cache.delete(key);
  }
}
