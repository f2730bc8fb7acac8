import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, type Database, type ConnectOptions } from '../../src/data/database.js';
import { acquireEmbeddedDatabase, freePort, type EmbeddedDatabase } from '../../src/data/platform/embedded/index.js';

let embedded: EmbeddedDatabase | undefined;
let baseUri: string | undefined;

/**
 * Where the suite's embedded database keeps its data. The process that starts it names it in the
 * environment, so that mocha's `--parallel` workers (started after it, with its environment)
 * reach the same server (see joinTestDatabase).
 */
const DATA_DIR_VARIABLE = 'CAMPUS_TEST_DATA_DIR';

function suiteDataDir(): string {
  const dataDir = process.env[DATA_DIR_VARIABLE];
  if (!dataDir) throw new Error('the test database is not started (test/helpers/hooks.ts)');
  return dataDir;
}

/**
 * Starts the suite's database: MONGODB_URI when set, else a fresh embedded FerretDB, over
 * PostgreSQL when TEST_POSTGRES_URL names a database for it (.ci/run's second pass), else over SQLite.
 */
export async function startTestDatabase(): Promise<void> {
  if (!process.env['MONGODB_URI']) {
    const dataDir = join('.data', `test-${process.pid}`);
    rmSync(dataDir, { recursive: true, force: true });
    process.env[DATA_DIR_VARIABLE] = dataDir;
  }
  await joinTestDatabase();
}

/**
 * Reaches the suite's database. The embedded database of a data directory is started by the
 * first process that asks (startTestDatabase's), and found running and reused by the others
 * (mocha's `--parallel` workers: acquireEmbeddedDatabase), which leave stopping it to the first.
 */
export async function joinTestDatabase(): Promise<void> {
  if (baseUri) return;
  const given = process.env['MONGODB_URI'];
  if (given) {
    baseUri = given;
    return;
  }
  embedded = await acquireEmbeddedDatabase({
    dataDir: suiteDataDir(),
    preferredPort: await freePort(),
    progress: (line) => process.stderr.write(`${line}\n`),
    postgresqlUrl: process.env['TEST_POSTGRES_URL'],
  });
  baseUri = embedded.uri;
}

export async function stopTestDatabase(): Promise<void> {
  await embedded?.stop();
  if (embedded?.owned) rmSync(suiteDataDir(), { recursive: true, force: true });
  embedded = undefined;
  baseUri = undefined;
}

/** A connection string to a database of its own (a test file's), on the suite's server. */
export function testDatabaseUri(name: string): string {
  if (!baseUri) throw new Error('the test database is not started (test/helpers/hooks.ts)');
  const url = new URL(baseUri);
  url.pathname = `/t_${name.replace(/[^a-z0-9]/gi, '_').slice(0, 30)}_${randomBytes(3).toString('hex')}`;
  return url.toString();
}

/** The SQLite file in which the suite's embedded FerretDB over SQLite keeps a database (tests that read its schema). */
export function testSqliteFile(databaseName: string): string {
  if (embedded?.engine !== 'ferretdb') throw new Error('the suite does not run on the embedded FerretDB over SQLite');
  return join(suiteDataDir(), 'ferretdb', `${databaseName}.sqlite`);
}

/** What the suite runs on: the embedded FerretDB (over SQLite or PostgreSQL), or the server at MONGODB_URI. */
export function testDatabaseEngine(): EmbeddedDatabase['engine'] | 'MONGODB_URI' {
  return embedded?.engine ?? 'MONGODB_URI';
}

/** A database of a test's own (createTestDatabase): its connection string, and how to drop it. */
export type TestDatabase = Database & { readonly uri: string; drop(): Promise<void> };

/** Opens an empty database of its own, indexed as `campus serve` indexes it; `drop()` removes it. */
export async function createTestDatabase(name: string, options: ConnectOptions = {}): Promise<TestDatabase> {
  const uri = testDatabaseUri(name);
  const db = await openDatabase(uri, { backendIndexes: embedded?.indexer, ...options });
  await db.ensureIndexes();
  return Object.assign(db, {
    /** Its connection string, for the `campus` processes a test starts on it. */
    uri,
    async drop() {
      await db.connection.dropDatabase().catch(() => {});
      await db.close();
    },
  });
}
