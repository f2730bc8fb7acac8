import type { Database } from '../database.js';
import type { AccountMfaDoc } from '../models/account-mfa.model.js';

export type { AccountMfaDoc } from '../models/account-mfa.model.js';

/** Second factors of accounts: stored, activated, spent and removed here; sealed and checked in src/oauth/second-factor.ts. */
export class AccountMfaStore {
  constructor(private readonly db: Database) {}

  async find(accountId: number): Promise<AccountMfaDoc | null> {
    return this.db.models.accountMfa.findOne({ _id: accountId }).lean<AccountMfaDoc>();
  }

  /** Starts (or restarts) an enrolment, or sets an active factor at once (the operators' command). */
  async put(accountId: number, input: { secret: string; recoveryHashes: string[]; active: boolean }, now: Date): Promise<void> {
    const doc: AccountMfaDoc = {
      _id: accountId,
      secret: input.secret,
      active: input.active,
      recoveryHashes: input.recoveryHashes,
      lastStep: 0,
      createdAt: now,
      activatedAt: input.active ? now : null,
    };
    await this.db.models.accountMfa.replaceOne({ _id: accountId }, doc, { upsert: true });
    // Replacing a factor (or setting one at once) changes what the account's keys may read.
    await this.db.versions.bumpAccount(accountId);
  }

  /** Records an accepted time step; false when it (or a later one) was accepted already. */
  async acceptStep(accountId: number, step: number, activate: boolean, now: Date): Promise<boolean> {
    const result = await this.db.models.accountMfa.updateOne(
      { _id: accountId, lastStep: { $lt: step } },
      { $set: { lastStep: step, ...(activate ? { active: true, activatedAt: now } : {}) } },
    );
    if (activate && result.modifiedCount === 1) await this.db.versions.bumpAccount(accountId);
    return result.modifiedCount === 1;
  }

  /** Spends a recovery code by its hash: true for exactly the call that removed it. */
  async spendRecovery(accountId: number, hash: string): Promise<boolean> {
    const result = await this.db.models.accountMfa.updateOne(
      { _id: accountId, active: true, recoveryHashes: hash },
      { $pull: { recoveryHashes: hash } },
    );
    return result.modifiedCount === 1;
  }

  /** Replaces the recovery codes of an active factor. */
  async setRecovery(accountId: number, recoveryHashes: string[]): Promise<void> {
    await this.db.models.accountMfa.updateOne({ _id: accountId, active: true }, { $set: { recoveryHashes } });
  }

  /** Re-seals the secret (it was opened with an older cookie key). */
  async reseal(accountId: number, secret: string): Promise<void> {
    await this.db.models.accountMfa.updateOne({ _id: accountId }, { $set: { secret } });
  }

  async delete(accountId: number): Promise<boolean> {
    const deleted = (await this.db.models.accountMfa.deleteOne({ _id: accountId })).deletedCount === 1;
    if (deleted) await this.db.versions.bumpAccount(accountId);
    return deleted;
  }
}
