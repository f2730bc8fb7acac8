import type { Database } from '../database.js';
import { EMAIL_CODE_PURPOSES, type EmailCodeDoc, type EmailCodePurpose } from '../models/email-code.model.js';
import { deleteMatching } from '../platform/delete-matching.js';
import { cacheTarget, type TargetedCache } from '../platform/versions.js';

export { EMAIL_CODE_PURPOSES, type EmailCodePurpose } from '../models/email-code.model.js';

/** A live code as stored (its hash only). */
export interface StoredEmailCode {
  readonly codeHash: string;
  readonly expiresAt: Date;
}

/**
 * Email codes: one per purpose and email, so a new one replaces the old. Codes are hashed in
 * oauth/ (src/oauth/email-codes.ts); this stores and removes them. Every write names the code's
 * slot on the version clock (`codes`, cacheTarget.code) before it returns, so that each process's
 * LiveCodes forgets that slot: a code is never refused because a process remembered its absence.
 */
export class EmailCodeStore {
  private live: LiveCodes | undefined;

  constructor(private readonly db: Database) {}

  /** Stores a code for `email`, replacing any earlier one of the same purpose. */
  async put(purpose: EmailCodePurpose, email: string, codeHash: string, expiresAt: Date, now: Date): Promise<void> {
    const doc: EmailCodeDoc = { _id: codeId(purpose, email), purpose, email, codeHash, expiresAt, createdAt: now };
    await this.db.models.emailCodes.replaceOne({ _id: doc._id }, doc, { upsert: true });
    await this.changed([doc._id]);
  }

  /**
   * The code of `email` unless it has expired at `now`: from this process's LiveCodes, so that a
   * check of a code that is not there, or of a wrong one, reads nothing.
   */
  async find(purpose: EmailCodePurpose, email: string, now: Date): Promise<StoredEmailCode | null> {
    this.live ??= new LiveCodes(this.db);
    const code = await this.live.find(codeId(purpose, email));
    return code && code.expiresAt.getTime() > now.getTime() ? code : null;
  }

  /**
   * Uses the code up: true for exactly one caller (the delete of this very code), false when it
   * was used or replaced meanwhile.
   */
  async consume(purpose: EmailCodePurpose, email: string, codeHash: string): Promise<boolean> {
    const id = codeId(purpose, email);
    const result = await this.db.models.emailCodes.deleteOne({ _id: id, codeHash });
    if (result.deletedCount === 1) await this.changed([id]);
    return result.deletedCount === 1;
  }

  /** Removes every code of an email (its account is deleted). */
  async deleteFor(email: string): Promise<void> {
    const result = await this.db.models.emailCodes.deleteMany({ email });
    if (result.deletedCount > 0) await this.changed(EMAIL_CODE_PURPOSES.map((purpose) => codeId(purpose, email)));
  }

  /**
   * Removes expired codes; returns how many. Nothing is announced: an expired code is refused
   * wherever it is remembered, by its expiry.
   */
  async sweepExpired(now: Date): Promise<number> {
    return deleteMatching(this.db.models.emailCodes.collection, { expiresAt: { $lte: now } });
  }

  private async changed(ids: readonly string[]): Promise<void> {
    await this.db.versions.bump(
      'codes',
      ids.map((id) => cacheTarget.code(id)),
    );
  }
}

/** Changes heard since a snapshot was read past which it is read again whole (a bound on its memory). */
const MAX_CHANGES_PER_SNAPSHOT = 10_000;

interface Snapshot {
  /** The generation of `codes` it was read at (src/data/platform/versions.ts): another one means it is stale. */
  readonly generation: number;
  readonly codes: Map<string, StoredEmailCode>;
  /**
   * Slots a change named since it was read, each with a count of the changes that named it: read
   * again before they are answered, and settled only by a read no further change overtook.
   */
  readonly unsure: Map<string, number>;
  changes: number;
}

