import type { Command } from 'commander';
import { acquireEmbeddedDatabase } from '../../data/embedded/index.js';
import { CliError, cliConfig, output } from '../runtime.js';

export function registerDb(program: Command): void {
  program
    .command('db')
    .description('start only the embedded database (FerretDB, or mongod when on PATH) and print its MONGODB_URI')
    .option('--json', 'print {"uri": ...} as JSON')
    .action(async (options: { json?: boolean }) => {
      const config = cliConfig();
      if (config.mongodbUri) throw new CliError('MONGODB_URI is set: `campus db` runs only the embedded database; unset it to use one.');
      const db = await acquireEmbeddedDatabase({
        dataDir: config.dataDir,
        preferredPort: config.embeddedDbPort,
        progress: (line) => process.stderr.write(`${line}\n`),
      });
      output(options.json, { uri: db.uri, engine: db.engine, dataDir: config.dataDir, alreadyRunning: !db.owned }, () =>
        [
          `${db.owned ? 'Embedded' : 'Already running embedded'} database (${db.engine}), data in ${config.dataDir}.`,
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
