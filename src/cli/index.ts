import { Command, CommanderError } from 'commander';
import { ApiKeyCommandError } from '../data/api-keys.js';
import { EmbeddedDatabaseError } from '../data/embedded/index.js';
import { registerDb } from './commands/db.js';
import { registerKeys } from './commands/keys.js';
import { registerNeisCommands } from './commands/neis.js';
import { registerOAuthCommands } from './commands/oauth.js';
import { registerSeed } from './commands/seed.js';
import { registerServe } from './commands/serve.js';
import { DatabaseUnavailableError } from '../main.js';
import { OAuthKeyError } from '../oauth/keys.js';
import { CliError } from './runtime.js';

/** Builds the `campus` command tree (exported for tests). */
export function buildProgram(): Command {
  const program = new Command('campus')
    .description('Campus Data Service: OAuth login, userinfo and the read-only school data API')
    .showHelpAfterError()
    .exitOverride();
  registerServe(program);
  registerDb(program);
  registerSeed(program);
  registerKeys(program);
  registerOAuthCommands(program);
  registerNeisCommands(program);
  return program;
}

/** Entry point of bin/campus.js: expected failures print one line and exit 1. */
export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    const expected = err instanceof CliError ||
      err instanceof ApiKeyCommandError ||
      err instanceof EmbeddedDatabaseError ||
      err instanceof DatabaseUnavailableError ||
      err instanceof OAuthKeyError;
    process.stderr.write(`campus: ${expected ? (err as Error).message : (err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  }
}

// Allow `node --import tsx src/cli/index.ts ...` (tests) as well as bin/campus.js.
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  await main(process.argv);
}
