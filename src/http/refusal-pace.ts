import { LRUCache } from 'lru-cache';
import { addressKey } from './address.js';

export interface RefusalPaceLimits {
  /** Refusals a second one client address gets at once. */
  readonly perSecond: number;
  /** How long each refusal past that waits before it is sent (milliseconds). */
  readonly pauseMs: number;
}

/** Client addresses whose pace is kept; one past it starts afresh (a burst of perSecond / 10). */
const ADDRESSES = 10_000;

/**
 * How fast one client address is refused. A refusal costs little, but a closed loop of connections
 * asks again the moment it is answered, so refusals answered at once come as fast as the event loop
 * can send them and take it from everyone else (bench/flood.ts's runs: docs/limits-and-security.md,
 * "Refusals are paced per client address"). Up to `perSecond` refusals a second per address (a
 * token bucket holding a tenth of a second's worth) are sent at once; each one past them is sent
 * after `pauseMs`, which costs a timer: a flooding connection then turns over at most 1000 /
 * pauseMs times a second. In memory and per process: it guards this process's event loop, so it
 * costs no round trip.
 */
export class RefusalPace {
  private readonly buckets = new LRUCache<string, { tokens: number; at: number }>({ max: ADDRESSES });
  private readonly burst: number;

  constructor(
    private readonly limits: RefusalPaceLimits,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.burst = Math.max(1, limits.perSecond / 10);
  }

  /** How long the refusal of `address` waits before it is sent: 0 within the pace. */
  delayFor(address: string): number {
    const key = addressKey(address);
    const now = this.clock();
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) * this.limits.perSecond) / 1000);
    bucket.at = now;
    const prompt = bucket.tokens >= 1;
    if (prompt) bucket.tokens -= 1;
    this.buckets.set(key, bucket);
    return prompt ? 0 : this.limits.pauseMs;
  }
}
