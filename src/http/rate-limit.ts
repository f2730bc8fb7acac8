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
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(
    private readonly defaultLimit: Limit,
    private readonly redis?: Redis,
  ) {}

  /** Spends one point of `key`'s budget; throws 429 (with headers set) when none is left. */
  async consume(ctx: AppContext, key: string, limit: Limit | null): Promise<void> {
    const effective = limit ?? this.defaultLimit;
    const limiter = this.limiterFor(effective);
    try {
      const res = await limiter.consume(key, 1);
      setHeaders(ctx, effective, res);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      setHeaders(ctx, effective, rejection);
      throw new TooManyRequestsError(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)));
    }
  }

  private limiterFor(limit: Limit): RateLimiterAbstract {
    const id = `${limit.points}/${limit.durationSeconds}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      const options = { points: limit.points, duration: limit.durationSeconds, keyPrefix: `campus:rl:${id}` };
      limiter = this.redis
        ? new RateLimiterRedis({
            ...options,
            storeClient: this.redis,
            rejectIfRedisNotReady: true,
            insuranceLimiter: new RateLimiterMemory(options),
          })
        : new RateLimiterMemory(options);
      this.limiters.set(id, limiter);
    }
    return limiter;
  }
}

function setHeaders(ctx: AppContext, limit: Limit, res: RateLimiterRes): void {
  const remaining = Math.max(0, res.remainingPoints);
  const reset = Math.max(0, Math.ceil(res.msBeforeNext / 1000));
  ctx.set('RateLimit-Policy', `"default";q=${limit.points};w=${limit.durationSeconds}`);
  ctx.set('RateLimit', `"default";r=${remaining};t=${reset}`);
  ctx.set('X-RateLimit-Limit', String(limit.points));
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
