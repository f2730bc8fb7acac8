import { RequestBudget, withRequestBudget, type Gate } from '../data/budget.js';
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
 * started are refused, and an answer that arrives late is dropped (src/data/budget.ts).
 */
export function timeBudget(options: BudgetOptions): AppMiddleware {
  return async (ctx, next) => {
    const budget = new RequestBudget({ timeMs: options.timeMs, maxOperations: options.maxDbOperations }, options.databaseGate);
    ctx.state.budget = budget;
    const timer = setTimeout(() => budget.expire(), options.timeMs);
    try {
      await budget.race(withRequestBudget(budget, next));
    } finally {
      clearTimeout(timer);
    }
  };
}
