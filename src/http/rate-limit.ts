import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import { TooManyRequestsError } from '../errors/index.js';
import type { ApiKeyPrincipal } from '../auth/principal.js';
import { addressKey } from './address.js';
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

/** The budgets in front of the per-key ones (RATE_LIMIT_ACCOUNT, RATE_LIMIT_ADDRESS). */
export interface AggregateLimits {
  readonly account: Limit;
  readonly address: Limit;
}

/** The names budgets carry in RateLimit-Policy and RateLimit ("default" is the key's own). */
type BudgetName = 'default' | 'account' | 'address';

/**
 * Whose budgets a request spends: a key (its record id, its own limit or null for RATE_LIMIT,
 * its account), or for an endpoint without a key its client address under a limit of its own.
 */
export type Payer = Pick<ApiKeyPrincipal, 'id' | 'rateLimit' | 'ownerAccountId'>;

/** One budget a request spends, and under which key. */
interface Charge {
  readonly budget: Budget;
  readonly key: string;
}

/**
 * Request budgets: per key (RATE_LIMIT, or the key's own), and in front of them, for keys on the
 * default limit, one per client address (every key from it; an IPv6 address by its /64,
 * ./address.ts) and one per account (all its keys), so that many keys multiply neither budget. A key an operator gave its own limit
 * (`campus keys issue --rate-limit`; account-held keys cannot have one) is counted against that
 * limit alone. The three are spent at once (one round trip to Redis); a request refused by any
 * of them spends nothing of the others, and the answer names the budget that refused it.
 */
export class KeyRateLimiter {
  private readonly budgets = new Map<string, Budget>();

  constructor(
    private readonly defaultLimit: Limit,
    private readonly redis?: Redis,
    private readonly aggregates?: AggregateLimits,
  ) {}

  /** Spends one point of each of the request's budgets; throws 429 (with headers set) when one has none left. */
  consume(ctx: AppContext, payer: Payer): Promise<void> {
    return this.take(ctx, this.chargesOf(ctx, payer), 1, 'keep');
  }

  /** Gives back the point a request spent (a 304: docs/decisions.md), and says what is left. */
  async refund(ctx: AppContext, payer: Payer): Promise<void> {
    const charges = this.chargesOf(ctx, payer);
    const states = await Promise.all(charges.map((c) => c.budget.limiter.reward(c.key, 1)));
    setHeaders(ctx, keyCharge(charges).budget, states[states.length - 1] ?? new RateLimiterRes());
  }

  /**
   * Spends `points` more of the request's budgets for a request that costs more than one (a
   * costly GraphQL document). When they are not all there the request is refused (429) and the
   * points it did not get are given back, so the headers keep telling what is really left.
   */
  async spend(ctx: AppContext, payer: Payer, points: number, refusal: (remaining: number, retryAfter: number) => string): Promise<void> {
    await this.take(ctx, this.chargesOf(ctx, payer), points, 'giveBack', refusal);
  }

  /** The budgets a request spends, the aggregates first and the key's own last. */
  private chargesOf(ctx: AppContext, payer: Payer): Charge[] {
    const own: Charge = { budget: this.budgetFor('default', payer.rateLimit ?? this.defaultLimit), key: payer.id };
    if (!this.aggregates || payer.rateLimit) return [own];
    const charges: Charge[] = [{ budget: this.budgetFor('address', this.aggregates.address), key: addressKey(ctx.ip) }];
    if (payer.ownerAccountId !== null)
      charges.push({ budget: this.budgetFor('account', this.aggregates.account), key: String(payer.ownerAccountId) });
    charges.push(own);
    return charges;
  }

