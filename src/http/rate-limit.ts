import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import { TooManyRequestsError } from '../errors/index.js';
import type { AppContext, AppMiddleware } from './context.js';

export interface Limit {
  readonly points: number;
  readonly durationSeconds: number;
}

/**
 * A limiter in memory, or in Redis when a client is given so that several instances share one
 * budget. While Redis is unreachable each instance falls back to its own in-memory budget (the
 * insurance limiter) rather than refusing or failing requests.
 */
function createLimiter(limit: Limit, keyPrefix: string, redis: Redis | undefined): RateLimiterAbstract {
  const options = { points: limit.points, duration: limit.durationSeconds, keyPrefix };
  if (!redis) return new RateLimiterMemory(options);
  return new RateLimiterRedis({
    ...options,
    storeClient: redis,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory(options),
  });
}

/** Whole seconds until a limiter's window resets, at least 1 (for Retry-After). */
function retryAfterSeconds(res: RateLimiterRes): number {
  return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
}

/** Per-key request budgets (RATE_LIMIT, or the key's own). */
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
      setHeaders(ctx, budget, await budget.limiter.consume(key, 1));
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      setHeaders(ctx, budget, rejection);
      throw new TooManyRequestsError(retryAfterSeconds(rejection));
    }
  }

  /** Gives back the point a request spent (a 304: docs/decisions.md), and says what is left. */
  async refund(ctx: AppContext, key: string, limit: Limit | null): Promise<void> {
    const budget = this.budgetFor(limit ?? this.defaultLimit);
    setHeaders(ctx, budget, await budget.limiter.reward(key, 1));
  }

  /**
   * Spends `points` more of `key`'s budget for a request that costs more than one (a costly
   * GraphQL document). When they are not all there the request is refused (429) and the points
   * it did not get are given back, so the headers keep telling what is really left.
   */
  async spend(
    ctx: AppContext,
    key: string,
    limit: Limit | null,
    points: number,
    refusal: (remaining: number, retryAfter: number) => string,
  ): Promise<void> {
    const budget = this.budgetFor(limit ?? this.defaultLimit);
    try {
      setHeaders(ctx, budget, await budget.limiter.consume(key, points));
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const state = await budget.limiter.reward(key, points);
      setHeaders(ctx, budget, state);
      const retryAfter = retryAfterSeconds(state);
      throw new TooManyRequestsError(retryAfter, refusal(Math.max(0, state.remainingPoints), retryAfter));
    }
  }

  private budgetFor(limit: Limit): Budget {
    const id = `${limit.points}/${limit.durationSeconds}`;
    let budget = this.budgets.get(id);
    if (!budget) {
      budget = {
        limiter: createLimiter(limit, `campus:rl:${id}`, this.redis),
        // Headers that depend only on the limit are built once per limit.
        policyHeader: `"default";q=${limit.points};w=${limit.durationSeconds}`,
        limitHeader: String(limit.points),
      };
      this.budgets.set(id, budget);
    }
    return budget;
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

/**
 * Spends one request of the authenticated key's budget, and gives it back when the request is
 * answered 304: a conditional request answered 304 does not spend the rate limit
 * (docs/decisions.md). Most 304s are answered before this step (src/rest/handler.ts,
 * notModified); this covers those whose answer had to be computed first.
 */
export function rateLimit(limiter: KeyRateLimiter): AppMiddleware {
  return async (ctx, next) => {
    const principal = ctx.state.apiKey;
    if (!principal) return next();
    await limiter.consume(ctx, principal.id, principal.rateLimit);
    await next();
    if (ctx.status === 304) await limiter.refund(ctx, principal.id, principal.rateLimit);
  };
}

/**
 * Spends one request of the client address's budget, for endpoints without a key (the public
 * project list, issue 25): the same budgets, headers and 304 refund as a key's (`rateLimit`),
 * counted per address under a prefix of their own.
 */
export function addressRateLimit(limiter: KeyRateLimiter, limit: Limit): AppMiddleware {
  return async (ctx, next) => {
    const key = `address:${ctx.ip}`;
    await limiter.consume(ctx, key, limit);
    await next();
    if (ctx.status === 304) await limiter.refund(ctx, key, limit);
  };
}

/** Rate-limit points a GraphQL document of estimated `cost` spends: one per `costPerPoint`, at least one. */
export function pointsForCost(cost: number, costPerPoint: number): number {
  return Math.max(1, Math.ceil(cost / costPerPoint));
}

/**
 * How a /graphql document pays for its cost: the door (`rateLimit`) took one point, as from
 * every request; this takes the rest of `pointsForCost`, or refuses the document (429).
 */
export function costCharge(limiter: KeyRateLimiter, costPerPoint: number): (ctx: AppContext, cost: number) => Promise<void> {
  return async (ctx, cost) => {
    const principal = ctx.state.apiKey;
    const points = pointsForCost(cost, costPerPoint);
    if (!principal || points <= 1) return;
    await limiter.spend(
      ctx,
      principal.id,
      principal.rateLimit,
      points - 1,
      (remaining, retryAfter) =>
        `This query costs ${points} rate-limit points (one per ${costPerPoint} of its estimated cost ${cost}) and ${remaining} remain; ` +
        `retry after ${retryAfter} seconds or ask for less.`,
    );
  };
}

/**
 * Failed authentications per client address (API_KEY_FAILURE_LIMIT): past the limit the
 * address's failing requests are answered 429 instead of 401 until the window ends (a valid key
 * from it is still served: src/http/api-key.ts), so guessing keys gets no answers.
 */
export class FailureLimiter {
  private readonly limiter: RateLimiterAbstract;

  constructor(
    private readonly limit: Limit,
    redis?: Redis,
  ) {
    this.limiter = createLimiter(limit, `campus:authfail:${limit.points}/${limit.durationSeconds}`, redis);
  }

  /** Throws 429 while `address` has no failures left (asked only of a request that failed). */
  async assertAllowed(address: string): Promise<void> {
    const state = await this.limiter.get(address).catch(() => null);
    if (state && state.consumedPoints >= this.limit.points) {
      const retryAfter = retryAfterSeconds(state);
      throw new TooManyRequestsError(
        retryAfter,
        `Too many failed authentications from this address (${this.limit.points} per ${this.limit.durationSeconds} s); retry after ${retryAfter} seconds.`,
      );
    }
  }

  /** Counts one failed authentication of `address`. */
  async recordFailure(address: string): Promise<void> {
    // A store failure must not turn a 401 into a 500: the count is a guard, not the answer.
    await this.limiter.penalty(address, 1).catch(() => undefined);
  }
}
