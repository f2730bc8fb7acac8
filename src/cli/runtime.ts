import type { Command } from 'commander';
import { loadConfig, type Config } from '../config/index.js';
import { createLogger, type Logger } from '../logger.js';
import type { Database } from '../data/database.js';
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

/** Progress of long work goes to stderr, so stdout holds only the command's answer. */
export function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Prints a command's result: JSON with --json, else the human-readable lines. */
export function output(json: boolean | undefined, data: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`);
}

/** Gives a command `--json`, with what it prints as JSON (e.g. 'the keys'). */
export function jsonOption(command: Command, prints: string): Command {
  return command.option('--json', `print ${prints} as JSON`);
}

/** What a command's work receives. */
export interface CommandContext {
  readonly config: Config;
  /**
   * The database, opened at the first call (so a refused argument starts no database), migrated
   * first when the command writes, and closed when the command ends.
   */
  db(): Promise<Database>;
}

/** A command's work: what it does, what it prints, and what it needs. */
export interface CommandWork<O, A extends unknown[], R> {
  /** What `--json` prints (e.g. 'the keys'). */
  readonly json: string;
  /** Whether the command writes, so its database is migrated first; it may depend on the options. */
  readonly writes?: boolean | ((options: O) => boolean);
  /** The work, with the options and the arguments (in the order the command declares them). */
  run(ctx: CommandContext, options: O, args: A): Promise<R>;
  /** The answer for people (without `--json`). */
  human(result: R, options: O): string;
  /** The answer with `--json`, when it is not the result itself. */
  data?(result: R, options: O): unknown;
}

/**
 * Declares a `campus` command's work, the one way: `--json`, the configuration, the database,
 * and the answer on stdout (JSON with `--json`, else `human`'s lines).
 */
export function jsonCommand<O extends object, A extends unknown[], R>(command: Command, work: CommandWork<O, A, R>): Command {
  return jsonOption(command, work.json).action(async (...received: unknown[]) => {
    const self = received[received.length - 1] as Command;
    // With the parent's options too: `campus accounts sessions end x --json` gives --json to `sessions`.
    const options = self.optsWithGlobals<O & { json?: boolean }>();
    const config = cliConfig();
    const writes = typeof work.writes === 'function' ? work.writes(options) : (work.writes ?? false);
    let opening: Promise<DatabaseRuntime> | undefined;
    const ctx: CommandContext = { config, db: async () => (await (opening ??= openDatabase(config, writes))).db };
    try {
      const result = await work.run(ctx, options, self.processedArgs as A);
      output(options.json, work.data ? work.data(result, options) : result, () => work.human(result, options));
    } finally {
      await (await opening?.catch(() => undefined))?.close();
    }
  });
}

/**
 * Opens MONGODB_URI, or the embedded database (reused when running). A command that writes first
 * brings the schema to this code's version (under the lock `campus serve` takes too): it writes in
 * the shape this code knows, and never into a database newer than the code (that refuses with one
 * line). Reading commands leave it be.
 */
async function openDatabase(config: Config, writes: boolean): Promise<DatabaseRuntime> {
  const runtime = await openDatabaseRuntime(config, progress);
  try {
    if (writes) await migrate(runtime.db, { progress });
    return runtime;
  } catch (err) {
    await runtime.close();
    throw err;
  }
}
