import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import { TooManyRequestsError } from '../errors/index.js';
import type { AppContext, AppMiddleware } from './context.js';

export interface Limit {
  readonly points: number;
  readonly durationSeconds: number;
}

/**
 * Per-key request budgets. In memory by default; in Redis when a client is given, so several
 * instances share one budget. While Redis is unreachable each instance falls back to its own
 * in-memory budget (the insurance limiter) rather than refusing or failing requests.
 */
export class KeyRateLimiter {
  private readonly budgets = new Map<string, Budget>();

  constructor(
    private readonly defaultLimit: Limit,
    private readonly redis?: Redis,
  ) {}

  /** Spends one point of `key`'s budget; throws 429 (with headers set) when none is left. */
  async consume(ctx: AppContext, key: string, limit: Limit | null): Promise<void> {
    const budget = this.budgetFor(limit ?? this.defaultLimit);
    try {
      const res = await budget.limiter.consume(key, 1);
      setHeaders(ctx, budget, res);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      setHeaders(ctx, budget, rejection);
      throw new TooManyRequestsError(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)));
    }
  }

  private budgetFor(limit: Limit): Budget {
    const id = `${limit.points}/${limit.durationSeconds}`;
    let budget = this.budgets.get(id);
    if (!budget) {
      budget = {
        limiter: this.createLimiter(limit, `campus:rl:${id}`),
        // Headers that depend only on the limit are built once per limit.
        policyHeader: `"default";q=${limit.points};w=${limit.durationSeconds}`,
        limitHeader: String(limit.points),
      };
      this.budgets.set(id, budget);
    }
    return budget;
  }

  private createLimiter(limit: Limit, keyPrefix: string): RateLimiterAbstract {
    const options = { points: limit.points, duration: limit.durationSeconds, keyPrefix };
    if (!this.redis) return new RateLimiterMemory(options);
    return new RateLimiterRedis({
      ...options,
      storeClient: this.redis,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new RateLimiterMemory(options),
    });
  }
}

/** One limit's limiter and the header values that never change for it. */
interface Budget {
  readonly limiter: RateLimiterAbstract;
  readonly policyHeader: string;
  readonly limitHeader: string;
}

function setHeaders(ctx: AppContext, budget: Budget, res: RateLimiterRes): void {
  const remaining = Math.max(0, res.remainingPoints);
  const reset = Math.max(0, Math.ceil(res.msBeforeNext / 1000));
  ctx.set('RateLimit-Policy', budget.policyHeader);
  ctx.set('RateLimit', `"default";r=${remaining};t=${reset}`);
  ctx.set('X-RateLimit-Limit', budget.limitHeader);
  ctx.set('X-RateLimit-Remaining', String(remaining));
}

/** Spends one request of the authenticated key's budget. */
export function rateLimit(limiter: KeyRateLimiter): AppMiddleware {
  return async (ctx, next) => {
    const principal = ctx.state.apiKey;
    if (principal) await limiter.consume(ctx, principal.id, principal.rateLimit);
    await next();
  };
}
