import { ConfigError, loadConfig, type Config } from '../config/index.js';
import { createLogger, type Logger } from '../logger.js';
import { openDatabaseRuntime, type DatabaseRuntime } from '../main.js';

/** A command's failure meant for the person at the terminal (no stack trace). */
export class CliError extends Error {
  override name = 'CliError';
}

/** Loads the configuration once; an invalid environment ends the command with every problem. */
export function cliConfig(): Config {
  try {
    return loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message);
    throw err;
  }
}

/** Logs for commands go to stderr, so stdout holds only the command's answer. */
export function cliLogger(config: Config): Logger {
  return createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, process.stderr as never);
}

/** Runs `fn` with an open database (MONGODB_URI, or the embedded one, reused when running). */
export async function withDatabase<T>(config: Config, fn: (runtime: DatabaseRuntime) => Promise<T>): Promise<T> {
  const runtime = await openDatabaseRuntime(config, (line) => process.stderr.write(`${line}\n`));
  try {
    return await fn(runtime);
  } finally {
    await runtime.close();
  }
}

/** Prints a command's result: JSON with --json, else the human-readable lines. */
export function output(json: boolean | undefined, data: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`);
}
