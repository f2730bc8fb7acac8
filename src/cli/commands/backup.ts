import type { Command } from 'commander';
import {
  BackupError,
  describeCounts,
  restoreBackup,
  verifyArchive,
  writeBackup,
  type VerifiedArchive,
} from '../../data/operations/backup.js';
import { CliError, jsonCommand, progress } from '../runtime.js';

/** `campus backup` and `campus restore`: whole-database archives (src/data/operations/backup.ts). */
export function registerBackup(program: Command): void {
  jsonCommand(
    program
      .command('backup')
      .description(
        'write every collection (school data, accounts, clients, keys, grants, NEIS data) to one compressed, checksummed archive; progress goes to stderr',
      )
      .requiredOption('--out <file>', 'the archive to write (.jsonl.gz), created with mode 0600; it holds personal data: keep it safe')
      .option(
        '--encrypt',
        'encrypt the archive (AES-256-GCM, under a key derived from BACKUP_KEY); restoring it needs the same BACKUP_KEY',
      ),
    {
      json: 'the summary',
      run: async ({ config, db }, options: { out: string; encrypt?: boolean }) => {
        const encrypt = options.encrypt ?? false;
        if (encrypt && !config.backupKey) throw new CliError('--encrypt needs BACKUP_KEY (at least 32 characters) in the environment.');
        const summary = await writeBackup(await db(), options.out, progress, { key: config.backupKey, encrypt }).catch(
          fileError(options.out),
        );
        if (!summary.signed) progress('warning: BACKUP_KEY is not set, so the archive is not signed: an edited copy would restore');
        if (!summary.encrypted) progress('note: the archive is not encrypted (--encrypt): it holds personal data in clear; keep it safe');
        if (summary.collections.some((c) => c.name === 'oauth_keys' && c.count > 0)) {
          // Outside production the signing and cookie keys live in the database (src/oauth/signing-keys.ts), so they are in the archive.
          progress(
            'WARNING: this archive holds the development signing and cookie keys (oauth_keys) in clear: whoever has it can sign tokens and cookies for that database. Production takes them from OAUTH_JWKS and OAUTH_COOKIE_KEYS and they are never in an archive.',
          );
        }
        return summary;
      },
      human: (summary) =>
        `Backup written to ${summary.file}: ${describeCounts(summary)}${summary.signed ? ', signed' : ''}${summary.encrypted ? ', encrypted' : ''}.`,
    },
  );

  jsonCommand(
    program
      .command('restore <file>')
      .description(
        'replace the database with an archive of `campus backup`, all or nothing, after checking it whole (format version, checksums, and with BACKUP_KEY its signature; an encrypted archive is decrypted with BACKUP_KEY); progress goes to stderr',
      )
      .option('--force', 'replace a database that already holds data')
      .option('--check', 'only check the archive; change nothing'),
    {
      json: 'the summary',
      run: async ({ config, db }, options: { force?: boolean; check?: boolean }, [file]: [string]) => {
        try {
          const signing = { key: config.backupKey };
          const archive = options.check
            ? await verifyArchive(file, signing)
            : await restoreBackup(await db(), file, { force: options.force ?? false, progress, signing });
          return { file, archive };
        } catch (err) {
          if (err instanceof BackupError) throw new CliError(`restore refused, nothing was changed: ${err.message}`);
          throw err;
        }
      },
      human: ({ file, archive }, options) => `${options.check ? `${file} is intact` : `Restored from ${file}`}: ${describe(archive)}.`,
      data: ({ archive }) => archive,
    },
  );
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
