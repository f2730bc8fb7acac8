import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Collection } from 'mongodb';
import { isDuplicateKey } from './errors.js';

/**
 * A lease: one holder at a time across every process sharing the database (the service's
 * instances and the `campus` command), kept in one document of `meta`. The holder renews it on an
 * interval while it lives; it is taken over once it stops being renewed (expired) or, at once,
 * when its holder ran on this machine and its process is gone (a `kill -9` leaves the document
 * behind, and waiting out the expiry would refuse every write meanwhile). A pid that the
 * machine reused for another process reads as alive: the lease then lives out its expiry.
 */
export interface LeaseDoc {
  readonly _id: string;
  /** Unique per acquisition, so a holder releases or renews only its own lease. */
  readonly owner: string;
  readonly pid: number;
  readonly host: string;
  readonly takenAt: Date;
  readonly expiresAt: Date;
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

/** The process and machine a lease holder runs in, as the audit log names it. */
export function describeHolder(doc: Pick<LeaseDoc, 'pid' | 'host'>): string {
  return `pid ${doc.pid} on ${doc.host}`;
}

/** True when the lease's holder no longer renews it: expired, or its process is gone from this machine. */
export function isAbandoned(doc: Pick<LeaseDoc, 'pid' | 'host' | 'expiresAt'>, now = Date.now()): boolean {
  if (doc.expiresAt.getTime() < now) return true;
  return doc.host === hostname() && !isAlive(doc.pid);
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, but another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class Lease {
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly meta: Collection<LeaseDoc>,
    readonly doc: LeaseDoc,
    private readonly ttlMs: number,
  ) {
    this.timer = setInterval(() => {
      void this.meta.updateOne({ _id: doc._id, owner: doc.owner }, { $set: { expiresAt: new Date(Date.now() + ttlMs) } }).catch(() => {
        // The next renewal tries again (e.g. once the database is back).
      });
    }, ttlMs / 3);
    // A lease never keeps a finished command alive.
    this.timer.unref();
  }

  /**
   * Takes the lease `id`, waiting (with growing pauses) while a living holder has it. Before the
   * wait, and each time the lease is found abandoned, `onAbandoned` hears about the holder it
   * replaces. Resolves null when `waitMs` passes.
   */
  static async acquire(
    meta: Collection<LeaseDoc>,
    id: string,
    options: LeaseOptions & { onTakeover?: (previous: LeaseDoc) => void } = {},
  ): Promise<Lease | null> {
    const ttlMs = options.ttlMs ?? LEASE_TTL_MS;
    const deadline = Date.now() + (options.waitMs ?? DEFAULT_WAIT_MS);
    for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
      const doc: LeaseDoc = {
        _id: id,
        owner: randomUUID(),
        pid: process.pid,
        host: hostname(),
        takenAt: new Date(),
        expiresAt: new Date(Date.now() + ttlMs),
      };
      try {
        await meta.insertOne(doc);
        return new Lease(meta, doc, ttlMs);
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const held = await meta.findOne({ _id: id });
      if (held && isAbandoned(held)) {
        // Only the lease as read is removed: a holder that took it meanwhile keeps it.
        const removed = await meta.deleteOne({ _id: id, owner: held.owner });
        if (removed.deletedCount === 1) options.onTakeover?.(held);
        continue;
      }
      if (Date.now() > deadline) return null;
      await new Promise((done) => setTimeout(done, pause));
    }
  }

  /** The lease as it is stored now (null when none is held). */
  static read(meta: Collection<LeaseDoc>, id: string): Promise<LeaseDoc | null> {
    return meta.findOne({ _id: id });
  }

  async release(): Promise<void> {
    clearInterval(this.timer);
    const remove = () => this.meta.deleteOne({ _id: this.doc._id, owner: this.doc.owner });
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
