import mongoose, { type Connection, type Model } from 'mongoose';
import { MongoClient } from 'mongodb';
import { studentModel } from './models/student.model.js';
import { clubModel } from './models/club.model.js';
import { projectModel } from './models/project.model.js';
import { apiKeyModel } from './models/api-key.model.js';
import { accessAuditModel } from './models/access-audit.model.js';
import { projectProposalModel } from './models/project-proposal.model.js';
import { auditBatchModel, auditEntryModel, schoolJobModel, schoolJournalModel, schoolUploadModel } from './models/audit.model.js';
import { apiKeyUsageModel } from './models/api-key-usage.model.js';
import { oauthModels } from './models/oauth.js';
import { mealModel } from './models/meal.model.js';
import { neisLeaseModel, neisStateModel } from './models/neis-state.model.js';
import { scheduleModel } from './models/schedule.model.js';
import { timetableModel } from './models/timetable.model.js';
import { updateRequestModel } from './models/update-request.model.js';
import { DataVersions } from './platform/versions.js';
import { budgetPlugin } from './platform/budget.js';
import { SchoolReadModel } from './school/read-model.js';
import { readSettled } from './school/engine.js';
import { DataTelemetry, operationTimingPlugin, reportOperations } from './platform/telemetry.js';
import type { BackendIndexer } from './platform/embedded/index.js';

/** The models of every domain, bound to one connection. */
export function createModels(connection: Connection) {
  return {
    students: studentModel(connection),
    clubs: clubModel(connection),
    projects: projectModel(connection),
    auditBatches: auditBatchModel(connection),
    auditEntries: auditEntryModel(connection),
    schoolUploads: schoolUploadModel(connection),
    schoolJournal: schoolJournalModel(connection),
    schoolJobs: schoolJobModel(connection),
    apiKeys: apiKeyModel(connection),
    accessAudit: accessAuditModel(connection),
    projectProposals: projectProposalModel(connection),
    apiKeyUsage: apiKeyUsageModel(connection),
    ...oauthModels(connection),
    meals: mealModel(connection),
    schedules: scheduleModel(connection),
    timetables: timetableModel(connection),
    neisState: neisStateModel(connection),
    neisLeases: neisLeaseModel(connection),
    updateRequests: updateRequestModel(connection),
  };
}

export type Models = ReturnType<typeof createModels>;

/** An open database: its models, the data version clock, and lifecycle. */
export interface Database {
  readonly connection: Connection;
  readonly client: MongoClient;
  readonly models: Models;
  readonly versions: DataVersions;
  /** The school (students, clubs, projects) in memory, per data version: the data API's reads. */
  readonly school: SchoolReadModel;
  /** Operation timings, NEIS sync outcomes and read-model loads, for whoever listens (metrics). */
  readonly telemetry: DataTelemetry;
  /** The database's name (the path of the connection string). */
  readonly name: string;
  /** Resolves when the server answers a ping; rejects (fast) when it does not. */
  ping(): Promise<void>;
  /**
   * Creates every collection and the indexes its filters and sorts need, and, on FerretDB, the
   * indexes its storage can use (idempotent).
   */
  ensureIndexes(): Promise<void>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Emit command events so tests can count queries. */
  monitorCommands?: boolean;
  serverSelectionTimeoutMS?: number;
  /**
   * Set for FerretDB only: the indexes its storage can use (src/data/platform/embedded/index.ts,
   * ferretDbIndexer), made by ensureIndexes in place of the schemas' non-unique indexes, which
   * serve no FerretDB query (see ensureIndexes). Unset on MongoDB, whose own indexes serve.
   */
  backendIndexes?: BackendIndexer | undefined;
}

/**
 * Connects once; after that the driver reconnects by itself, so a later outage yields errors
 * (503) and recovery without a restart. Commands fail fast while disconnected (no buffering).
 */
export async function openDatabase(uri: string, options: ConnectOptions = {}): Promise<Database> {
  const client = new MongoClient(uri, {
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 2000,
    connectTimeoutMS: 2000,
    monitorCommands: options.monitorCommands ?? false,
    ignoreUndefined: true,
  });
  await client.connect();
  const connection = mongoose.createConnection().setClient(client);
  // Written into `config` directly: `connection.set` keeps keys that `config` does not hold yet
  // in `options`, where model compilation never looks, so every open created each collection
  // and built every index in the background. Indexes are built in one place, ensureIndexes
  // (run by the first migration and at start-up); collections come with them or the first write.
  // bufferCommands: commands fail fast while disconnected instead of queueing (no hung requests).
  Object.assign(connection.config as Record<string, unknown>, { bufferCommands: false, autoIndex: false, autoCreate: false });
  // Reads made on behalf of a data request obey its budget (time left, operation count, slots).
  connection.plugin(budgetPlugin);
  // Every operation through a model is timed for the metrics (when someone listens).
  connection.plugin(operationTimingPlugin);
  const telemetry = new DataTelemetry();
  reportOperations(connection, telemetry);
  const models = createModels(connection);
  const versions = new DataVersions(connection.collection('meta'));
  // The read model never loads a half-written batch (readSettled needs the database it belongs to).
  const settled = <T>(read: () => Promise<T>): Promise<T> => readSettled(db, read);
  const school = new SchoolReadModel({ models, versions, telemetry, settled });

  const db: Database = {
    connection,
    client,
    models,
    versions,
    school,
    telemetry,
    name: client.db().databaseName,
    async ping() {
      await client.db().command({ ping: 1 });
    },
    async ensureIndexes() {
      // Every collection exists first, even one no index names: FerretDB's storage indexes are
      // made on the tables that exist (an existing collection is left as it is).
      for (const model of Object.values(connection.models)) {
        await model.createCollection();
        if (options.backendIndexes) await keepUniqueIndexes(model);
        else await model.createIndexes();
      }
      await options.backendIndexes?.(client.db().databaseName);
    },
    async close() {
      await connection.close();
      await client.close();
    },
  };
  return db;
}

/**
 * On FerretDB, a collection keeps only its unique indexes (they enforce rules: one account per
 * email) beside `_id`. FerretDB 1.24 pushes no sort down to its storage and no filter but `_id`
 * (over SQLite) or `field @> value` (over PostgreSQL, which its btree indexes cannot serve), so
 * the schemas' other indexes, made for MongoDB, served no query there while every write kept them
 * up to date (docs/benchmarks.md, "The embedded database's indexes").
 * The indexes FerretDB can use come from the launcher (tools/ferretdb/indexes.go); indexes made
 * by earlier code are dropped.
 */
async function keepUniqueIndexes(model: Model<unknown>): Promise<void> {
  const keep = new Set(['_id_']);
  for (const [fields, indexOptions] of model.schema.indexes()) {
    if (indexOptions.unique) keep.add(await model.collection.createIndex(fields as Record<string, 1 | -1>, { unique: true }));
  }
  for (const index of await model.collection.indexes()) {
    if (index.name && !keep.has(index.name)) await model.collection.dropIndex(index.name);
  }
}
