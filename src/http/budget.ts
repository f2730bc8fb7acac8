import { RequestBudget, withRequestBudget, type Gate } from '../data/platform/budget.js';
import type { AppMiddleware } from './context.js';

export interface BudgetOptions {
  /** Wall-clock milliseconds one data request may take, waiting in line included. */
  readonly timeMs: number;
  /** Database operations one data request may make. */
  readonly maxDbOperations: number;
  /** The process-wide gate every database read of a data request passes. */
  readonly databaseGate: Gate;
}

/**
 * Gives a data request its budget and holds it to the deadline: when the time is spent the
 * request is answered 503 with the envelope and Retry-After at once, whatever it is doing;
 * reads still running stop by themselves (they run with `maxTimeMS` = time left), reads not yet
 * started are refused, and an answer that arrives late is dropped (src/data/platform/budget.ts).
 */
export function timeBudget(options: BudgetOptions): AppMiddleware {
  const deadlines = new Deadlines();
  return async (ctx, next) => {
    const budget = new RequestBudget({ timeMs: options.timeMs, maxOperations: options.maxDbOperations }, options.databaseGate);
    ctx.state.budget = budget;
    const entry = deadlines.add(budget);
    try {
      await budget.race(withRequestBudget(budget, next));
    } finally {
      deadlines.settle(entry);
    }
  };
}

/** A request under way, in the order the requests came. */
interface Pending {
  readonly budget: RequestBudget;
  settled: boolean;
}

/**
 * The deadlines of the requests under way, with one timer for them all instead of one per request:
 * a timer set and cleared on every request was a measurable part of a warm answer
 * (docs/benchmarks.md, "A warm answer's fixed cost"). Every request gets the same time, so the
 * order they came in is the order their deadlines fall in: a queue, whose oldest request the timer
 * waits for. A request that ends is marked; ended requests leave from the front, and the timer,
 * when it fires, expires every request due and waits for the next one still under way.
 */
export class Deadlines {
  private readonly queue: Pending[] = [];
  /** Where the queue starts (entries before it have left; the array is compacted now and then). */
  private head = 0;
  private timer: NodeJS.Timeout | undefined;

  /** `budget`s added must all be given the same time (a request's deadline is its budget's own). */
  add(budget: RequestBudget): Pending {
    const entry: Pending = { budget, settled: false };
    this.queue.push(entry);
    this.timer ??= this.wakeIn(budget.remainingMs());
    return entry;
  }

  settle(entry: Pending): void {
    entry.settled = true;
    this.dropSettled();
  }

  private fire(): void {
    this.timer = undefined;
    for (let entry = this.front(); entry && entry.budget.remainingMs() === 0; entry = this.front()) {
      this.head += 1;
      if (!entry.settled) entry.budget.expire();
    }
    this.dropSettled();
    const next = this.front();
    if (next) this.timer = this.wakeIn(next.budget.remainingMs());
  }

  /** The timer alone keeps no process alive: a request under way does, by its connection. */
  private wakeIn(ms: number): NodeJS.Timeout {
    return setTimeout(() => this.fire(), ms).unref();
  }

  private front(): Pending | undefined {
    return this.queue[this.head];
  }

  private dropSettled(): void {
    while (this.front()?.settled) this.head += 1;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }
}
