import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { addressKey } from '../http/address.js';

export interface LoginLimit {
  readonly points: number;
  readonly durationSeconds: number;
}

export interface LoginLimits {
  /** Failed password checks on one account from one address (OAUTH_LOGIN_LIMIT_ACCOUNT). */
  readonly accountFromAddress: LoginLimit;
  /** Failed password checks on one account from every address together (OAUTH_LOGIN_ACCOUNT_CEILING). */
  readonly accountCeiling: LoginLimit;
  /** Failed password checks from one address, on any accounts (OAUTH_LOGIN_LIMIT_IP). */
  readonly address: LoginLimit;
  /** The account-wide delay (OAUTH_LOGIN_DELAY_MS, OAUTH_LOGIN_DELAY_MAX_MS). */
  readonly delay: { readonly firstMs: number; readonly maxMs: number };
}

/**
 * What to do with a password sign-in:
 * - `unchecked`: this address spent its failures on this account; answered as a wrong password,
 *   with no password check (nothing to learn, nothing to hash);
 * - `locked`: the account spent its failures from every address; the password alone no longer
 *   signs in, whatever it is (the page offers a code mailed to the owner); `lockStarted` is true
 *   for the one attempt that found the lock new in its window (the owner is mailed then);
 * - `check`: check the password after `delayMs`, then call `settle` with the outcome (`unused`:
 *   it was never checked, e.g. the sign-in had expired: nothing is spent). When the
 *   address is past its failure budget on any accounts, a wrong password's answer is slowed
 *   (`slowFailure`), a right one is not.
 */
export type LoginDecision =
  | { readonly kind: 'unchecked' }
  | { readonly kind: 'locked'; readonly retryAfterSeconds: number; readonly lockStarted: boolean }
  | {
      readonly kind: 'check';
      readonly delayMs: number;
      readonly slowFailure: { readonly delayMs: number; readonly retryAfterSeconds: number } | null;
      readonly settle: (outcome: 'succeeded' | 'failed' | 'unused') => Promise<void>;
    };

/** How long a failure from an address past its budget waits for its answer (a right password never does). */
export const SLOW_FAILURE_MS = 1000;

/**
 * The login throttle: budgets that count failed password checks, never successes, so a crowd of
 * right passwords (a whole school behind its one public address at 8:50) is never taken for
 * guessing, while guessing is bounded per account:
 * - per (account, address), OAUTH_LOGIN_LIMIT_ACCOUNT: past it, that address's attempts on that
 *   account are refused unchecked, with the wrong password's answer;
 * - per account from every address, OAUTH_LOGIN_ACCOUNT_CEILING (100 an hour by default, as OWASP
 *   ASVS 2.2.1 asks): past it the account is soft-locked: no password signs it in until the
 *   window passes, and the login page offers a code mailed to its owner; under it, each attempt
 *   past the first OAUTH_LOGIN_LIMIT_ACCOUNT waits a growing, capped delay before its check;
 * - per address on any accounts, OAUTH_LOGIN_LIMIT_IP: past it, only failures are slowed.
 * A check spends its per-account points before the password is checked (atomic, so parallel
 * guesses cannot all pass a read-only look), and a success gives them back; the per-address
 * budget is spent only by a failure. The account is the email typed, known or not, so the
 * throttle reveals nothing. Every decision is made in memory, or with Redis when configured
 * (shared by every instance): a refusal costs no database operation.
 */
export class LoginThrottle {
  private readonly perAccountFromAddress: RateLimiterAbstract;
  private readonly perAccount: RateLimiterAbstract;
  private readonly perAddress: RateLimiterAbstract;
  /** One point per ceiling window and account: the first attempt that finds it locked mails the owner. */
  private readonly lockNotices: RateLimiterAbstract;

  constructor(
    private readonly limits: LoginLimits,
    redis?: Redis,
  ) {
    this.perAccountFromAddress = limiter('campus:login:account-ip', limits.accountFromAddress, redis);
    this.perAccount = limiter('campus:login:account', limits.accountCeiling, redis);
    this.perAddress = limiter('campus:login:ip', limits.address, redis);
    this.lockNotices = limiter('campus:login:lock-notice', { points: 1, durationSeconds: limits.accountCeiling.durationSeconds }, redis);
  }

  /** Decides a sign-in attempt; a `check` has spent its per-account points, to be settled after the check. */
  async reserve(email: string, address: string): Promise<LoginDecision> {
    const account = accountKey(email);
    const pair = `${addressKey(address)} ${account}`;
    if (!(await spend(this.perAccountFromAddress, pair))) {
      const locked = await this.lockedFor(account);
      return locked === null ? { kind: 'unchecked' } : this.locked(account, locked);
    }
    const spent = await spend(this.perAccount, account);
    if (!spent) {
      await this.perAccountFromAddress.reward(pair, 1);
      return this.locked(account, (await this.lockedFor(account)) ?? 1);
    }
    const delayMs = loginDelayMs(spent.consumedPoints - 1, this.limits.accountFromAddress.points, this.limits.delay);
    const addressState = await this.perAddress.get(addressKey(address));
    const slowFailure =
      addressState && addressState.consumedPoints >= this.limits.address.points
        ? { delayMs: SLOW_FAILURE_MS, retryAfterSeconds: wholeSeconds(addressState) }
        : null;
    let settled = false;
    return {
      kind: 'check',
      delayMs,
      slowFailure,
      settle: async (outcome) => {
        if (settled) return;
        settled = true;
        // A right password clears this address's failures on the account and gives back the
        // account's point; failures from other addresses stay counted, so the owner signing in
        // does not lift the bound an attacker is under.
        if (outcome === 'succeeded') await Promise.all([this.perAccountFromAddress.delete(pair), this.perAccount.reward(account, 1)]);
        else if (outcome === 'unused') await Promise.all([this.perAccountFromAddress.reward(pair, 1), this.perAccount.reward(account, 1)]);
        else await this.perAddress.penalty(addressKey(address), 1);
      },
    };
  }

  /** Seconds until the account's ceiling window ends, or null when it is not locked (read only). */
  private async lockedFor(account: string): Promise<number | null> {
    const state = await this.perAccount.get(account);
    return state && state.consumedPoints >= this.limits.accountCeiling.points ? wholeSeconds(state) : null;
  }

  private async locked(account: string, retryAfterSeconds: number): Promise<LoginDecision> {
    return { kind: 'locked', retryAfterSeconds, lockStarted: (await spend(this.lockNotices, account)) !== null };
  }
}

/** Spends one point: the limiter's state after it, or null when the budget was spent already. */
async function spend(budget: RateLimiterAbstract, key: string): Promise<RateLimiterRes | null> {
  try {
    return await budget.consume(key);
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) return null;
    throw rejection;
  }
}

function wholeSeconds(state: RateLimiterRes): number {
  return Math.max(1, Math.ceil(state.msBeforeNext / 1000));
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
