import { createHash, createHmac, randomInt } from 'node:crypto';
import { sameSecret } from '../compare.js';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Database } from '../data/database.js';
import { EmailCodeStore, type EmailCodePurpose } from '../data/accounts/email-codes.js';
import { addressKey } from '../http/address.js';
import { limiter } from './throttle.js';

/** Digits of a code (docs/decisions.md, "Accounts and login"). */
export const CODE_DIGITS = 8;
/** How long a code can be used. */
export const CODE_LIFETIME_SECONDS = 5 * 60;
/** Wrong checks that kill a code: after them even the right code is refused (5 guesses in 10^8 per code). */
export const WRONG_CHECKS_PER_CODE = 5;
/**
 * The budgets of code requests (each mails a code) and code checks (each attempt to use one),
 * sign-up and reset together. Each is counted where it cannot be spent by someone else:
 * - per email *and* client address: a stranger spending their own tries on your email does
 *   not spend yours;
 * - per client address, any emails: one address cannot mail or probe the whole school; sized so
 *   a class of 40 signing up together behind the school's one public address is not refused;
 * - every address together: the mail relay and the database are never flooded;
 * - per email from every address (`emailMails`): the first mails of a day go out at once, then
 *   at most one per `emailSpacing`: a mailbox cannot be bombed from many addresses, and its
 *   owner is only slowed, never shut out for the day (any mail that goes out carries a fresh code).
 */
export const CODE_LIMITS = {
  requests: { points: 5, durationSeconds: 10 * 60 },
  requestsPerDay: { points: 10, durationSeconds: 24 * 60 * 60 },
  checks: { points: 10, durationSeconds: 5 * 60 },
  addressRequests: { points: 100, durationSeconds: 10 * 60 },
  addressChecks: { points: 200, durationSeconds: 10 * 60 },
  globalRequests: { points: 2000, durationSeconds: 10 * 60 },
  globalChecks: { points: 5000, durationSeconds: 10 * 60 },
  emailMails: { points: 5, durationSeconds: 24 * 60 * 60 },
  emailSpacing: { points: 1, durationSeconds: 30 * 60 },
} as const;

/** Spent addresses remembered per process (addressRefusal); one pushed out is asked of its budget again. */
const SPENT_ADDRESSES = 10_000;

export type CodeBudget = 'requests' | 'checks' | 'address' | 'global' | 'email';

/** A budget that is spent: when the next attempt is allowed. */
export class CodeBudgetSpent extends Error {
  constructor(
    readonly budget: CodeBudget,
    readonly kind: 'requests' | 'checks',
    readonly retryAfterSeconds: number,
  ) {
    super(`too many code ${kind} (${budget})`);
  }
}

/**
 * Issues and checks the 8-digit codes mailed for sign-up and password reset. A code is stored
 * only as an HMAC under a key derived from the cookie keys, so the database alone does not give
 * it away (8 digits are too few for a plain hash). A new code replaces the email's earlier one.
 * Checks compare in constant time and are limited (CODE_LIMITS); a code dies after
 * WRONG_CHECKS_PER_CODE wrong ones. A checked code is used up only by `consume`, so a request
 * refused for another reason (a weak password) does not spend it. None of this hashes a password:
 * the self-service checks and spends the code before any argon2 work (src/oauth/self-service.ts).
 */
export class EmailCodes {
  private readonly store: EmailCodeStore;
  private readonly keys: Buffer[];
  private readonly budgets: Record<keyof typeof CODE_LIMITS, RateLimiterAbstract>;
  /** Wrong checks per code (keyed by the stored hash, which is new for every code). */
  private readonly wrong: RateLimiterAbstract;
  /** `kind address` of addresses found spent (addressRefusal), with when their window ends (ms since the epoch). */
  private readonly spentUntil = new LRUCache<string, number>({ max: SPENT_ADDRESSES });

  constructor(
    db: Database,
    cookieKeys: readonly string[],
    private readonly now: () => Date,
    redis?: Redis,
  ) {
    if (cookieKeys.length === 0) throw new Error('no cookie keys: email codes cannot be hashed');
    this.store = new EmailCodeStore(db);
    this.keys = cookieKeys.map((key) => createHash('sha256').update(`campus-email-code:${key}`).digest());
    this.budgets = Object.fromEntries(
      Object.entries(CODE_LIMITS).map(([name, limit]) => [name, limiter(`campus:code:${name}`, limit, redis)]),
    ) as Record<keyof typeof CODE_LIMITS, RateLimiterAbstract>;
    this.wrong = limiter('campus:code:wrong', { points: WRONG_CHECKS_PER_CODE, durationSeconds: CODE_LIFETIME_SECONDS }, redis);
  }

