import { AsyncLocalStorage } from 'node:async_hooks';
import type { MongooseDistinctQueryMiddleware, Query, Schema } from 'mongoose';
import { BusyError, OperationLimitError, TimeBudgetError, type AppError } from '../../errors/index.js';

/**
 * What one data request may spend: wall-clock time and database operations. The HTTP layer
 * (src/http/budget.ts) creates one per request and abandons it when its time runs out; every
 * database read made on the request's behalf checks it first, runs with MongoDB's `maxTimeMS`
 * set to the time left (FerretDB honours it for find and aggregate), and waits for a slot of
 * the process-wide database gate, so a costly request can neither outlive its deadline nor
 * occupy the database that logins and userinfo share.
 */
export class RequestBudget {
  private operations = 0;
  private abandonment: AppError | undefined;
  private readonly listeners = new Set<(error: AppError) => void>();
  private readonly deadline: number;

  constructor(
    readonly limits: { readonly timeMs: number; readonly maxOperations: number },
    /** The gate every database read of a data request passes (absent: unbounded). */
    readonly databaseGate?: Gate,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.deadline = clock() + limits.timeMs;
  }

  /** Milliseconds left before the deadline (0 when passed). */
  remainingMs(): number {
    return Math.max(0, this.deadline - this.clock());
  }

  /** The error the request was abandoned with, if it was. */
  get abandoned(): AppError | undefined {
    return this.abandonment;
  }

  /** Stops the request: the first reason wins; waiters and the HTTP layer are told at once. */
  abandon(error: AppError): AppError {
    if (this.abandonment) return this.abandonment;
    this.abandonment = error;
    for (const listener of this.listeners) listener(error);
    this.listeners.clear();
    return error;
  }

  /** The time budget's own abandonment (the deadline passed). */
  expire(): AppError {
    return this.abandon(new TimeBudgetError(this.limits.timeMs));
  }

  /** Calls `listener` when the request is abandoned; returns the unsubscribe function. */
  onAbandon(listener: (error: AppError) => void): () => void {
    if (this.abandonment) {
      listener(this.abandonment);
      return () => {};
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Throws the abandonment error, if any: a caller about to answer checks it synchronously first. */
  assertActive(): void {
    if (this.abandonment) throw this.abandonment;
  }

  /** Settles with `work`, or rejects with the abandonment error as soon as the request is abandoned. */
  race<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const unsubscribe = this.onAbandon(reject);
      work.then(
        (value) => {
          unsubscribe();
          if (this.abandonment) reject(this.abandonment);
          else resolve(value);
        },
        (err: unknown) => {
          unsubscribe();
          reject(this.abandonment ?? err);
        },
      );
    });
  }

  /**
   * Admits one database operation: counts it against the allowance, waits for a database slot,
   * and returns the `maxTimeMS` to run it with plus the slot's release. Throws (and abandons the
   * request) when the allowance or the time is spent.
   */
  async beginOperation(): Promise<{ maxTimeMS: number; release: () => void }> {
    this.assertActive();
    this.operations += 1;
    if (this.operations > this.limits.maxOperations) throw this.abandon(new OperationLimitError(this.limits.maxOperations));
    const release = this.databaseGate ? await this.databaseGate.enter(this) : () => {};
    const maxTimeMS = Math.ceil(this.remainingMs());
    if (maxTimeMS <= 0 || this.abandonment) {
      release();
      throw this.abandonment ?? this.expire();
    }
    return { maxTimeMS, release };
  }
}

/**
 * A counting semaphore with a bounded waiting line: `enter` resolves with a release function
 * when a slot is free; a waiter leaves the line when its request is abandoned; a full line is
 * refused at once (503).
 */
export class Gate {
  private active = 0;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(
    /** Named in the 503 message, e.g. "The GraphQL endpoint". */
    private readonly name: string,
    readonly capacity: number,
    readonly maxWaiting = Number.POSITIVE_INFINITY,
  ) {}

  /** Takes a slot, waiting in line while `budget` lasts; returns the (idempotent) release. */
  enter(budget?: RequestBudget): Promise<() => void> {
    budget?.assertActive();
    if (this.active < this.capacity) {
      this.active += 1;
      return Promise.resolve(this.releaser());
    }
    if (this.waiting.length >= this.maxWaiting) return Promise.reject(new BusyError(this.name, this.active, this.waiting.length));
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          leave();
          this.active += 1;
          resolve(this.releaser());
        },
      };
      this.waiting.push(waiter);
      const leave =
        budget?.onAbandon((error) => {
          const index = this.waiting.indexOf(waiter);
          if (index >= 0) this.waiting.splice(index, 1);
          reject(error);
        }) ?? (() => {});
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= 1;
      this.waiting.shift()?.grant();
    };
  }
}

/**
 * Carries the budget of the request being served along its async chain, so that every query the
 * request causes (pages, DataLoader batches, NEIS reads, the API-key lookup) is held to it
 * without each data function taking a parameter. Requests outside the data API run without one.
 */
const current = new AsyncLocalStorage<RequestBudget>();

/** Runs `work` (and everything it starts) under `budget`. */
export function withRequestBudget<T>(budget: RequestBudget, work: () => Promise<T>): Promise<T> {
  return current.run(budget, work);
}

/**
 * Runs `work` (and everything it starts) outside any request's budget: shared work that one
 * request happens to start but many wait for (the read model's load, src/data/school/read-model.ts)
 * must not be stopped, counted or gated as that one request's reads.
 */
export function outsideRequestBudget<T>(work: () => Promise<T>): Promise<T> {
  return current.exit(work);
}

/** The budget of the request being served, if any. */
export function currentBudget(): RequestBudget | undefined {
  return current.getStore();
}

/** The reads data requests make; writes never run on a data request's behalf. */
const READS: MongooseDistinctQueryMiddleware[] = ['find', 'findOne', 'countDocuments', 'estimatedDocumentCount', 'distinct'];

/** MongoDB's (and FerretDB's) code for "operation exceeded time limit". */
const MAX_TIME_MS_EXPIRED = 50;

const releases = new WeakMap<object, () => void>();

/**
 * Mongoose plugin: every read made under a request budget is admitted by it (count, database
 * slot, `maxTimeMS` = time left); a read stopped by `maxTimeMS` abandons the request with the
 * time budget's error rather than surfacing as a server error.
 */
export function budgetPlugin(schema: Schema): void {
  schema.pre(READS, async function (this: Query<unknown, unknown>) {
    const budget = currentBudget();
    if (!budget) return;
    const { maxTimeMS, release } = await budget.beginOperation();
    releases.set(this, release);
    this.maxTimeMS(maxTimeMS);
  });
  schema.post(READS, async function (this: Query<unknown, unknown>) {
    const release = releases.get(this);
    if (!release) return;
    release();
    // Let waiting I/O (health checks, logins) run between decoding this result and building
    // the answer from it: both are long synchronous stretches for a large read.
    await new Promise<void>((resolve) => setImmediate(resolve));
  });
  schema.post(
    READS,
    { errorHandler: true },
    function (this: Query<unknown, unknown>, error: Error, _res: unknown, next: (err?: Error) => void) {
      releases.get(this)?.();
      const budget = currentBudget();
      if (budget && (error as { code?: unknown }).code === MAX_TIME_MS_EXPIRED) return next(budget.expire());
      next(error);
    },
  );
}
