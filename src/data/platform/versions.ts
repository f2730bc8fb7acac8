import { randomInt } from 'node:crypto';
import type { Collection } from 'mongoose';
import { isDuplicateKey } from './errors.js';

export type VersionKind = 'data' | 'keys' | 'oauth' | 'codes' | 'feed';
export interface VersionStamp {
  readonly data: number;
  readonly keys: number;
  /** Moves when an account changes or a grant is revoked: what userinfo and access tokens rest on. */
  readonly oauth: number;
  /** Moves when a mailed code is stored or removed (src/data/accounts/email-codes.ts). */
  readonly codes: number;
  /**
   * Moves when the change feed gains an event that leaves the served data as it was: a mass
   * change's announcement and its close (src/data/events/announcements.ts). The feed's answers
   * are cached per `data` and `feed` version (src/rest/endpoints.ts, `followsFeed`); the school's
   * read model rests on `data` alone, so an announcement does not make it load the school again
   * while the batch it announces is being written.
   */
  readonly feed: number;
}

/**
 * What a change touched, named so that every cache can tell which of its entries rest on it:
 * an API key, an account (its keys, grants, tokens and sessions, and the account itself), a
 * grant (the grant and everything issued under it), a client registration, one OAuth record.
 */
export const cacheTarget = {
  key: (id: string): string => `key:${id}`,
  account: (id: number | string): string => `account:${id}`,
  grant: (id: string): string => `grant:${id}`,
  client: (id: string): string => `client:${id}`,
  record: (key: string): string => `record:${key}`,
  /** A mailed code's slot (one per purpose and email: src/data/accounts/email-codes.ts). */
  code: (id: string): string => `code:${id}`,
} as const;

/**
 * A change of one kind, as this process makes it and as the others hear of it. With `targets`,
 * only what they name changed, and `previous` and `version` say which value of the kind the
 * change replaced and which it wrote: a process whose entries rest on `previous` forgets only
 * the targets and moves on to `version`; one that is anywhere else missed a change (or two
 * changes raced) and forgets everything of the kind. Without `targets`, anything of the kind may
 * have changed.
 */
export interface VersionChange {
  readonly kind: VersionKind;
  readonly targets?: readonly string[];
  readonly previous?: number;
  readonly version?: number;
}

/** How a process tells the others that it moved a version (src/data/platform/version-bus.ts: Redis pub/sub). */
export interface VersionAnnouncer {
  /** Resolves once the others can hear of it, or after a short bound (never rejects). */
  announce(change: VersionChange): Promise<void>;
}

/** A cache whose entries rest on one kind: told which targets changed (src/data/platform/remembered.ts, src/http/api-key.ts). */
export interface TargetedCache {
  forgetTargets(targets: ReadonlySet<string>): void;
}

export const VERSION_KINDS: readonly VersionKind[] = ['data', 'keys', 'oauth', 'codes', 'feed'];
/** One document per kind in `meta`, so that a write of one kind can never touch another. */
const DOC_IDS: Readonly<Record<VersionKind, string>> = {
  data: 'version:data',
  keys: 'version:keys',
  oauth: 'version:oauth',
  codes: 'version:codes',
  feed: 'version:feed',
};

/** One value per kind. */
function perKind<T>(value: (kind: VersionKind) => T): Record<VersionKind, T> {
  return { data: value('data'), keys: value('keys'), oauth: value('oauth'), codes: value('codes'), feed: value('feed') };
}

/** Versions are drawn from [1, 2^48): a repeat is practically impossible, and each is exact as a JavaScript number. */
const VERSION_RANGE = 2 ** 48;

/**
 * A version is a fresh random number, not a counter. FerretDB 1.24 applies an update as read,
 * modify, write without isolation (test/operations/versions.integration.test.ts shows it): concurrent
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
 * bumps `keys`, every change to an account or a client and every revocation of an OAuth grant
 * bumps `oauth`, every mailed code stored or removed bumps `codes`, an event that changes no
 * served data (a mass change's announcement) bumps `feed`. Answers are cached per `data` version, so a data change is visible at once in
 * the writing process; in every other one (other instances, the `campus` CLI) within `maxAgeMs`,
 * or at once when the processes share Redis (src/data/platform/version-bus.ts): a bump is announced
 * there, and each process drops its cached stamp the moment it hears of one.
 *
 * Keys, OAuth artifacts and mailed codes are remembered per entry instead (src/data/platform/remembered.ts,
 * src/http/api-key.ts, src/data/accounts/email-codes.ts), and a change of one names what it touched (`cacheTarget`): the
 * processes that hear of it forget only those entries, so a loop of key rotations or grant
 * revocations does not empty every instance's caches. What a process cannot account for (a
 * version it did not hear being written, two changes that raced, a change without targets, Redis
 * reconnecting) makes it forget everything of that kind: its `generation` moves.
 */
export class DataVersions {
  private cached: { stamp: VersionStamp; readAt: number } | undefined;
  private inFlight: Promise<VersionStamp> | undefined;
  /** Moves on every change heard of, so that a read begun before it cannot cache what it saw. */
  private epoch = 0;
  private announcer: VersionAnnouncer | undefined;
  /** Per kind, the stored value this process's remembered entries are valid at (undefined: not read yet). */
  private readonly known: Partial<Record<VersionKind, number>> = {};
  /** Per kind, moves whenever everything of the kind must be forgotten. */
  private readonly generations = perKind(() => 0);
  /** Per kind, moves on every change heard of: a value loaded meanwhile is not remembered. */
  private readonly changeCounts = perKind(() => 0);
  /** The caches told of targeted changes, per kind; held weakly (tests build many apps on one database). */
  private readonly caches = perKind(() => new Set<WeakRef<TargetedCache>>());

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
   * The generation of `kind` after the stamp was checked (at most `maxAgeMs` ago): an entry
   * remembered at another generation is stale. Synchronous when the stamp is fresh.
   */
  generation(kind: VersionKind): number | Promise<number> {
    return this.peekGeneration(kind) ?? this.current().then(() => this.generations[kind]);
  }

