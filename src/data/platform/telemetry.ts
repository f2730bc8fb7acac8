import type { Connection, Model, Schema } from 'mongoose';
import type { SyncReport } from '../models/neis-state.model.js';

/** One database operation made through a model: its collection, kind, duration and outcome. */
export interface OperationSample {
  readonly collection: string;
  readonly operation: string;
  readonly seconds: number;
  readonly failed: boolean;
}

/** One load of the school's read model (src/data/school/read-model.ts). */
export interface ReadModelLoad {
  readonly version: number;
  readonly seconds: number;
  readonly students: number;
  readonly clubs: number;
  readonly projects: number;
}

type Listener<T> = (event: T) => void;

/**
 * What the data layer reports about itself: database operation timings, NEIS sync outcomes and
 * read-model loads. The data layer knows nothing of metrics; the HTTP layer's Prometheus
 * registry (src/http/metrics.ts) listens here. With no listener, nothing is even timed.
 */
export class DataTelemetry {
  private readonly operations = new Set<Listener<OperationSample>>();
  private readonly syncs = new Set<Listener<SyncReport>>();
  private readonly loads = new Set<Listener<ReadModelLoad>>();

  /** True while someone listens to operation timings (the plugin skips its clock otherwise). */
  get timingOperations(): boolean {
    return this.operations.size > 0;
  }

  onOperation(listener: Listener<OperationSample>): () => void {
    return subscribe(this.operations, listener);
  }

  onNeisSync(listener: Listener<SyncReport>): () => void {
    return subscribe(this.syncs, listener);
  }

  onReadModelLoad(listener: Listener<ReadModelLoad>): () => void {
    return subscribe(this.loads, listener);
  }

  operation(sample: OperationSample): void {
    for (const listener of this.operations) listener(sample);
  }

  neisSync(report: SyncReport): void {
    for (const listener of this.syncs) listener(report);
  }

  readModelLoad(load: ReadModelLoad): void {
    for (const listener of this.loads) listener(load);
  }
}

function subscribe<T>(set: Set<Listener<T>>, listener: Listener<T>): () => void {
  set.add(listener);
  return () => set.delete(listener);
}

/** Query operations timed by the plugin (mongoose's query middleware names). */
const QUERY_OPERATIONS = [
  'find',
  'findOne',
  'countDocuments',
  'estimatedDocumentCount',
  'distinct',
  'updateOne',
  'updateMany',
  'replaceOne',
  'deleteOne',
  'deleteMany',
  'findOneAndUpdate',
  'findOneAndDelete',
  'findOneAndReplace',
] as const;

/**
 * The telemetry of each connection. Mongoose applies a connection's plugins to a schema once,
 * for the first connection that compiles it (src/data/models/*.ts share their schemas), so the
 * plugin below is the same for every connection and finds the telemetry through the model's.
 */
const byConnection = new WeakMap<Connection, DataTelemetry>();

/** Makes operations of models on `connection` report to `telemetry`. */
export function reportOperations(connection: Connection, telemetry: DataTelemetry): void {
  byConnection.set(connection, telemetry);
}

/** When each timed operation started, keyed by its query, aggregate or document. */
const started = new WeakMap<object, number>();

function begin(target: object, connection: Connection | undefined): void {
  if (connection && byConnection.get(connection)?.timingOperations) started.set(target, performance.now());
}

function end(target: object, connection: Connection | undefined, collection: string, operation: string, failed: boolean): void {
  const at = started.get(target);
  if (at === undefined) return;
  started.delete(target);
  const telemetry = connection && byConnection.get(connection);
  telemetry?.operation({ collection, operation, seconds: (performance.now() - at) / 1000, failed });
}

type ErrorNext = (err?: Error) => void;

/**
 * Mongoose plugin: times every operation made through a model (queries, aggregations, saves,
 * insertMany) and reports it to its connection's telemetry. A plugin rather than the driver's
 * command events: with command monitoring on, the driver decodes every reply a second time to
 * hand it to the event, which doubles the cost of large reads.
 */
export function operationTimingPlugin(schema: Schema): void {
  const collection = String(schema.get('collection') ?? 'unknown');
  for (const operation of QUERY_OPERATIONS) {
    schema.pre(operation, { document: false, query: true }, function () {
      begin(this, this.model.db);
    });
    schema.post(operation, { document: false, query: true }, function () {
      end(this, this.model.db, collection, operation, false);
    });
    schema.post(operation, { document: false, query: true, errorHandler: true }, function (error: Error, _res: unknown, next: ErrorNext) {
      end(this, this.model.db, collection, operation, true);
      next(error);
    });
  }
  schema.pre('aggregate', function () {
    begin(this, this.model().db);
  });
  schema.post('aggregate', function () {
    end(this, this.model().db, collection, 'aggregate', false);
  });
  schema.post('aggregate', { errorHandler: true }, function (error: Error, _res: unknown, next: ErrorNext) {
    end(this, this.model().db, collection, 'aggregate', true);
    next(error);
  });
  schema.pre('save', function () {
    begin(this, modelOf(this)?.db);
  });
  schema.post('save', function () {
    end(this, modelOf(this)?.db, collection, 'save', false);
  });
  schema.post('save', { errorHandler: true }, function (error: Error, _doc: unknown, next: ErrorNext) {
    end(this, modelOf(this)?.db, collection, 'save', true);
    next(error);
  });
  // insertMany's middleware runs with the model as `this`, shared by concurrent calls: its
  // start times queue up per model instead (first in, first out).
  const inserts = new WeakMap<object, number[]>();
  schema.pre('insertMany', function (this: Model<unknown>) {
    if (!byConnection.get(this.db)?.timingOperations) return;
    const queue = inserts.get(this) ?? [];
    queue.push(performance.now());
    inserts.set(this, queue);
  });
  const endInsert = (model: Model<unknown>, failed: boolean) => {
    const at = inserts.get(model)?.shift();
    if (at === undefined) return;
    byConnection.get(model.db)?.operation({ collection, operation: 'insertMany', seconds: (performance.now() - at) / 1000, failed });
  };
  schema.post('insertMany', function (this: Model<unknown>) {
    endInsert(this, false);
  });
  schema.post('insertMany', { errorHandler: true }, function (this: Model<unknown>, error: Error, _docs: unknown, next: ErrorNext) {
    endInsert(this, true);
    next(error);
  });
}

/** The model class of a document (its constructor), whose `db` is the connection. */
function modelOf(doc: object): Model<unknown> | undefined {
  const model: unknown = doc.constructor;
  return typeof model === 'function' && 'db' in model ? (model as Model<unknown>) : undefined;
}
