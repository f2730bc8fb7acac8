import { Command, CommanderError } from 'commander';
import { toAppError } from '../data/platform/errors.js';

type Register = (program: Command) => void;

/**
 * The module that registers each top-level command, in the order `campus --help` lists them. A
 * command loads only its own module and what that imports: `campus keys issue` does not load the
 * authorization server, the spreadsheet reader or the GraphQL server, and starts in about half
 * the time of loading every command (the test suite starts hundreds of them). The program's own
 * help, or a name that is not here, loads them all. test/operations/cli-commands.unit.test.ts checks this
 * table against what the modules register.
 */
export const COMMAND_MODULES: Readonly<Record<string, () => Promise<Register>>> = {
  serve: async () => (await import('./commands/serve.js')).registerServe,
  db: async () => (await import('./commands/db.js')).registerDb,
  seed: async () => (await import('./commands/seed.js')).registerSeed,
  keys: async () => (await import('./commands/keys.js')).registerKeys,
  apps: async () => (await import('./commands/apps.js')).registerApps,
  // `campus clients`: the apps' name in OAuth's words (an alias of `campus apps`).
  clients: async () => (await import('./commands/apps.js')).registerApps,
  accounts: async () => (await import('./commands/accounts.js')).registerAccountCommands,
  neis: async () => (await import('./commands/neis.js')).registerNeisCommands,
  secrets: async () => (await import('./commands/secrets.js')).registerSecrets,
  backup: async () => (await import('./commands/backup.js')).registerBackup,
  restore: async () => (await import('./commands/backup.js')).registerBackup,
  migrate: async () => (await import('./commands/migrate.js')).registerMigrate,
  import: async () => (await import('./commands/import.js')).registerImport,
  export: async () => (await import('./commands/export.js')).registerExport,
  students: async () => (await import('./commands/students.js')).registerStudents,
  webhooks: async () => (await import('./commands/webhooks.js')).registerWebhooks,
  projects: async () => (await import('./commands/projects.js')).registerProjects,
  status: async () => (await import('./commands/status.js')).registerStatus,
};

/**
 * Builds the `campus` command tree for `argv` (exported for tests): the command it names, or
 * every command when it names none that is known.
 */
export async function buildProgram(argv: readonly string[] = []): Promise<Command> {
  const program = new Command('campus')
    .description('Campus Data Service: OAuth login, userinfo and the read-only school data API')
    .option('--verbose', 'also print the logs (JSON lines): the same as LOG_LEVEL=info')
    .showHelpAfterError()
    .exitOverride();
  // A command prints its answer; its logs only when asked (LOG_LEVEL, or --verbose before or after the command's name).
  program.hook('preAction', (_program, command) => {
    if (command.optsWithGlobals<{ verbose?: boolean }>().verbose) process.env['LOG_LEVEL'] ??= 'info';
  });
  // The only option before a command's name is --verbose, which takes no value.
  const named = argv.slice(2).find((arg) => !arg.startsWith('-'));
  const load = named !== undefined ? COMMAND_MODULES[named] : undefined;
  const registers = load ? [await load()] : await Promise.all(Object.values(COMMAND_MODULES).map((loadOne) => loadOne()));
  // A module that registers two top-level commands, or one under two names (apps and clients; backup and restore), is listed twice.
  for (const register of new Set(registers)) register(program);
  return program;
}

/** Entry point of bin/campus.js: the CLI rendering of errors (src/errors/index.ts). */
export async function main(argv: string[]): Promise<void> {
  try {
    await (await buildProgram(argv)).parseAsync(argv);
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
