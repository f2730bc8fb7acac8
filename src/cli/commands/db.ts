import type { Command } from 'commander';
import { acquireEmbeddedDatabase } from '../../data/platform/embedded/index.js';
import { CliError, cliConfig, jsonOption, output, progress } from '../runtime.js';

export function registerDb(program: Command): void {
  // Not a jsonCommand: it is the database, and it stays running after its answer.
  jsonOption(
    program
      .command('db')
      .description(
        'start only the embedded database (FerretDB over SQLite in DATA_DIR, or over PostgreSQL with --postgres; mongod when on PATH) and print its MONGODB_URI',
      )
      .option('--postgres <url>', 'keep the data in this PostgreSQL database (postgres://...; the same as FERRETDB_POSTGRESQL_URL)'),
    '{"uri": ...}',
  ).action(async (options: { postgres?: string; json?: boolean }) => {
    const config = cliConfig(options.postgres === undefined ? {} : { FERRETDB_POSTGRESQL_URL: options.postgres });
    if (config.mongodbUri) throw new CliError('MONGODB_URI is set: `campus db` runs only the embedded database; unset it to use one.');
    const db = await acquireEmbeddedDatabase({
      dataDir: config.dataDir,
      preferredPort: config.embeddedDbPort,
      progress,
      postgresqlUrl: config.postgresqlUrl,
      sqliteSynchronous: config.sqliteSynchronous,
    });
    output(options.json, { uri: db.uri, engine: db.engine, dataDir: config.dataDir, alreadyRunning: !db.owned }, () =>
      [
        `${db.owned ? 'Embedded' : 'Already running embedded'} database (${db.engine}), data in ${config.postgresqlUrl ? 'PostgreSQL' : config.dataDir}.`,
        `MONGODB_URI=${db.uri}`,
        db.owned ? 'Press Ctrl-C to stop it.' : '',
      ].join('\n'),
    );
    if (!db.owned) return;
    const stopped = await Promise.race([
      new Promise<null>((done) => {
        process.once('SIGINT', () => done(null));
        process.once('SIGTERM', () => done(null));
      }),
      db.died,
    ]);
    if (stopped === null) {
      await db.stop();
      return;
    }
    // The database died under us (killed, crashed): say so and fail, so a supervisor restarts it.
    // The service answers 503 meanwhile and recovers once a database is back (docs/school-writes.md).
    const how = stopped.signal ? `was killed (${stopped.signal})` : `exited with code ${stopped.code}`;
    throw new CliError(
      `the embedded database (${db.engine}, pid ${stopped.pid}) ${how}; data requests fail until it runs again: start \`campus db\` again.`,
    );
  });
}
