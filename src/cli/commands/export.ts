import { writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type { Command } from 'commander';
import { exportSchoolData } from '../../data/school/export.js';
import { AccessAudit, CLI_ACTOR } from '../../data/accounts/access-log.js';
import { CliError, cliConfig, output, withDatabase } from '../runtime.js';
import { entityArgument } from './import.js';

/**
 * `campus export <students|clubs|projects> --out <file.xlsx|file.csv> [--include-graduates]`:
 * the file `campus import` reads back unchanged (the format follows the extension).
 */
export function registerExport(program: Command): void {
  program
    .command('export <kind>')
    .description('export students, clubs or projects as .xlsx or .csv, in the format `campus import` reads back unchanged')
    .requiredOption('--out <file>', 'where to write; .xlsx or .csv (the format follows the extension)')
    .option('--include-graduates', 'students: also graduated and withdrawn students')
    .option('--json', 'print the result as JSON')
    .action(async (kind: string, options: { out: string; includeGraduates?: boolean; json?: boolean }) => {
      const entity = entityArgument(kind);
      const extension = extname(options.out).toLowerCase();
      if (extension !== '.xlsx' && extension !== '.csv') throw new CliError(`--out must end in .xlsx or .csv (got '${options.out}').`);
      const config = cliConfig();
      const format = extension === '.csv' ? 'csv' : 'xlsx';
      const file = await withDatabase(config, async ({ db }) => {
        const made = await exportSchoolData(db, entity, format, {
          includeGraduates: options.includeGraduates ?? false,
          timeZone: config.schoolTimeZone,
          now: new Date(),
        });
        // An export of personal data is in the access log: who, what, with which filter (docs/decisions.md, "The access log").
        await new AccessAudit(db).record(CLI_ACTOR, {
          action: 'DATA_EXPORTED',
          target: { kind: 'DATA', id: entity, label: options.out },
          detail: { entity, format, includeGraduates: options.includeGraduates ?? false, rows: made.rows },
        });
        return made;
      });
      await writeFile(options.out, file.content);
      output(
        options.json,
        { file: options.out, kind, rows: file.rows, bytes: file.content.length },
        () => `Wrote ${file.rows} ${kind} to ${options.out}.`,
      );
    });
}