  /**
   * Spends `points` of every charge at once. When one refuses, the others get their points back;
   * the refusing one keeps them ('keep': a request over its budget counts, as the key's budget
   * always has) or gets them back too ('giveBack': a costly document refused whole).
   */
  private async take(
    ctx: AppContext,
    charges: readonly Charge[],
    points: number,
    refused: 'keep' | 'giveBack',
    refusal?: (remaining: number, retryAfter: number) => string,
  ): Promise<void> {
    const results = await Promise.allSettled(charges.map((c) => c.budget.limiter.consume(c.key, points)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected' && !(r.reason instanceof RateLimiterRes));
    if (failed) throw failed.reason;
    const refusedAt = results.findIndex((r) => r.status === 'rejected');
    if (refusedAt < 0) {
      const last = results[results.length - 1];
      if (last?.status === 'fulfilled') setHeaders(ctx, keyCharge(charges).budget, last.value);
      return;
    }
    const charge = charges[refusedAt] ?? keyCharge(charges);
    let state = (results[refusedAt] as PromiseRejectedResult).reason as RateLimiterRes;
    await Promise.all(
      charges.map(async (c, i) => {
        if (results[i]?.status === 'fulfilled') await c.budget.limiter.reward(c.key, points);
        else if (refused === 'giveBack') state = await c.budget.limiter.reward(c.key, points);
      }),
    );
    setHeaders(ctx, charge.budget, state);
    const retryAfter = retryAfterSeconds(state);
    if (charge.budget.name !== 'default') throw new TooManyRequestsError(retryAfter, aggregateRefusal(charge.budget, retryAfter));
    throw new TooManyRequestsError(retryAfter, refusal?.(Math.max(0, state.remainingPoints), retryAfter));
  }

  /** The budget of a name and limit, whichever object states the limit: keys given the same limit share its limiter. */
  private budgetFor(name: BudgetName, limit: Limit): Budget {
    const id = `${name}:${limit.points}/${limit.durationSeconds}`;
    let budget = this.budgets.get(id);
    if (!budget) {
      budget = {
        name,
        limit,
        // The per-key budgets keep the Redis keys they have always had.
        limiter: createLimiter(
          limit,
          `campus:rl${name === 'default' ? '' : `-${name}`}:${limit.points}/${limit.durationSeconds}`,
          this.redis,
        ),
        // Headers that depend only on the limit are built once per limit.
        policyHeader: `"${name}";q=${limit.points};w=${limit.durationSeconds}`,
        limitHeader: String(limit.points),
      };
      this.budgets.set(id, budget);
    }
    return budget;
  }
}

function keyCharge(charges: readonly Charge[]): Charge {
  const own = charges[charges.length - 1];
  if (!own) throw new Error('a request spends at least its key budget');
  return own;
}

function aggregateRefusal(budget: Budget, retryAfter: number): string {
  const whose = budget.name === 'account' ? "this key's account, all its keys together" : 'this client address, all its keys together';
  return `Too many requests from ${whose} (${budget.limit.points} per ${budget.limit.durationSeconds} s); retry after ${retryAfter} seconds.`;
}

/** One limit's limiter and the header values that never change for it. */
interface Budget {
  readonly name: BudgetName;
  readonly limit: Limit;
  readonly limiter: RateLimiterAbstract;
  readonly policyHeader: string;
  readonly limitHeader: string;
}

function setHeaders(ctx: AppContext, budget: Budget, res: RateLimiterRes): void {
  const remaining = Math.max(0, res.remainingPoints);
  const reset = Math.max(0, Math.ceil(res.msBeforeNext / 1000));
  ctx.set('RateLimit-Policy', budget.policyHeader);
  ctx.set('RateLimit', `"${budget.name}";r=${remaining};t=${reset}`);
  ctx.set('X-RateLimit-Limit', budget.limitHeader);
  ctx.set('X-RateLimit-Remaining', String(remaining));
}

/**
 * Spends one request of the authenticated key's budgets, and gives it back when the request is
 * answered 304: a conditional request answered 304 does not spend the rate limit
 * (docs/decisions.md). Most 304s are answered before this step (src/rest/handler.ts,
 * notModified); this covers those whose answer had to be computed first.
 */
export function rateLimit(limiter: KeyRateLimiter): AppMiddleware {
  return async (ctx, next) => {
    const principal = ctx.state.apiKey;
    if (!principal) return next();
    await limiter.consume(ctx, principal);
    await next();
    if (ctx.status === 304) await limiter.refund(ctx, principal);
  };
}

/**
 * Spends one request of the client address's budget, for endpoints without a key (the public
 * project list): the same budgets, headers and 304 refund as a key's (`rateLimit`), counted per
 * address (an IPv6 address by its /64, ./address.ts) under a prefix of their own.
 */
export function addressRateLimit(limiter: KeyRateLimiter, limit: Limit): AppMiddleware {
  return async (ctx, next) => {
    // Its own limit: counted against that alone, as a key with its own limit is.
    const payer: Payer = { id: `address:${addressKey(ctx.ip)}`, rateLimit: limit, ownerAccountId: null };
    await limiter.consume(ctx, payer);
    await next();
    if (ctx.status === 304) await limiter.refund(ctx, payer);
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
      principal,
      points - 1,
      (remaining, retryAfter) =>
        `This query costs ${points} rate-limit points (one per ${costPerPoint} of its estimated cost ${cost}) and ${remaining} remain; ` +
        `retry after ${retryAfter} seconds or ask for less.`,
    );
  };
}

/**
 * Failed authentications per client address (API_KEY_FAILURE_LIMIT; an IPv6 address by its /64,
 * ./address.ts): past the limit the address's failing requests are answered 429 instead of 401
 * until the window ends (a valid key from it is still served: src/http/api-key.ts), so guessing
 * keys gets no answers.
 */
export class FailureLimiter {
  private readonly limiter: RateLimiterAbstract;

  constructor(
    private readonly limit: Limit,
    redis?: Redis,
  ) {
    this.limiter = createLimiter(limit, `campus:authfail:${limit.points}/${limit.durationSeconds}`, redis);
  }

  /** Throws 429 while `address` (counted by its addressKey) has no failures left (asked only of a request that failed). */
  async assertAllowed(address: string): Promise<void> {
    const state = await this.limiter.get(addressKey(address)).catch(() => null);
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
    await this.limiter.penalty(addressKey(address), 1).catch(() => undefined);
  }
}
