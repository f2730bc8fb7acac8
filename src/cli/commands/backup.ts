import type { Command } from 'commander';
import { BackupError, describeCounts, restoreBackup, verifyArchive, writeBackup, type VerifiedArchive } from '../../data/backup.js';
import { CliError, cliConfig, output, progress, withDatabase } from '../runtime.js';

/** `campus backup` and `campus restore`: whole-database archives (src/data/backup.ts). */
export function registerBackup(program: Command): void {
  program
    .command('backup')
    .description(
      'write every collection (school data, accounts, clients, keys, grants, NEIS data) to one compressed, checksummed archive; progress goes to stderr',
    )
    .requiredOption('--out <file>', 'the archive to write (.jsonl.gz), created with mode 0600; it holds personal data: keep it safe')
    .option('--json', 'print the summary as JSON')
    .action(async (options: { out: string; json?: boolean }) => {
      const summary = await withDatabase(cliConfig(), ({ db }) => writeBackup(db, options.out, progress).catch(fileError(options.out)));
      output(options.json, summary, () => `Backup written to ${summary.file}: ${describeCounts(summary)}.`);
    });

  program
    .command('restore <file>')
    .description(
      'replace the database with an archive of `campus backup`, all or nothing, after checking it whole (format version, checksums); progress goes to stderr',
    )
    .option('--force', 'replace a database that already holds data')
    .option('--check', 'only check the archive; change nothing')
    .option('--json', 'print the summary as JSON')
    .action(async (file: string, options: { force?: boolean; check?: boolean; json?: boolean }) => {
      try {
        if (options.check) {
          const archive = await verifyArchive(file);
          output(options.json, archive, () => `${file} is intact: ${describe(archive)}.`);
          return;
        }
        const archive = await withDatabase(cliConfig(), ({ db }) => restoreBackup(db, file, { force: options.force ?? false, progress }));
        output(options.json, archive, () => `Restored from ${file}: ${describe(archive)}.`);
      } catch (err) {
        if (err instanceof BackupError) throw new CliError(`restore refused, nothing was changed: ${err.message}`);
        throw err;
      }
    });
}

function describe(archive: VerifiedArchive): string {
  return `${describeCounts(archive)}, taken ${archive.createdAt} at schema version ${archive.schemaVersion}`;
}

/** A file the archive cannot be written to is the operator's to fix: one line, no stack. */
function fileError(file: string): (err: unknown) => never {
  return (err) => {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR' || code === 'EROFS' || code === 'ENOSPC') {
      throw new CliError(`Cannot write ${file}: ${(err as Error).message}`);
    }
    throw err;
  };
}
