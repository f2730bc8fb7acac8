import type { Command } from 'commander';
import { academicYearWindow, daysInclusive, isCalendarDate, todayIn } from '../../calendar.js';
import type { SyncReport } from '../../data/models/neis-state.model.js';
import { neisSyncFromConfig } from '../../neis/sync.js';
import { CliError, cliLogger, jsonCommand, progress } from '../runtime.js';

/** The longest window one `campus neis sync` takes (an academic year in a leap year). */
const MAX_WINDOW_DAYS = 366;

/**
 * The window of `campus neis sync` (pure): --from with --to, or the academic year of `today`
 * (1 March to the end of February).
 */
export function syncWindow(options: { from?: string | undefined; to?: string | undefined }, today: string): { from: string; to: string } {
  const { from, to } = options;
  if (from === undefined && to === undefined) return academicYearWindow(today);
  if (from === undefined || to === undefined)
    throw new CliError('--from and --to go together: give both (YYYY-MM-DD), or neither for the current academic year.');
  for (const [name, value] of [
    ['--from', from],
    ['--to', to],
  ] as const) {
    if (!isCalendarDate(value)) throw new CliError(`${name} must be a real date written YYYY-MM-DD (got '${value}').`);
  }
  if (from > to) throw new CliError(`--from (${from}) must not be after --to (${to}).`);
  if (daysInclusive(from, to) > MAX_WINDOW_DAYS)
    throw new CliError(`The window may span at most ${MAX_WINDOW_DAYS} days; sync a long period in parts.`);
  return { from, to };
}

/** `campus neis sync [--from YYYY-MM-DD --to YYYY-MM-DD] [--json]` */
export function registerNeisCommands(program: Command): void {
  const neis = program.command('neis').description('school meals, academic calendar and timetables from the NEIS Open API');
  jsonCommand(
    neis
      .command('sync')
      .description(
        'fetch meals, schedules and timetables from NEIS now and replace the window atomically ' +
          '(default window: the current academic year, 1 March to the end of February); progress goes to stderr',
      )
      .option('--from <date>', 'first date of the window, YYYY-MM-DD (with --to)')
      .option('--to <date>', 'last date of the window, YYYY-MM-DD (with --from)'),
    {
      json: 'the outcome',
      writes: true,
      run: async ({ config, db }, options: { from?: string; to?: string }) => {
        const window = syncWindow(options, todayIn(config.schoolTimeZone, new Date()));
        if (!config.neis.apiKey) progress('warning: NEIS_API_KEY is not set; NEIS answers requests without a key with sample rows only');
        progress(
          `syncing ${config.neis.officeCode}/${config.neis.schoolCode} for ${window.from}..${window.to} from ${config.neis.baseUrl}`,
        );
        const sync = neisSyncFromConfig(config, await db(), cliLogger(config));
        const result = await sync.run({ ...window, trigger: 'cli', onProgress: progress });
        if (result.outcome === 'busy') {
          throw new CliError(
            `Another NEIS sync is running (${result.owner ?? 'unknown'}, lease until ${result.until.toISOString()}); try again later.`,
          );
        }
        if (result.outcome !== 'ok') process.exitCode = 1;
        return result;
      },
      human: describeReport,
    },
  );
}

function describeReport(report: SyncReport): string {
  const lines = [`NEIS sync ${report.outcome} for ${report.from}..${report.to}.`];
  for (const [dataset, r] of Object.entries(report.datasets)) {
    lines.push(
      r.outcome === 'ok'
        ? `  ${dataset}: ${r.rows} records${r.skippedRows ? ` (${r.skippedRows} NEIS rows skipped, see the log)` : ''}`
        : `  ${dataset}: failed, previous data kept (${r.error ?? 'unknown error'})`,
    );
  }
  if (report.outcome !== 'ok' && report.error && Object.keys(report.datasets).length === 0) lines.push(`  ${report.error}`);
  return lines.join('\n');
}