  /**
   * Spends one request of each budget (CodeBudgetSpent when one is out) and stores a new code.
   * The narrowest budgets are spent first, so a requester refused by their own budget spends
   * nothing that others share.
   */
  async issue(purpose: EmailCodePurpose, email: string, address: string): Promise<{ code: string; expiresAt: Date }> {
    const pair = pairKey(email, address);
    await spend(this.budgets.requests, pair, 'requests', 'requests');
    await spend(this.budgets.requestsPerDay, pair, 'requests', 'requests');
    await spend(this.budgets.addressRequests, addressKey(address), 'address', 'requests');
    await this.spaceMails(email);
    await spend(this.budgets.globalRequests, 'all', 'global', 'requests');
    const code = String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, '0');
    const now = this.now();
    const expiresAt = new Date(now.getTime() + CODE_LIFETIME_SECONDS * 1000);
    await this.store.put(purpose, email, this.hash(0, purpose, email, code), expiresAt, now);
    return { code, expiresAt };
  }

  /**
   * Spends one check of each budget, then compares `code` with the email's live code in
   * constant time. Returns a handle for `consume` when it matches, else null (wrong, replaced,
   * expired, never issued or dead of wrong checks: the same answer). A wrong check counts
   * against the code (in memory, or Redis); the WRONG_CHECKS_PER_CODE-th deletes it. The stored
   * code comes from this process's memory of every code (src/data/accounts/email-codes.ts, LiveCodes), so
   * a refusal makes no database operation, whichever budget or code refuses it.
   */
  async check(purpose: EmailCodePurpose, email: string, code: string, address: string): Promise<{ codeHash: string } | null> {
    await spend(this.budgets.checks, pairKey(email, address), 'checks', 'checks');
    await spend(this.budgets.addressChecks, addressKey(address), 'address', 'checks');
    await spend(this.budgets.globalChecks, 'all', 'global', 'checks');
    const stored = await this.store.find(purpose, email, this.now());
    // Without a stored code the same comparisons run against a hash that matches nothing.
    const expected = stored?.codeHash ?? '0'.repeat(64);
    let matches = false;
    for (let index = 0; index < this.keys.length; index++) {
      matches = sameSecret(this.hash(index, purpose, email, code), expected) || matches;
    }
    if (!stored) return null;
    if (!matches) {
      await this.countWrong(purpose, email, stored.codeHash);
      return null;
    }
    // A code killed by wrong checks in parallel with this one may not be deleted yet.
    const wrong = await this.wrong.get(stored.codeHash);
    if (wrong && wrong.consumedPoints >= WRONG_CHECKS_PER_CODE) return null;
    return { codeHash: stored.codeHash };
  }

  /**
   * Whether `address` has spent its budget of code requests or checks (read only): the JSON
   * endpoints ask before they even parse the body, so a flood from a spent address costs as
   * little as a request can. The seconds until it may ask again when it has, else undefined.
   * An address found spent is remembered in this process until its window ends (a budget is only
   * ever spent further before then): its next refusals need not even a Redis round trip.
   */
  async addressRefusal(kind: 'requests' | 'checks', address: string): Promise<number | undefined> {
    const key = addressKey(address);
    const memo = `${kind} ${key}`;
    const remembered = this.spentUntil.get(memo);
    const now = Date.now();
    if (remembered !== undefined && remembered > now) return secondsUntil(remembered - now);
    const budget = kind === 'requests' ? this.budgets.addressRequests : this.budgets.addressChecks;
    const limit = kind === 'requests' ? CODE_LIMITS.addressRequests : CODE_LIMITS.addressChecks;
    const state = await budget.get(key);
    if (!state || state.consumedPoints < limit.points) return undefined;
    this.spentUntil.set(memo, now + state.msBeforeNext);
    return secondsUntil(state.msBeforeNext);
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

  /** One more wrong check of the live code: the last one allowed deletes it. */
  private async countWrong(purpose: EmailCodePurpose, email: string, codeHash: string): Promise<void> {
    let dead: boolean;
    try {
      dead = (await this.wrong.consume(codeHash)).consumedPoints >= WRONG_CHECKS_PER_CODE;
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      dead = true;
    }
    if (dead) await this.store.consume(purpose, email, codeHash);
  }

  /**
   * The email-wide cap on mails, from every address together: the first CODE_LIMITS.emailMails
   * of a day are free, then one per CODE_LIMITS.emailSpacing. Only slows: whoever asks next
   * after the spacing gets a mail, and that mail goes to the mailbox's owner.
   */
  private async spaceMails(email: string): Promise<void> {
    const day = await this.budgets.emailMails.get(email);
    if (!day || day.consumedPoints < CODE_LIMITS.emailMails.points) {
      await this.budgets.emailMails.consume(email).catch((rejection: unknown) => {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
      });
      return;
    }
    await spend(this.budgets.emailSpacing, email, 'email', 'requests');
  }

  private hash(keyIndex: number, purpose: EmailCodePurpose, email: string, code: string): string {
    const key = this.keys[keyIndex] ?? this.keys[0];
    if (!key) throw new Error('no code key');
    return createHmac('sha256', key).update(`${purpose}\n${email}\n${code}`).digest('hex');
  }
}

async function spend(budget: RateLimiterAbstract, key: string, name: CodeBudget, kind: 'requests' | 'checks'): Promise<void> {
  try {
    await budget.consume(key);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    throw new CodeBudgetSpent(name, kind, secondsUntil(rejection.msBeforeNext));
  }
}

/** A Retry-After: whole seconds, at least one. */
function secondsUntil(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

function pairKey(email: string, address: string): string {
  return `${addressKey(address)} ${email}`;
}
