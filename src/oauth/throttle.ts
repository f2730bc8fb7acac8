import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface LoginLimit {
  readonly points: number;
  readonly durationSeconds: number;
}

/**
 * Failed-login budgets per account (the email typed, known or not, so throttling reveals
 * nothing) and per client address. Only failures spend points; a success clears the account's
 * count. In Redis when configured (shared by every instance), else in memory.
 */
export class LoginThrottle {
  private readonly perAccount: RateLimiterAbstract;
  private readonly perAddress: RateLimiterAbstract;

  constructor(limits: { account: LoginLimit; address: LoginLimit }, redis?: Redis) {
    this.perAccount = limiter('campus:login:account', limits.account, redis);
    this.perAddress = limiter('campus:login:ip', limits.address, redis);
  }

  /** Seconds to wait before another attempt for this account from this address (0: go ahead). */
  async retryAfter(email: string, address: string): Promise<number> {
    const [account, ip] = await Promise.all([this.perAccount.get(accountKey(email)), this.perAddress.get(address)]);
    return Math.max(waitFor(account, this.perAccount.points), waitFor(ip, this.perAddress.points));
  }

  /** Spends one failed attempt on both budgets. */
  async failed(email: string, address: string): Promise<void> {
    await Promise.all([spend(this.perAccount, accountKey(email)), spend(this.perAddress, address)]);
  }

  /** A correct password clears the account's failures (the address budget keeps counting). */
  async succeeded(email: string): Promise<void> {
    await this.perAccount.delete(accountKey(email));
  }
}

function limiter(keyPrefix: string, limit: LoginLimit, redis: Redis | undefined): RateLimiterAbstract {
  const options = { keyPrefix, points: limit.points, duration: limit.durationSeconds };
  return redis
    ? new RateLimiterRedis({ ...options, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(options) })
    : new RateLimiterMemory(options);
}

/** The budget key of a typed email (bounded: the form field is free text). */
function accountKey(email: string): string {
  return email.trim().toLowerCase().slice(0, 254);
}

function waitFor(res: RateLimiterRes | null, points: number): number {
  if (!res || res.consumedPoints < points) return 0;
  return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
}

async function spend(budget: RateLimiterAbstract, key: string): Promise<void> {
  try {
    await budget.consume(key, 1);
  } catch (rejection) {
    // Over the budget already: the attempt is still counted as refused; nothing else to do.
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
  }
}
