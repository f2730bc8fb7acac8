import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { addressKey } from '../http/address.js';

export interface LoginLimit {
  readonly points: number;
  readonly durationSeconds: number;
}

export interface LoginLimits {
  /** Failed logins on one account from one address (OAUTH_LOGIN_LIMIT_ACCOUNT). */
  readonly accountFromAddress: LoginLimit;
  /** Failed logins from one address, on any accounts (OAUTH_LOGIN_LIMIT_IP). */
  readonly address: LoginLimit;
  /** The account-wide delay (OAUTH_LOGIN_DELAY_MS, OAUTH_LOGIN_DELAY_MAX_MS). */
  readonly delay: { readonly firstMs: number; readonly maxMs: number };
}

/**
 * What to do with a login attempt: refuse it for now, or check it after `delayMs`. An attempt
 * past its address's failure budgets is still checked (`overBudget`): a correct password gets
 * in, a wrong one is answered as refused (429 with `retryAfterSeconds`). `done` must be called
 * once the password was checked.
 */
export type LoginDecision =
  | { readonly refused: true; readonly retryAfterSeconds: number }
  | {
      readonly refused: false;
      readonly delayMs: number;
      readonly overBudget: { readonly retryAfterSeconds: number } | null;
      readonly done: () => void;
    };

/**
 * Attempts past their address's budgets checked at once per address (per process), and the
 * least they wait: an address out of failures gets at most this many argon2 checks per
 * OVER_BUDGET_DELAY_MS, enough for the people behind a shared school address to keep signing in.
 */
export const OVER_BUDGET_CHECKS_PER_ADDRESS = 4;
export const OVER_BUDGET_DELAY_MS = 1000;

/** Far above any real count: the account-wide budget only counts, it never refuses. */
const UNLIMITED = Number.MAX_SAFE_INTEGER;

/**
 * Failed-login budgets that cannot be turned against the account's owner. Only failed checks
 * are refused or delayed, never a correct password:
 * - per (account, address): an address that keeps failing on an account has its further wrong
 *   passwords refused (429) for it;
 * - per address: an address that keeps failing on any accounts has its further wrong ones refused;
 *   past either budget an attempt is still checked, after at least OVER_BUDGET_DELAY_MS and at
 *   most OVER_BUDGET_CHECKS_PER_ADDRESS at once per address, so the owner (or a classmate behind
 *   the school's one public address) typing the right password gets in;
 * - per account, from every address together: never refuses, only slows each further attempt
 *   with a growing, capped delay, so guessing from many addresses gets slower while the owner,
 *   from an address that has not been failing, always gets in (after at most the cap).
 * The account is the email typed (known or not, so throttling reveals nothing). Every attempt
 * spends its points up front, so parallel guesses cannot all pass a read-only check; a success
 * gives them back. In Redis when configured (shared by every instance), else in memory.
 */
export class LoginThrottle {
  private readonly perAccountFromAddress: RateLimiterAbstract;
  private readonly perAddress: RateLimiterAbstract;
  private readonly perAccount: RateLimiterAbstract;
  /** Over-budget checks in flight per address key. */
  private readonly overBudgetChecks = new Map<string, number>();

  constructor(
    private readonly limits: LoginLimits,
    redis?: Redis,
  ) {
    this.perAccountFromAddress = limiter('campus:login:account-ip', limits.accountFromAddress, redis);
    this.perAddress = limiter('campus:login:ip', limits.address, redis);
    this.perAccount = limiter(
      'campus:login:account',
      { points: UNLIMITED, durationSeconds: limits.accountFromAddress.durationSeconds },
      redis,
    );
  }

  /** Spends one attempt before the password is checked, and says whether and when to check it. */
  async reserve(email: string, address: string): Promise<LoginDecision> {
    const results = await Promise.allSettled([
      this.perAccountFromAddress.consume(accountFromAddressKey(email, address)),
      this.perAddress.consume(addressKey(address)),
    ]);
    let wait = 0;
    for (const result of results) {
      if (result.status === 'fulfilled') continue;
      if (!(result.reason instanceof RateLimiterRes)) throw result.reason;
      wait = Math.max(wait, Math.max(1, Math.ceil(result.reason.msBeforeNext / 1000)));
    }
    const key = addressKey(address);
    const inFlight = this.overBudgetChecks.get(key) ?? 0;
    // A refused attempt is not checked, so it does not slow the owner down either.
    if (wait > 0 && inFlight >= OVER_BUDGET_CHECKS_PER_ADDRESS) return { refused: true, retryAfterSeconds: wait };
    const account = await this.perAccount.consume(accountKey(email));
    const earlierAttempts = account.consumedPoints - 1;
    const delayMs = loginDelayMs(earlierAttempts, this.limits.accountFromAddress.points, this.limits.delay);
    if (wait === 0) return { refused: false, delayMs, overBudget: null, done: () => undefined };
    this.overBudgetChecks.set(key, inFlight + 1);
    let released = false;
    return {
      refused: false,
      delayMs: Math.max(delayMs, OVER_BUDGET_DELAY_MS),
      overBudget: { retryAfterSeconds: wait },
      done: () => {
        if (released) return;
        released = true;
        const left = (this.overBudgetChecks.get(key) ?? 1) - 1;
        if (left > 0) this.overBudgetChecks.set(key, left);
        else this.overBudgetChecks.delete(key);
      },
    };
  }

  /**
   * A correct password clears this address's failures on the account and gives back the points
   * the attempt spent. Failures from other addresses stay counted: the owner signing in does not
   * lift the delay an attacker is under.
   */
  async succeeded(email: string, address: string): Promise<void> {
    await Promise.all([
      this.perAccountFromAddress.delete(accountFromAddressKey(email, address)),
      this.perAddress.reward(addressKey(address), 1),
      this.perAccount.reward(accountKey(email), 1),
    ]);
  }
}

/**
 * The delay before checking an attempt on an account that already had `earlierAttempts` in the
 * window: none for the first `freeAttempts`, then `firstMs`, doubling with each attempt, at most
 * `maxMs`.
 */
export function loginDelayMs(earlierAttempts: number, freeAttempts: number, delay: { firstMs: number; maxMs: number }): number {
  if (earlierAttempts < freeAttempts || delay.firstMs <= 0) return 0;
  return Math.min(delay.maxMs, delay.firstMs * 2 ** Math.min(earlierAttempts - freeAttempts, 52));
}

/**
 * A budget of attempts per key: in Redis when configured (shared by every instance; while Redis
 * is down each instance falls back to its own memory), else in memory. The login throttle and
 * the email codes (src/oauth/email-codes.ts) both count with it.
 */
export function limiter(keyPrefix: string, limit: LoginLimit, redis: Redis | undefined): RateLimiterAbstract {
  const options = { keyPrefix, points: limit.points, duration: limit.durationSeconds };
  return redis
    ? new RateLimiterRedis({
        ...options,
        storeClient: redis,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory(options),
      })
    : new RateLimiterMemory(options);
}

/** The budget key of a typed email (bounded: longer emails are refused before they get here). */
function accountKey(email: string): string {
  return email.trim().toLowerCase().slice(0, 254);
}

function accountFromAddressKey(email: string, address: string): string {
  return `${addressKey(address)} ${accountKey(email)}`;
}
