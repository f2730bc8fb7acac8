import type { Redis } from 'ioredis';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { PROFILE_SAVE_LIMIT, WEBHOOK_SEND_LIMIT } from '../../limits.js';
import { limiter } from '../../oauth/throttle.js';

/**
 * An action of the console counted per account: each spends its point before it runs (as the
 * login throttle does: src/oauth/throttle.ts), so actions sent at once cannot pass the limit
 * together. In Redis when configured (shared by every instance), else in memory.
 */
export class AccountRate {
  private readonly budget: RateLimiterAbstract;

  constructor(
    keyPrefix: string,
    readonly limit: { readonly points: number; readonly durationSeconds: number },
    redis: Redis | undefined,
  ) {
    this.budget = limiter(keyPrefix, limit, redis);
  }

  /** Spends one of the account's actions: undefined when it may run, else the whole seconds to wait (Retry-After). */
  async spend(accountId: number): Promise<number | undefined> {
    try {
      await this.budget.consume(String(accountId));
      return undefined;
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      return Math.max(1, Math.ceil(err.msBeforeNext / 1000));
    }
  }
}

/** The console's rates per account (docs/limits-and-security.md, "The developer console"; the numbers: src/limits.ts). */
export interface ConsoleRates {
  /** Saves of the student's own profile (/console/profile). */
  readonly profileSaves: AccountRate;
  /** Webhook test events and redeliveries (/console/webhooks). */
  readonly webhookSends: AccountRate;
}

export function consoleRates(redis: Redis | undefined): ConsoleRates {
  return {
    profileSaves: new AccountRate('campus:console:profile-saves', PROFILE_SAVE_LIMIT, redis),
    webhookSends: new AccountRate('campus:console:webhook-sends', WEBHOOK_SEND_LIMIT, redis),
  };
}
