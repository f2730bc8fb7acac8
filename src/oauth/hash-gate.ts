/** A hash that could not start: every slot is taken and the queue is full (or the wait ran out). */
export class HashGateBusy extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('too many passwords are being hashed right now');
  }
}

export interface HashGateOptions {
  /** Hashes that may run at once. */
  readonly concurrency: number;
  /** Requests that may wait for a slot; more are refused at once. */
  readonly queue: number;
  /** How long a waiting request waits before it is refused. */
  readonly maxWaitMs: number;
}

/**
 * Bounds the argon2 work that self-service requests start (new passwords: sign-up, reset,
 * change). argon2 runs on libuv's thread pool (4 threads unless UV_THREADPOOL_SIZE says
 * otherwise), which the login check shares; with at most `concurrency` (1 by default) of these
 * hashes running, logins always keep the rest of the pool, and a burst of new passwords waits
 * briefly or is shed (503 with Retry-After) instead of queueing behind logins. Per process.
 */
export class HashGate {
  private running = 0;
  private readonly waiting: { start: () => void; timer: NodeJS.Timeout }[] = [];

  constructor(private readonly options: HashGateOptions) {}

  /** Runs `work` in a slot, waiting for one within the limits; HashGateBusy when none comes. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  /** Hashes running now (for tests and metrics). */
  get active(): number {
    return this.running;
  }

  private acquire(): Promise<void> {
    if (this.running < this.options.concurrency) {
      this.running += 1;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.options.queue) return Promise.reject(new HashGateBusy(1));
    return new Promise((resolve, reject) => {
      const entry = {
        start: () => {
          clearTimeout(entry.timer);
          resolve();
        },
        timer: setTimeout(() => {
          const index = this.waiting.indexOf(entry);
          if (index >= 0) this.waiting.splice(index, 1);
          reject(new HashGateBusy(1));
        }, this.options.maxWaitMs),
      };
      this.waiting.push(entry);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    // The slot passes straight to the next waiter; `running` stays the same.
    if (next) next.start();
    else this.running -= 1;
  }
}
