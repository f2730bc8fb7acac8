import type { Config } from '../config/index.js';
import { ServiceUnavailableError } from '../errors/index.js';
import { openDatabase, type Database } from './database.js';
import { acquireEmbeddedDatabase, ferretDbIndexer, type BackendIndexer, type EmbeddedDatabase } from './platform/embedded/index.js';

// Apart from src/main.ts (which builds the whole app) so that a command like `campus keys list`
// opens the database without loading Koa, GraphQL and oidc-provider (src/cli/runtime.ts).

/** The database a process uses: MONGODB_URI, or the embedded one of DATA_DIR. */
export interface DatabaseRuntime {
  readonly db: Database;
  readonly uri: string;
  readonly embedded: EmbeddedDatabase | undefined;
  close(): Promise<void>;
}

/** Opens MONGODB_URI, or starts (or reuses) the embedded database when it is unset. */
export async function openDatabaseRuntime(
  config: Config,
  progress: (line: string) => void,
  options: { waitForDatabase?: boolean } = {},
): Promise<DatabaseRuntime> {
  const embedded = config.mongodbUri
    ? undefined
    : await acquireEmbeddedDatabase({
        dataDir: config.dataDir,
        preferredPort: config.embeddedDbPort,
        progress,
        postgresqlUrl: config.postgresqlUrl,
        sqliteSynchronous: config.sqliteSynchronous,
      });
  const uri = config.mongodbUri ?? embedded?.uri ?? '';
  let db: Database;
  try {
    db = await connectWithRetry(uri, progress, options.waitForDatabase ?? false, backendIndexer(config, embedded, progress));
  } catch (err) {
    await embedded?.stop();
    throw err;
  }
  return {
    db,
    uri,
    embedded,
    close: async () => {
      await db.close();
      await embedded?.stop();
    },
  };
}

/**
 * Who makes FerretDB's storage indexes: the embedded one's launcher, or, for a FerretDB of one's
 * own at MONGODB_URI, the launcher pointed at the PostgreSQL database named by
 * FERRETDB_POSTGRESQL_URL beside it (docs/operations.md, "3. Database and Redis").
 */
function backendIndexer(
  config: Config,
  embedded: EmbeddedDatabase | undefined,
  progress: (line: string) => void,
): BackendIndexer | undefined {
  if (embedded) return embedded.indexer;
  return config.postgresqlUrl ? ferretDbIndexer({ postgresqlUrl: config.postgresqlUrl }, progress) : undefined;
}

/** A server waits for its database (logging each try); a one-shot command fails at once. */
async function connectWithRetry(
  uri: string,
  progress: (line: string) => void,
  wait: boolean,
  backendIndexes: BackendIndexer | undefined,
): Promise<Database> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await openDatabase(uri, { backendIndexes });
    } catch (err) {
      if (!wait) throw new ServiceUnavailableError(`Cannot reach the database at ${redactUri(uri)}: ${(err as Error).message}`, err);
      progress(`database unreachable (attempt ${attempt}); retrying in 2s`);
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

/** Drops credentials from a connection string before it is shown or logged. */
function redactUri(uri: string): string {
  return uri.replace(/\/\/[^@/]*@/, '//[redacted]@');
}
