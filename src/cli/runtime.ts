import { loadConfig, type Config } from '../config/index.js';
import { createLogger, type Logger } from '../logger.js';
import { openDatabaseRuntime, type DatabaseRuntime } from '../data/runtime.js';
import { migrate } from '../data/migrations.js';
import { BadRequestError } from '../errors/index.js';

/** A command's failure meant for the person at the terminal (no stack trace). */
export class CliError extends BadRequestError {}

/** Loads the configuration once; an invalid environment ends the command with every problem. */
export function cliConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({ ...process.env, ...overrides });
}

/**
 * The level a command logs at: only when asked, with LOG_LEVEL or `--verbose` (LOG_LEVEL=info,
 * src/cli/index.ts); `campus serve` in production logs at info unless LOG_LEVEL says otherwise.
 */
export function logLevelOf(config: Config, command: 'serve' | 'other' = 'other'): NonNullable<Config['logLevel']> {
  return config.logLevel ?? (command === 'serve' && config.isProduction ? 'info' : 'silent');
}

/** Logs for commands go to stderr, so stdout holds only the command's answer. */
export function cliLogger(config: Config): Logger {
  return createLogger(logLevelOf(config), process.stderr as never);
}

export interface WithDatabaseOptions {
  /**
   * Bring the schema to this code's version first (under the lock `campus serve` takes too), as
   * every command that writes must: it writes in the shape this code knows, and never into a
   * database newer than the code (that refuses with one line). Reading commands leave it be.
   */
  readonly migrate?: boolean;
}

/** The options of a command that writes. */
export const WRITES: WithDatabaseOptions = { migrate: true };

/** Runs `fn` with an open database (MONGODB_URI, or the embedded one, reused when running). */
export async function withDatabase<T>(
  config: Config,
  fn: (runtime: DatabaseRuntime) => Promise<T>,
  options: WithDatabaseOptions = {},
): Promise<T> {
  const runtime = await openDatabaseRuntime(config, progress);
  try {
    if (options.migrate) await migrate(runtime.db, { progress });
    return await fn(runtime);
  } finally {
    await runtime.close();
  }
}

/** Progress of long work goes to stderr, so stdout holds only the command's answer. */
export function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Prints a command's result: JSON with --json, else the human-readable lines. */
export function output(json: boolean | undefined, data: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`);
}
