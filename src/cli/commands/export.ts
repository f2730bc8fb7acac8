import { writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type { Command } from 'commander';
import { exportSchoolData } from '../../data/school/export.js';
import { AccessAudit, CLI_ACTOR } from '../../data/accounts/access-log.js';
import { CliError, jsonCommand } from '../runtime.js';
import { entityArgument } from './import.js';

/**
 * `campus export <students|clubs|projects> --out <file.xlsx|file.csv> [--include-graduates]`:
 * the file `campus import` reads back unchanged (the format follows the extension).
 */
export function registerExport(program: Command): void {
  jsonCommand(
    program
      .command('export <kind>')
      .description('export students, clubs or projects as .xlsx or .csv, in the format `campus import` reads back unchanged')
      .requiredOption('--out <file>', 'where to write; .xlsx or .csv (the format follows the extension)')
      .option('--include-graduates', 'students: also graduated and withdrawn students'),
    {
      json: 'the result',
      run: async ({ config, db }, options: { out: string; includeGraduates?: boolean }, [kind]: [string]) => {
        const entity = entityArgument(kind);
        const extension = extname(options.out).toLowerCase();
        if (extension !== '.xlsx' && extension !== '.csv') throw new CliError(`--out must end in .xlsx or .csv (got '${options.out}').`);
        const format = extension === '.csv' ? 'csv' : 'xlsx';
        const includeGraduates = options.includeGraduates ?? false;
        const database = await db();
        const file = await exportSchoolData(database, entity, format, {
          includeGraduates,
          timeZone: config.schoolTimeZone,
          now: new Date(),
        });
        // An export of personal data is in the access log: who, what, with which filter (docs/decisions.md, "The access log").
        await new AccessAudit(database).record(CLI_ACTOR, {
          action: 'DATA_EXPORTED',
          target: { kind: 'DATA', id: entity, label: options.out },
          detail: { entity, format, includeGraduates, rows: file.rows },
        });
        await writeFile(options.out, file.content);
        return { file: options.out, kind, rows: file.rows, bytes: file.content.length };
      },
      human: (result) => `Wrote ${result.rows} ${result.kind} to ${result.file}.`,
    },
  );
}