/**
 * Every stored code as this process last read them, so that a check answers from memory. The
 * codes are few (each is a mail, CODE_LIMITS in src/oauth/email-codes.ts bounds them, and they
 * live minutes), so one read takes them all. Kept current by the `codes` kind of the version
 * clock: a change that names a slot (heard at once in the process that made it, and in the
 * others through Redis, src/data/platform/version-bus.ts) makes that slot be read again on its next check;
 * a change this process cannot account for (its generation moved: another process without Redis,
 * or two changes that raced) makes it read them all again, within the clock's second.
 */
class LiveCodes implements TargetedCache {
  private snapshot: Snapshot | undefined;
  /** The newest read of every code under way, and the generation it answers for. */
  private loading: { generation: number; snapshot: Promise<Snapshot> } | undefined;
  /** Snapshots whose read is under way: told of the changes heard meanwhile. */
  private readonly reading = new Set<Snapshot>();

  constructor(private readonly db: Database) {
    db.versions.watch('codes', this);
  }

  async find(id: string): Promise<StoredEmailCode | undefined> {
    const snapshot = await this.current();
    const mark = snapshot.unsure.get(id);
    return mark === undefined ? snapshot.codes.get(id) : this.reread(snapshot, id, mark);
  }

  /** Called by DataVersions for every targeted change of `codes`. */
  forgetTargets(targets: ReadonlySet<string>): void {
    const ids = [...targets].filter((target) => target.startsWith(SLOT_PREFIX)).map((target) => target.slice(SLOT_PREFIX.length));
    for (const snapshot of [this.snapshot, ...this.reading]) {
      if (!snapshot) continue;
      for (const id of ids) {
        snapshot.codes.delete(id);
        snapshot.unsure.set(id, (snapshot.unsure.get(id) ?? 0) + 1);
        snapshot.changes += 1;
      }
    }
    if (this.snapshot && this.snapshot.changes > MAX_CHANGES_PER_SNAPSHOT) this.snapshot = undefined;
  }

  private async current(): Promise<Snapshot> {
    const generation = await this.db.versions.generation('codes');
    if (this.snapshot?.generation === generation) return this.snapshot;
    if (this.loading?.generation !== generation) this.loading = { generation, snapshot: this.load(generation) };
    return this.loading.snapshot;
  }

  /**
   * Reads every stored code; a slot a change named during the read is left unsure. Kept only
   * when no read for a newer generation started meanwhile.
   */
  private async load(generation: number): Promise<Snapshot> {
    const snapshot: Snapshot = { generation, codes: new Map(), unsure: new Map(), changes: 0 };
    this.reading.add(snapshot);
    let docs: Pick<EmailCodeDoc, '_id' | 'codeHash' | 'expiresAt'>[];
    try {
      docs = await this.db.models.emailCodes.find({}, { codeHash: 1, expiresAt: 1 }).lean<typeof docs>();
    } catch (err) {
      if (this.loading?.generation === generation) this.loading = undefined;
      throw err;
    } finally {
      this.reading.delete(snapshot);
    }
    for (const doc of docs) {
      if (!snapshot.unsure.has(doc._id)) snapshot.codes.set(doc._id, { codeHash: doc.codeHash, expiresAt: doc.expiresAt });
    }
    if (this.loading?.generation === generation) {
      this.snapshot = snapshot;
      this.loading = undefined;
    }
    return snapshot;
  }

  /** Reads one slot a change named; remembered unless another change named it meanwhile. */
  private async reread(snapshot: Snapshot, id: string, mark: number): Promise<StoredEmailCode | undefined> {
    const doc = await this.db.models.emailCodes
      .findOne({ _id: id }, { codeHash: 1, expiresAt: 1 })
      .lean<Pick<EmailCodeDoc, 'codeHash' | 'expiresAt'>>();
    const code = doc ? { codeHash: doc.codeHash, expiresAt: doc.expiresAt } : undefined;
    if (snapshot.unsure.get(id) === mark) {
      snapshot.unsure.delete(id);
      if (code) snapshot.codes.set(id, code);
    }
    return code;
  }
}

const SLOT_PREFIX = cacheTarget.code('');

function codeId(purpose: EmailCodePurpose, email: string): string {
  return `${purpose}:${email}`;
}
