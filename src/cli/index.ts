import { Command, CommanderError } from 'commander';
import { toAppError } from '../data/errors.js';
import { registerBackup } from './commands/backup.js';
import { registerDb } from './commands/db.js';
import { registerExport } from './commands/export.js';
import { registerImport } from './commands/import.js';
import { registerKeys } from './commands/keys.js';
import { registerMigrate } from './commands/migrate.js';
import { registerNeisCommands } from './commands/neis.js';
import { registerOAuthCommands } from './commands/oauth.js';
import { registerSecrets } from './commands/secrets.js';
import { registerProjects } from './commands/projects.js';
import { registerSeed } from './commands/seed.js';
import { registerServe } from './commands/serve.js';
import { registerStudents } from './commands/students.js';
import { registerWebhooks } from './commands/webhooks.js';

/** Builds the `campus` command tree (exported for tests). */
export function buildProgram(): Command {
  const program = new Command('campus')
    .description('Campus Data Service: OAuth login, userinfo and the read-only school data API')
    .option('--verbose', 'also print the logs (JSON lines): the same as LOG_LEVEL=info')
    .showHelpAfterError()
    .exitOverride();
  // A command prints its answer; its logs only when asked (LOG_LEVEL, or --verbose before or after the command's name).
  program.hook('preAction', (_program, command) => {
    if (command.optsWithGlobals<{ verbose?: boolean }>().verbose) process.env['LOG_LEVEL'] ??= 'info';
  });
  registerServe(program);
  registerDb(program);
  registerSeed(program);
  registerKeys(program);
  registerOAuthCommands(program);
  registerNeisCommands(program);
  registerSecrets(program);
  registerBackup(program);
  registerMigrate(program);
  registerImport(program);
  registerExport(program);
  registerStudents(program);
  registerWebhooks(program);
  registerProjects(program);
  return program;
}

/** Entry point of bin/campus.js: the CLI rendering of errors (src/errors/index.ts). */
export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    process.stderr.write(`campus: ${cliLine(err)}\n`);
    process.exitCode = 1;
  }
}

/** A user-facing failure is one line; anything else is a defect, shown with its stack. */
export function cliLine(err: unknown): string {
  const error = toAppError(err);
  if (error.userFacing) return error.message;
  const cause = error.cause instanceof Error ? error.cause : error;
  return cause.stack ?? String(cause);
}

// Allow `node --import tsx src/cli/index.ts ...` (tests) as well as bin/campus.js.
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  await main(process.argv);
}