  /** The generation of `kind` while the stamp is fresh, else undefined: reads nothing (the hot path). */
  peekGeneration(kind: VersionKind): number | undefined {
    return this.peek() ? this.generations[kind] : undefined;
  }

  /** How many changes of `kind` this process has heard of: compare before and after a load. */
  changesOf(kind: VersionKind): number {
    return this.changeCounts[kind];
  }

  /** Tells `cache` of every targeted change of `kind` (until it is garbage collected). */
  watch(kind: VersionKind, cache: TargetedCache): void {
    this.caches[kind].add(new WeakRef(cache));
  }

  /**
   * Records a change of the given kind; visible to this process immediately, and announced to the
   * others before it returns, so that the answer to the change (a revocation's 200) leaves after
   * the other processes were told: a client's next request, at any of them, sees the change.
   * With `targets` (cacheTarget), caches forget only those; the value replaced is read first,
   * so that the others can tell whether they missed a change.
   */
  async bump(kind: VersionKind, targets?: readonly string[]): Promise<void> {
    const previous = targets ? (await this.read())[kind] : undefined;
    const version = freshVersion();
    await this.renew(kind, version);
    const change: VersionChange = targets ? { kind, targets, previous, version } : { kind };
    this.hear(change);
    await this.announcer?.announce(change);
  }

  /**
   * Everything of one account was changed (disabled, deleted): its API keys, and its grants,
   * tokens, sessions and the account itself, as remembered anywhere, are forgotten at once.
   */
  async bumpAccount(accountId: number | string): Promise<void> {
    const targets = [cacheTarget.account(accountId)];
    await this.bump('keys', targets);
    await this.bump('oauth', targets);
  }

  /**
   * A change this process made or heard of from another (src/data/platform/version-bus.ts). A targeted
   * change that follows on the value this process's entries rest on drops only its targets;
   * anything else drops everything of its kind and the cached stamp, so the next caller reads
   * the database.
   */
  hear(change: VersionChange): void {
    const { kind, targets, previous, version } = change;
    this.epoch += 1;
    this.changeCounts[kind] += 1;
    if (targets && previous !== undefined && version !== undefined && this.known[kind] === previous) {
      this.known[kind] = version;
      if (this.cached) this.cached = { stamp: { ...this.cached.stamp, [kind]: version }, readAt: this.cached.readAt };
      this.tell(kind, new Set(targets));
      return;
    }
    this.forgetKind(kind);
    this.cached = undefined;
    this.inFlight = undefined;
  }

  /**
   * Two first bumps racing to create the document: one upsert inserts it and the other fails on
   * the duplicate `_id` (MongoDB and FerretDB alike); the document now exists, so that second
   * write is simply made again.
   */
  private async renew(kind: VersionKind, value = freshVersion()): Promise<void> {
    const write = () => this.meta.updateOne({ _id: DOC_IDS[kind] } as never, { $set: { value } }, { upsert: true });
    try {
      await write();
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      await write();
    }
  }

  /**
   * Forgets everything remembered, of every kind, and the cached stamp (and any read already on
   * its way, which may predate a change): the next caller reads the database. Called when the
   * Redis connection comes (back) up: what was announced meanwhile was missed.
   */
  invalidate(): void {
    this.epoch += 1;
    for (const kind of VERSION_KINDS) {
      this.changeCounts[kind] += 1;
      this.forgetKind(kind);
    }
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
    if (announcer) await Promise.all(VERSION_KINDS.map((kind) => announcer.announce({ kind })));
  }

  private async read(): Promise<VersionStamp> {
    const epoch = this.epoch;
    const docs = await this.meta.find({ _id: { $in: Object.values(DOC_IDS) } } as never).toArray();
    const valueOf = (kind: VersionKind) => Number(docs.find((d) => d._id === (DOC_IDS[kind] as unknown))?.['value'] ?? 0);
    const stamp: VersionStamp = perKind(valueOf);
    // A change heard of while this read was under way may be newer than what it saw.
    if (epoch === this.epoch) {
      this.adopt(stamp);
      this.cached = { stamp, readAt: Date.now() };
    }
    return stamp;
  }

  /** A stored value this process did not hear being written: everything of that kind is forgotten. */
  private adopt(stamp: VersionStamp): void {
    for (const kind of VERSION_KINDS) {
      const known = this.known[kind];
      if (known !== undefined && known !== stamp[kind]) {
        this.changeCounts[kind] += 1;
        this.generations[kind] += 1;
      }
      this.known[kind] = stamp[kind];
    }
  }

  /** Everything of `kind` goes; the next read of the stamp sets what the new entries rest on. */
  private forgetKind(kind: VersionKind): void {
    this.generations[kind] += 1;
    delete this.known[kind];
  }

  private tell(kind: VersionKind, targets: ReadonlySet<string>): void {
    for (const ref of this.caches[kind]) {
      const cache = ref.deref();
      if (cache) cache.forgetTargets(targets);
      else this.caches[kind].delete(ref);
    }
  }
}
