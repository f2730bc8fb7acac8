import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './errors.js';
import { hasExited, thisProcess, type ProcessIdentity } from './process-identity.js';

/**
 * A lease: one holder at a time across every process sharing the database (the service's
 * instances and the `campus` command), kept in one document of `meta`. Inserting that document
 * decides who holds it (the one write FerretDB 1.x makes atomic: a unique `_id`; its updates are
 * read, modify, write without isolation, src/data/platform/versions.ts). The holder renews it on an
 * interval while it lives; it is taken over once it stops being renewed (expired) or, at once,
 * when its holder ran in this pid namespace and is gone (src/data/platform/process-identity.ts: a
 * `kill -9`'d `campus import` would otherwise refuse every write for the expiry). A holder on
 * another machine or in another container is never judged by its pid: it lives out its expiry.
 *
 * Each acquisition carries a fencing token, a number greater than that of every acquisition
 * before it. A holder that stalls past the expiry (a long pause, a frozen container) may wake up
 * after another process took the lease over; `stillHeld` is the check it makes before each
 * write that matters, and it fails from then on (docs/school-writes.md, "The write lease and its
 * fencing token", says where the school's writes make it).
 */
export interface LeaseDoc extends ProcessIdentity {
  readonly _id: string;
  /** The holding process's random id (OWNER): the pid and host above are for people to read. */
  readonly owner: string;
  /** The fencing token of this acquisition. */
  readonly token: number;
  readonly takenAt: Date;
  readonly expiresAt: Date;
}

/**
 * The highest token handed out for a lease, in `meta` as `<lease id>:token`. The lease document
 * goes when its holder releases it or another takes it over, so the count lives apart.
 */
interface TokenFloorDoc {
  readonly _id: string;
  readonly token: number;
}

export interface LeaseOptions {
  /** A lease not renewed for this long belongs to a holder that stopped. */
  readonly ttlMs?: number;
  /** How long `acquire` waits for a living holder before giving up. */
  readonly waitMs?: number;
}

/** Renewed three times per expiry, so one slow renewal does not lose it. */
export const LEASE_TTL_MS = 15_000;
const DEFAULT_WAIT_MS = 15_000;
/**
 * `stillHeld` answers yes only while at least this share of the expiry is left once its answer is
 * in: the time the next write takes to reach the database, and the most the clocks of the
 * machines that judge the expiry may disagree.
 */
const FENCE_MARGIN = 0.2;
/**
 * This process as a lease holder: random and made once, so that no two processes share it (two
 * containers with the same host name and pid do not), and one process is one holder to the others.
 */
const OWNER = randomUUID();

/** The process and machine a lease holder runs in, as the audit log names it. */
export function describeHolder(doc: Pick<LeaseDoc, 'pid' | 'host'>): string {
  return `pid ${doc.pid} on ${doc.host}`;
}

/** True when the lease's holder no longer renews it: expired, or gone from this pid namespace. */
export function isAbandoned(doc: Pick<LeaseDoc, 'pid' | 'pidSpace' | 'pidStart' | 'expiresAt'>, now = Date.now()): boolean {
  return doc.expiresAt.getTime() < now || hasExited(doc);
}

function leases(db: Db): Collection<LeaseDoc> {
  return db.collection<LeaseDoc>('meta');
}

function floors(db: Db): Collection<TokenFloorDoc> {
  return db.collection<TokenFloorDoc>('meta');
}

function floorId(id: string): string {
  return `${id}:token`;
}

/**
 * Raises the lease's token floor to `token` (never lowers it); returns the floor it found. Written
 * only by a new holder, right after its insert won, and by whoever takes over an abandoned lease,
 * before it deletes it: so the floor is never below the token of a lease document that is gone.
 */
async function raiseFloor(db: Db, id: string, token: number): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    try {
      const before = await floors(db).findOneAndUpdate(
        { _id: floorId(id) },
        { $max: { token } },
        { upsert: true, returnDocument: 'before' },
      );
      return before?.token ?? 0;
    } catch (err) {
      // Two first upserts of a new database race to create the document: the loser finds it made.
      if (!isDuplicateKey(err) || attempt > 0) throw err;
    }
  }
}

export class Lease {
  private readonly timer: NodeJS.Timeout;
  /** The expiry as this holder last wrote it (its own clock); past it, the lease is lost for good. */
  private expiresAt: number;
  private lost = false;

  private constructor(
    private readonly db: Db,
    readonly doc: LeaseDoc,
    private readonly ttlMs: number,
  ) {
    this.expiresAt = doc.expiresAt.getTime();
    this.timer = setInterval(() => this.renew(), ttlMs / 3);
    // A lease never keeps a finished command alive.
    this.timer.unref();
  }

  /** This acquisition's fencing token. */
  get token(): number {
    return this.doc.token;
  }

