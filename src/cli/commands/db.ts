import type { Command } from 'commander';
import { acquireEmbeddedDatabase } from '../../data/embedded/index.js';
import { CliError, cliConfig, output } from '../runtime.js';

export function registerDb(program: Command): void {
  program
    .command('db')
    .description(
      'start only the embedded database (FerretDB over SQLite in DATA_DIR, or over PostgreSQL with --postgres; mongod when on PATH) and print its MONGODB_URI',
    )
    .option('--postgres <url>', 'keep the data in this PostgreSQL database (postgres://...; the same as FERRETDB_POSTGRESQL_URL)')
    .option('--json', 'print {"uri": ...} as JSON')
    .action(async (options: { postgres?: string; json?: boolean }) => {
      const config = cliConfig(options.postgres === undefined ? {} : { FERRETDB_POSTGRESQL_URL: options.postgres });
      if (config.mongodbUri) throw new CliError('MONGODB_URI is set: `campus db` runs only the embedded database; unset it to use one.');
      const db = await acquireEmbeddedDatabase({
        dataDir: config.dataDir,
        preferredPort: config.embeddedDbPort,
        progress: (line) => process.stderr.write(`${line}\n`),
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
      await new Promise<void>((done) => {
        process.once('SIGINT', done);
        process.once('SIGTERM', done);
      });
      await db.stop();
    });
}
