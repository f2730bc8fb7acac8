import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface LoginLimit {
  readonly points: number;
  readonly durationSeconds: number;
}

/**
 * Failed-login budgets per account (the email typed, known or not, so throttling reveals
 * nothing) and per client address. Every attempt spends a point up front; a success clears the
 * account's count and returns the address's point. In Redis when configured (shared by every
 * instance), else in memory.
 */
export class LoginThrottle {
  private readonly perAccount: RateLimiterAbstract;
  private readonly perAddress: RateLimiterAbstract;

  constructor(limits: { account: LoginLimit; address: LoginLimit }, redis?: Redis) {
    this.perAccount = limiter('campus:login:account', limits.account, redis);
    this.perAddress = limiter('campus:login:ip', limits.address, redis);
  }

  /**
   * Spends one attempt on both budgets before the password is checked, so parallel guesses
   * cannot all pass a read-only check. Returns the seconds to wait (0: go ahead).
   */
  async reserve(email: string, address: string): Promise<number> {
    const results = await Promise.allSettled([this.perAccount.consume(accountKey(email)), this.perAddress.consume(addressKey(address))]);
    let wait = 0;
    for (const result of results) {
      if (result.status === 'fulfilled') continue;
      if (!(result.reason instanceof RateLimiterRes)) throw result.reason;
      wait = Math.max(wait, Math.max(1, Math.ceil(result.reason.msBeforeNext / 1000)));
    }
    return wait;
  }

  /** A correct password clears the account's failures and gives the address its attempt back. */
  async succeeded(email: string, address: string): Promise<void> {
    await Promise.all([this.perAccount.delete(accountKey(email)), this.perAddress.reward(addressKey(address), 1)]);
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

/** The budget key of a client address; IPv6 by its /64, which one subscriber usually holds whole. */
function addressKey(address: string): string {
  const bare = address.startsWith('::ffff:') ? address.slice(7) : address;
  return bare.includes(':') ? expandIpv6(bare).slice(0, 4).join(':') : bare;
}

function expandIpv6(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0');
  return [...left, ...zeros, ...right];
}