  /** The filter that finds this acquisition's document and no other (not even this process's next). */
  private get mine(): Pick<LeaseDoc, '_id' | 'owner' | 'token'> {
    return { _id: this.doc._id, owner: this.doc.owner, token: this.doc.token };
  }

  private renew(): void {
    // Renewing an expired lease could revive it under a process that is taking it over now.
    if (this.lost || Date.now() >= this.expiresAt) return this.lose();
    const expiresAt = new Date(Date.now() + this.ttlMs);
    void leases(this.db)
      .updateOne(this.mine, { $set: { expiresAt } })
      .then((result) => {
        if (result.matchedCount === 0) this.lose();
        else this.expiresAt = Math.max(this.expiresAt, expiresAt.getTime());
      })
      // The next renewal tries again (e.g. once the database is back).
      .catch(() => {});
  }

  private lose(): void {
    this.lost = true;
    clearInterval(this.timer);
  }

  /**
   * The fencing check, made right before each write that must not land once another process
   * took the lease over: true while the lease is stored as this acquisition's (owner and token)
   * and enough of its expiry is left, measured once the answer is in (a holder that froze while it
   * waited finds its time gone). Once false, false for good.
   */
  async stillHeld(): Promise<boolean> {
    if (this.lost) return false;
    const stored = await leases(this.db).findOne(this.mine, { projection: { expiresAt: 1 } });
    if (stored && stored.expiresAt.getTime() - Date.now() > this.ttlMs * FENCE_MARGIN) return true;
    this.lose();
    return false;
  }

  /**
   * Takes the lease `id`, waiting (with growing pauses) while a living holder has it. Each time
   * the lease is found abandoned, `onTakeover` hears about the holder it replaces. Resolves null
   * when `waitMs` passes.
   */
  static async acquire(
    db: Db,
    id: string,
    options: LeaseOptions & { onTakeover?: (previous: LeaseDoc) => void } = {},
  ): Promise<Lease | null> {
    const ttlMs = options.ttlMs ?? LEASE_TTL_MS;
    const deadline = Date.now() + (options.waitMs ?? DEFAULT_WAIT_MS);
    for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
      const taken = await Lease.tryInsert(db, id, ttlMs);
      if (taken === 'retry') continue;
      if (taken) return new Lease(db, taken, ttlMs);
      const held = await leases(db).findOne({ _id: id });
      if (held && isAbandoned(held)) {
        // Its token is counted before its document goes, so the next token is above it.
        await raiseFloor(db, id, held.token);
        // Only the lease as read is removed: a holder that took it meanwhile keeps it.
        const removed = await leases(db).deleteOne({ _id: id, owner: held.owner, token: held.token });
        if (removed.deletedCount === 1) options.onTakeover?.(held);
        continue;
      }
      if (Date.now() > deadline) return null;
      await new Promise((done) => setTimeout(done, pause));
    }
  }

  /**
   * One attempt at the lease with the next token: the document, when the insert won; null when
   * someone holds it; 'retry' when the token turned out taken meanwhile (this process paused
   * between reading the floor and inserting, and other holders came and went).
   */
  private static async tryInsert(db: Db, id: string, ttlMs: number): Promise<LeaseDoc | null | 'retry'> {
    const floor = (await floors(db).findOne({ _id: floorId(id) }))?.token ?? 0;
    const now = Date.now();
    const doc: LeaseDoc = {
      _id: id,
      owner: OWNER,
      token: floor + 1,
      ...thisProcess(),
      takenAt: new Date(now),
      expiresAt: new Date(now + ttlMs),
    };
    try {
      await leases(db).insertOne(doc);
    } catch (err) {
      if (isDuplicateKey(err)) return null;
      throw err;
    }
    const drop = () => leases(db).deleteOne({ _id: id, owner: doc.owner, token: doc.token });
    try {
      if ((await raiseFloor(db, id, doc.token)) < doc.token) return doc;
    } catch (err) {
      await drop().catch(() => {});
      throw err;
    }
    await drop();
    return 'retry';
  }

  /** The lease as it is stored now (null when none is held). */
  static read(db: Db, id: string): Promise<LeaseDoc | null> {
    return leases(db).findOne({ _id: id });
  }

  async release(): Promise<void> {
    clearInterval(this.timer);
    this.lost = true;
    const remove = () => leases(this.db).deleteOne(this.mine);
    try {
      await remove();
    } catch {
      // The database is away: the lease stays behind, and a living process would hold it until it
      // expires. Keep trying until the database is back or the lease has expired anyway.
      const until = Date.now() + this.ttlMs;
      const retry = setInterval(() => {
        if (Date.now() > until) clearInterval(retry);
        else
          void remove().then(
            () => clearInterval(retry),
            () => {},
          );
      }, 1000);
      retry.unref();
    }
  }
}
