import mongoose, { type Connection } from 'mongoose';
import { MongoClient } from 'mongodb';
import { studentModel } from './models/student.model.js';
import { clubModel } from './models/club.model.js';
import { projectModel } from './models/project.model.js';
import { apiKeyModel } from './models/api-key.model.js';
import { oauthModels } from './models/oauth.js';
import { mealModel } from './models/meal.model.js';
import { neisLeaseModel, neisStateModel } from './models/neis-state.model.js';
import { scheduleModel } from './models/schedule.model.js';
import { timetableModel } from './models/timetable.model.js';
import { DataVersions } from './versions.js';

/** The models of every domain, bound to one connection. */
export function createModels(connection: Connection) {
  return {
    students: studentModel(connection),
    clubs: clubModel(connection),
    projects: projectModel(connection),
    apiKeys: apiKeyModel(connection),
    ...oauthModels(connection),
    meals: mealModel(connection),
    schedules: scheduleModel(connection),
    timetables: timetableModel(connection),
    neisState: neisStateModel(connection),
    neisLeases: neisLeaseModel(connection),
  };
}

export type Models = ReturnType<typeof createModels>;

/** An open database: its models, the data version clock, and lifecycle. */
export interface Database {
  readonly connection: Connection;
  readonly client: MongoClient;
  readonly models: Models;
  readonly versions: DataVersions;
  /** Resolves when the server answers a ping; rejects (fast) when it does not. */
  ping(): Promise<void>;
  /** Creates the indexes the filters and sorts need (idempotent). */
  ensureIndexes(): Promise<void>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Emit command events so tests can count queries. */
  monitorCommands?: boolean;
  serverSelectionTimeoutMS?: number;
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
  // Commands fail fast while disconnected instead of queueing (no hung requests).
  const connection = mongoose.createConnection().setClient(client);
  connection.set('bufferCommands', false);
  connection.set('autoIndex', false);
  connection.set('autoCreate', false);
  const models = createModels(connection);
  const versions = new DataVersions(connection.collection('meta'));

  return {
    connection,
    client,
    models,
    versions,
    async ping() {
      await client.db().command({ ping: 1 });
    },
    async ensureIndexes() {
      for (const model of Object.values(connection.models)) await model.createIndexes();
    },
    async close() {
      await connection.close();
      await client.close();
    },
  };
}
