import type { Database } from '../database.js';
import type { PasskeyCeremony, PasskeyChallengeDoc, PasskeyDoc } from '../models/passkey.model.js';
import { deleteMatching } from '../platform/delete-matching.js';
import { isDuplicateKey } from '../platform/errors.js';

export {
  MAX_PASSKEY_NAME_LENGTH,
  MAX_PASSKEYS_PER_ACCOUNT,
  type PasskeyCeremony,
  type PasskeyChallengeDoc,
  type PasskeyDoc,
} from '../models/passkey.model.js';

/** A challenge handed to a browser, with what it was made for. */
export interface IssuedChallenge {
  readonly ceremony: PasskeyCeremony;
  readonly slot: string;
  readonly challenge: string;
  readonly accountId: number | null;
  readonly name: string | null;
  readonly userHandle: string | null;
  readonly expiresAt: Date;
}

/**
 * Passkeys of accounts and the challenges of their ceremonies: stored, used, flagged and removed
 * here; checked in src/oauth/passkeys.ts. Every change of an account's passkeys names the account
 * on the version clock, because whether it has one is part of its standing (src/auth/policy.ts:
 * staff privilege, a key's scopes, the second step of a password sign-in).
 */
export class PasskeyStore {
  constructor(private readonly db: Database) {}

  /** An account's passkeys, oldest first. */
  async listOf(accountId: number): Promise<PasskeyDoc[]> {
    return this.db.models.passkeys.find({ accountId }).sort({ createdAt: 1 }).lean<PasskeyDoc[]>();
  }

  /** A passkey by its credential id. */
  async find(id: string): Promise<PasskeyDoc | null> {
    return this.db.models.passkeys.findOne({ _id: id }).lean<PasskeyDoc>();
  }

  /** Stores a new passkey; false when its credential id is registered already (to any account). */
  async insert(doc: PasskeyDoc): Promise<boolean> {
    try {
      await this.db.models.passkeys.create(doc);
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
    await this.db.versions.bumpAccount(doc.accountId);
    return true;
  }

  /**
   * Records a sign-in: the counter the authenticator reported and when; only while the counter
   * stored is still the one checked (`from`), so of two sign-ins with one assertion at most one
   * records it. False when it moved meanwhile.
   */
  async recordUse(id: string, from: number, counter: number, at: Date): Promise<boolean> {
    const result = await this.db.models.passkeys.updateOne(
      { _id: id, counter: from, flaggedAt: null },
      { $set: { counter, lastUsedAt: at } },
    );
    return result.matchedCount === 1;
  }

  /** Flags a passkey whose counter went backwards (a cloned authenticator): it signs in no more. */
  async flag(doc: PasskeyDoc, at: Date): Promise<void> {
    const result = await this.db.models.passkeys.updateOne({ _id: doc._id, flaggedAt: null }, { $set: { flaggedAt: at } });
    if (result.modifiedCount === 1) await this.db.versions.bumpAccount(doc.accountId);
  }

  /** Removes one of the account's passkeys; the removed one, or null when it had none by that id. */
  async remove(accountId: number, id: string): Promise<PasskeyDoc | null> {
    const doc = await this.db.models.passkeys.findOne({ _id: id, accountId }).lean<PasskeyDoc>();
    if (!doc) return null;
    const result = await this.db.models.passkeys.deleteOne({ _id: id, accountId });
    if (result.deletedCount !== 1) return null;
    await this.db.versions.bumpAccount(accountId);
    return doc;
  }

  /** Removes every passkey of the account (an admin's removal, the account's deletion); the removed ones. */
  async removeAll(accountId: number): Promise<PasskeyDoc[]> {
    const docs = await this.listOf(accountId);
    if (docs.length === 0) return [];
    await this.db.models.passkeys.deleteMany({ accountId, _id: { $in: docs.map((d) => d._id) } });
    await this.db.versions.bumpAccount(accountId);
    return docs;
  }

  /**
   * Stores a ceremony's challenge in its slot, replacing the slot's earlier one (a person who
   * starts again invalidates the challenge of the attempt they left).
   */
  async putChallenge(issued: IssuedChallenge): Promise<void> {
    const doc: PasskeyChallengeDoc = {
      _id: issued.slot,
      ceremony: issued.ceremony,
      challenge: issued.challenge,
      accountId: issued.accountId,
      name: issued.name,
      userHandle: issued.userHandle,
      expiresAt: issued.expiresAt,
    };
    await this.db.models.passkeyChallenges.replaceOne({ _id: issued.slot }, doc, { upsert: true });
  }

  /**
   * Uses the slot's challenge up, if it is `challenge`: the stored challenge for exactly one
   * caller (the delete of this very challenge; FerretDB's findAndModify is not atomic), else null.
   * An expired one is used up too, and refused.
   */
  async takeChallenge(slot: string, challenge: string, now: Date): Promise<IssuedChallenge | null> {
    const doc = await this.db.models.passkeyChallenges.findOne({ _id: slot, challenge }).lean<PasskeyChallengeDoc>();
    if (!doc) return null;
    const result = await this.db.models.passkeyChallenges.deleteOne({ _id: slot, challenge });
    if (result.deletedCount !== 1 || doc.expiresAt.getTime() <= now.getTime()) return null;
    return {
      ceremony: doc.ceremony,
      slot: doc._id,
      challenge: doc.challenge,
      accountId: doc.accountId ?? null,
      name: doc.name ?? null,
      userHandle: doc.userHandle ?? null,
      expiresAt: doc.expiresAt,
    };
  }

  /** Removes expired challenges; returns how many. */
  async sweepExpired(now: Date): Promise<number> {
    return deleteMatching(this.db.models.passkeyChallenges.collection, { expiresAt: { $lte: now } });
  }
}
