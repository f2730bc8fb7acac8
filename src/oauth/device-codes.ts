import type { Redis } from 'ioredis';
import type Provider from 'oidc-provider';
import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { addressKey } from '../http/address.js';
import { OAUTH_PATHS } from './constants.js';
import { limiter, type LoginLimit } from './throttle.js';

/*
 * Guessing device sign-in codes (RFC 8628, section 5.1). A user code is 8 letters of 20 (20^8,
 * about 2.6 * 10^10 codes), lives LIFETIMES.deviceCode and is used once; every code typed at
 * /device that finds no code waiting (wrong, expired, used, or none) spends a point of its
 * address's budget and of the budget of every address together, so a guesser gets a few hundred
 * tries per window against billions of codes. A right code gives its points back: a classroom
 * behind one address signing in its screens never runs out. Counted in memory, or in Redis when
 * configured, like the login throttle (src/oauth/throttle.ts).
 */

export interface UserCodeLimits {
  /** Codes that found nothing, from one address. */
  readonly perAddress: LoginLimit;
  /** Codes that found nothing, from every address together. */
  readonly everywhere: LoginLimit;
}

export const USER_CODE_LIMITS: UserCodeLimits = {
  perAddress: { points: 30, durationSeconds: 10 * 60 },
  everywhere: { points: 300, durationSeconds: 10 * 60 },
};

/** The key of the budget every address shares. */
const EVERYWHERE = 'all';

/** A guess allowed (its points spent, `refund` gives them back), or the seconds until the budget spent has room again. */
export type UserCodeDecision =
  { readonly allowed: true; refund(): Promise<void> } | { readonly allowed: false; readonly retryAfterSeconds: number };

export class UserCodeThrottle {
  private readonly perAddress: RateLimiterAbstract;
  private readonly everywhere: RateLimiterAbstract;

  constructor(redis?: Redis, limits: UserCodeLimits = USER_CODE_LIMITS) {
    this.perAddress = limiter('campus:user-code:ip', limits.perAddress, redis);
    this.everywhere = limiter('campus:user-code:all', limits.everywhere, redis);
  }

  /**
   * Spends a point of both budgets before the code is looked up (atomic: parallel guesses cannot
   * all pass), or refuses when either is spent (nothing is spent then).
   */
  async reserve(address: string): Promise<UserCodeDecision> {
    const key = addressKey(address);
    const own = await consume(this.perAddress, key);
    if (own !== true) return { allowed: false, retryAfterSeconds: own };
    const shared = await consume(this.everywhere, EVERYWHERE);
    if (shared !== true) {
      await this.perAddress.reward(key, 1);
      return { allowed: false, retryAfterSeconds: shared };
    }
    return {
      allowed: true,
      refund: async () => {
        await Promise.all([this.perAddress.reward(key, 1), this.everywhere.reward(EVERYWHERE, 1)]);
      },
    };
  }
}

/** True when a point was spent; else the whole seconds until the budget has one. */
async function consume(budget: RateLimiterAbstract, key: string): Promise<true | number> {
  try {
    await budget.consume(key);
    return true;
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) return Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
    throw rejection;
  }
}

/** The refusal a spent budget answers with; the page (ProviderPages.deviceCode) words it. */
export class UserCodeGuessesSpent extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('too many codes that found nothing; try again later');
    this.name = 'UserCodeGuessesSpent';
  }
}

/**
 * Runs inside the provider's Koa app, around every POST /device (a code typed, confirmed or
 * cancelled): a spent budget is answered 429 with Retry-After by `refuse`, before the code is looked
 * up; a code that was found (the provider holds its DeviceCode) gives its points back.
 */
export function guardUserCodes(
  provider: Provider,
  throttle: UserCodeThrottle,
  refuse: (ctx: KoaContextWithOIDC, err: UserCodeGuessesSpent) => Promise<void>,
): void {
  const guard: Middleware<KoaContextWithOIDC['state'], KoaContextWithOIDC> = async (ctx, next) => {
    if (ctx.method !== 'POST' || ctx.path !== OAUTH_PATHS.device) return next();
    const decision = await throttle.reserve(ctx.ip);
    if (!decision.allowed) {
      ctx.status = 429;
      ctx.set('Retry-After', String(decision.retryAfterSeconds));
      await refuse(ctx, new UserCodeGuessesSpent(decision.retryAfterSeconds));
      return;
    }
    try {
      await next();
    } finally {
      if (ctx.oidc?.entities.DeviceCode) await decision.refund();
    }
  };
  provider.use(guard);
}
