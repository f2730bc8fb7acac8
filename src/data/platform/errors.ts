import mongoose from 'mongoose';
import {
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerClosedError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import { AppError, InternalError, ServiceUnavailableError } from '../../errors/index.js';

/**
 * The driver's errors that mean "the database cannot be reached right now" (MongoNetworkError
 * covers its subclasses: timeouts and a cleared connection pool). Told apart by class: the data
 * layer is the one place that knows the driver (docs/architecture.md, "The layers").
 */
const UNREACHABLE = [
  MongoServerSelectionError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoTopologyClosedError,
  MongoServerClosedError,
  mongoose.Error.MongooseServerSelectionError,
] as const;

/** True when `err` (or an error it wraps) says the database is unreachable. */
export function isDatabaseUnreachable(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (UNREACHABLE.some((type) => current instanceof type)) return true;
    current = current.cause;
  }
  return false;
}

/**
 * True when a write failed on a unique index (MongoDB's code 11000, which FerretDB keeps): the
 * expected outcome of a race two writers can both start, such as concurrent upserts of one id.
 */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && err.code === 11000;
}

/**
 * Classifies anything thrown: AppErrors pass through; an unreachable database is a 503 the
 * service recovers from by itself; everything else is a 500 whose cause is logged, never sent.
 */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isDatabaseUnreachable(err)) return new ServiceUnavailableError('The database is unavailable; try again shortly.', err);
  return new InternalError(err);
}
