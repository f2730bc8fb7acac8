import { createHash, createHmac, randomInt } from 'node:crypto';
import { sameSecret } from '../compare.js';
import type { Redis } from 'ioredis';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Database } from '../data/database.js';
import { EmailCodeStore, type EmailCodePurpose } from '../data/email-codes.js';
import { limiter } from './throttle.js';

/** Digits of a code (docs/decisions.md, "Accounts and login"). */
export const CODE_DIGITS = 8;
/** How long a code can be used. */
export const CODE_LIFETIME_SECONDS = 5 * 60;
/**
 * Per email address, sign-up and reset together: codes requested, and codes checked (each
 * attempt to use one). Ten checks in a code's five minutes give a guesser 10 in 10^8.
 */
export const CODE_LIMITS = {
  requests: { points: 5, durationSeconds: 10 * 60 },
  checks: { points: 10, durationSeconds: 5 * 60 },
} as const;

/** A budget that is spent: when the next attempt is allowed. */
export class CodeBudgetSpent extends Error {
  constructor(
    readonly budget: 'requests' | 'checks',
    readonly retryAfterSeconds: number,
  ) {
    super(`too many code ${budget}`);
  }
}

/**
 * Issues and checks the 8-digit codes mailed for sign-up and password reset. A code is stored
 * only as an HMAC under a key derived from the cookie keys, so the database alone does not give
 * it away (8 digits are too few for a plain hash). A new code replaces the email's earlier one.
 * Checks compare in constant time and are limited per email; a checked code is used up only by
 * `consume`, so a request refused for another reason (a weak password) does not spend it.
 */
export class EmailCodes {
  private readonly store: EmailCodeStore;
  private readonly keys: Buffer[];
  private readonly requests: RateLimiterAbstract;
  private readonly checks: RateLimiterAbstract;

  constructor(
    db: Database,
    cookieKeys: readonly string[],
    private readonly now: () => Date,
    redis?: Redis,
  ) {
    if (cookieKeys.length === 0) throw new Error('no cookie keys: email codes cannot be hashed');
    this.store = new EmailCodeStore(db);
    this.keys = cookieKeys.map((key) => createHash('sha256').update(`campus-email-code:${key}`).digest());
    this.requests = limiter('campus:code:requests', CODE_LIMITS.requests, redis);
    this.checks = limiter('campus:code:checks', CODE_LIMITS.checks, redis);
  }

  /** Spends one request of the email's budget (CodeBudgetSpent when none is left) and stores a new code. */
  async issue(purpose: EmailCodePurpose, email: string): Promise<{ code: string; expiresAt: Date }> {
    await spend(this.requests, email, 'requests');
    const code = String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, '0');
    const now = this.now();
    const expiresAt = new Date(now.getTime() + CODE_LIFETIME_SECONDS * 1000);
    await this.store.put(purpose, email, this.hash(0, purpose, email, code), expiresAt, now);
    return { code, expiresAt };
  }

  /**
   * Spends one check of the email's budget, then compares `code` with the email's live code in
   * constant time. Returns a handle for `consume` when it matches, else null (wrong, replaced,
   * expired or never issued: the same answer).
   */
  async check(purpose: EmailCodePurpose, email: string, code: string): Promise<{ codeHash: string } | null> {
    await spend(this.checks, email, 'checks');
    const stored = await this.store.find(purpose, email, this.now());
    // Without a stored code the same comparisons run against a hash that matches nothing.
    const expected = stored?.codeHash ?? '0'.repeat(64);
    let matches = false;
    for (let index = 0; index < this.keys.length; index++) {
      matches = sameSecret(this.hash(index, purpose, email, code), expected) || matches;
    }
    return stored && matches ? { codeHash: stored.codeHash } : null;
  }

  /** Uses the checked code up: true for exactly one caller. */
  async consume(purpose: EmailCodePurpose, email: string, handle: { codeHash: string }): Promise<boolean> {
    return this.store.consume(purpose, email, handle.codeHash);
  }

  async deleteFor(email: string): Promise<void> {
    await this.store.deleteFor(email);
  }

  async sweepExpired(): Promise<number> {
    return this.store.sweepExpired(this.now());
  }

  private hash(keyIndex: number, purpose: EmailCodePurpose, email: string, code: string): string {
    const key = this.keys[keyIndex] ?? this.keys[0];
    if (!key) throw new Error('no code key');
    return createHmac('sha256', key).update(`${purpose}\n${email}\n${code}`).digest('hex');
  }
}

async function spend(budget: RateLimiterAbstract, email: string, name: 'requests' | 'checks'): Promise<void> {
  try {
    await budget.consume(email);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    throw new CodeBudgetSpent(name, Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)));
  }
}
