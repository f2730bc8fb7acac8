import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { issueMessage } from '../../data/school/messages.js';
import { applyImport, previewImport } from '../../data/school/import.js';
import { FILE_LIMITS, formatBytes } from '../../data/school/spreadsheet.js';
import { warmSpreadsheetReader } from '../../data/school/spreadsheet-thread.js';
import { CLI_ACTOR, type PreviewResult, type SchoolEntity } from '../../data/school/types.js';
import { CliError, jsonCommand } from '../runtime.js';

/** The kinds the import and export commands take, as typed on the command line. */
export const ENTITY_ARGUMENTS: Readonly<Record<string, SchoolEntity>> = { students: 'STUDENT', clubs: 'CLUB', projects: 'PROJECT' };

/** The kind named on the command line (students, clubs or projects). */
export function entityArgument(value: string): SchoolEntity {
  const entity = ENTITY_ARGUMENTS[value];
  if (!entity) throw new CliError(`The kind must be one of ${Object.keys(ENTITY_ARGUMENTS).join(', ')} (got '${value}').`);
  return entity;
}

/**
 * `campus import <students|clubs|projects> <file> [--apply] [--remove-missing] [--json]`: the same
 * dry run and all-or-nothing application as the admin console (src/data/school/import.ts), with
 * the audit log's actor "CLI". Exits 1 when the file or any row is refused.
 */
export function registerImport(program: Command): void {
  jsonCommand(
    program
      .command('import <kind> <file>')
      .description(
        'import students, clubs or projects from an .xlsx or .csv file (at most 5 MB and 20,000 rows; checked by content). ' +
          'Without --apply it only previews: per row and cell what is wrong and what would change. ' +
          'With --apply it writes everything or nothing. Exits 1 when a row is refused.',
      )
      .option('--apply', 'write the changes (all or nothing) instead of only previewing them')
      .option('--remove-missing', 'also remove the records the file does not list (students: enrolled ones only)'),
    {
      json: 'the preview (or the result)',
      writes: (options: ImportOptions) => options.apply ?? false,
      run: async ({ config, db }, options: ImportOptions, [kind, file]: [string, string]) => {
        const entity = entityArgument(kind);
        const bytes = await readSpreadsheetFile(file);
        // The file is read in a worker thread (src/data/school/spreadsheet-thread.ts): it starts while the database connects.
        warmSpreadsheetReader();
        const common = { removeMissing: options.removeMissing ?? false, timeZone: config.schoolTimeZone, now: new Date() };
        const result = options.apply
          ? await applyImport(await db(), CLI_ACTOR, entity, basename(file), bytes, {
              ...common,
              onProgress: progressLine(options.json ?? false),
            })
          : await previewImport(await db(), entity, basename(file), bytes, common);
        if (result.issues.length > 0) process.exitCode = 1;
        return result;
      },
      human: (result, options) => describePreview(result, options.apply ?? false),
      data: withMessages,
    },
  );
}

interface ImportOptions {
  apply?: boolean;
  removeMissing?: boolean;
  json?: boolean;
}

/**
 * The apply's progress on stderr (stdout keeps the answer): a line per written part of the batch,
 * e.g. "applying: 500 of 1,000 records written", or JSON lines with --json.
 */
function progressLine(json: boolean): (written: number, total: number) => void {
  return (written, total) =>
    process.stderr.write(
      json
        ? `${JSON.stringify({ progress: { written, total } })}\n`
        : `applying: ${written.toLocaleString('en')} of ${total.toLocaleString('en')} records written\n`,
    );
}

/** Reads a file, refusing one over the size limit before reading it. */
async function readSpreadsheetFile(file: string): Promise<Buffer> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch {
    throw new CliError(`Cannot read ${file}: no such file.`);
  }
  if (size > FILE_LIMITS.maxBytes)
    throw new CliError(`${file}: the file is too large: ${formatBytes(size)} (at most ${formatBytes(FILE_LIMITS.maxBytes)}).`);
  return readFile(file);
}

/** The preview for --json: every issue with its message in both languages. */
function withMessages(result: PreviewResult) {
  return {
    ...result,
    issues: result.issues.map((i) => ({ ...i, message: issueMessage(i, 'en', i.column), messageKo: issueMessage(i, 'ko', i.column) })),
  };
}

/** The human-readable report: counts, every issue with where it is, and the changes. */
export function describePreview(result: PreviewResult, applying: boolean): string {
  const c = result.counts;
  const lines = [
    `${result.fileName}: ${result.rows} ${result.rows === 1 ? 'row' : 'rows'}; ${c.created} to create, ${c.updated} to update, ${c.unchanged} unchanged, ${c.removed} to remove, ${c.refused} refused.`,
  ];
  for (const issue of result.issues) {
    const where = [
      issue.sheet ? `sheet ${issue.sheet}` : null,
      issue.row !== null ? `row ${issue.row}` : null,
      issue.column ? `column ${issue.column}` : null,
    ]
      .filter(Boolean)
      .join(', ');
    const value = issue.value !== null ? ` ('${issue.value}')` : '';
    lines.push(`  ${where || 'file'}${value}: ${issueMessage(issue, 'en', issue.column)}`);
  }
  for (const change of result.changes.filter((ch) => ch.operation !== 'UNCHANGED').slice(0, 200)) {
    const where = change.row !== null ? `row ${change.row}` : 'also';
    const fields = change.fields.map((f) => `${f.field}: ${show(f.before)} -> ${show(f.after)}`).join('; ');
    lines.push(
      `  ${where}: ${change.operation.toLowerCase()} ${change.entity.toLowerCase()} #${change.recordId} ${change.label}${fields ? ` (${fields})` : ''}`,
    );
  }
  const shown = result.changes.filter((ch) => ch.operation !== 'UNCHANGED').length;
  if (shown > 200) lines.push(`  … and ${shown - 200} more changes`);
  if (result.issues.length > 0)
    lines.push(applying ? 'Nothing was written: fix the file and run again.' : 'Refused: fix the file, then import it with --apply.');
  else if (result.applied) lines.push(`Applied (audit batch ${result.batchId ?? 'none: nothing changed'}).`);
  else if (!applying) lines.push('Preview only: run again with --apply to write these changes.');
  return lines.join('\n');
}

function show(value: unknown): string {
  if (value === null || value === undefined) return '∅';
  return Array.isArray(value) ? `[${value.join(', ')}]` : String(value);
}
