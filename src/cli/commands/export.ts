import { writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type { Command } from 'commander';
import { exportSchoolData } from '../../data/school/export.js';
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
      const file = await withDatabase(config, ({ db }) =>
        exportSchoolData(db, entity, extension === '.csv' ? 'csv' : 'xlsx', {
          includeGraduates: options.includeGraduates ?? false,
          timeZone: config.schoolTimeZone,
          now: new Date(),
        }),
      );
      await writeFile(options.out, file.content);
      output(
        options.json,
        { file: options.out, kind, rows: file.rows, bytes: file.content.length },
        () => `Wrote ${file.rows} ${kind} to ${options.out}.`,
      );
    });
}
