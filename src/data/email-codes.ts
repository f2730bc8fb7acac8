import type { Database } from './database.js';
import type { EmailCodeDoc, EmailCodePurpose } from './models/email-code.model.js';
import { deleteMatching } from './delete-matching.js';

export { EMAIL_CODE_PURPOSES, type EmailCodePurpose } from './models/email-code.model.js';

/** A live code as stored (its hash only). */
export interface StoredEmailCode {
  readonly codeHash: string;
  readonly expiresAt: Date;
}

/**
 * Email codes: one per purpose and email, so a new one replaces the old. Codes are hashed in
 * oauth/ (src/oauth/email-codes.ts); this stores and removes them.
 */
export class EmailCodeStore {
  constructor(private readonly db: Database) {}

  /** Stores a code for `email`, replacing any earlier one of the same purpose. */
  async put(purpose: EmailCodePurpose, email: string, codeHash: string, expiresAt: Date, now: Date): Promise<void> {
    const doc: EmailCodeDoc = { _id: codeId(purpose, email), purpose, email, codeHash, expiresAt, createdAt: now };
    await this.db.models.emailCodes.replaceOne({ _id: doc._id }, doc, { upsert: true });
  }

  /** The code of `email` unless it has expired at `now`. */
  async find(purpose: EmailCodePurpose, email: string, now: Date): Promise<StoredEmailCode | null> {
    const doc = await this.db.models.emailCodes.findOne({ _id: codeId(purpose, email) }).lean<EmailCodeDoc>();
    return doc && doc.expiresAt.getTime() > now.getTime() ? { codeHash: doc.codeHash, expiresAt: doc.expiresAt } : null;
  }

  /**
   * Uses the code up: true for exactly one caller (the delete of this very code), false when it
   * was used or replaced meanwhile.
   */
  async consume(purpose: EmailCodePurpose, email: string, codeHash: string): Promise<boolean> {
    const result = await this.db.models.emailCodes.deleteOne({ _id: codeId(purpose, email), codeHash });
    return result.deletedCount === 1;
  }

  /** Removes every code of an email (its account is deleted). */
  async deleteFor(email: string): Promise<void> {
    await this.db.models.emailCodes.deleteMany({ email });
  }

  /** Removes expired codes; returns how many. */
  async sweepExpired(now: Date): Promise<number> {
    return deleteMatching(this.db.models.emailCodes.collection, { expiresAt: { $lte: now } });
  }
}

function codeId(purpose: EmailCodePurpose, email: string): string {
  return `${purpose}:${email}`;
}
