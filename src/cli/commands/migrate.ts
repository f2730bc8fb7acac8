import type { Command } from 'commander';
import { migrate, schemaStatus, type MigrationRecord, type SchemaStatus } from '../../data/migrations.js';
import { jsonCommand, progress } from '../runtime.js';

/** `campus migrate [--status]`: where the database's schema stands, and bringing it up to date. */
export function registerMigrate(program: Command): void {
  jsonCommand(
    program
      .command('migrate')
      .description(
        'bring the database schema to this version (serve and every writing command do it too, under a lock) and make the indexes it needs',
      )
      .option(
        '--status',
        'only show the schema version of the database and of this code, what is pending and what was applied; change nothing',
      ),
    {
      json: 'the result',
      run: async ({ db }, options: { status?: boolean }) => {
        const database = await db();
        const applied = options.status ? undefined : await migrate(database, { progress });
        // Also the storage indexes of a FerretDB of one's own over PostgreSQL, which only this
        // command and `campus serve` make (docs/operations.md, "3. Database and Redis").
        if (!options.status) await database.ensureIndexes();
        return { ...(await schemaStatus(database)), ...(applied ? { applied } : {}) };
      },
      human: (result) => describe(result, result.applied),
    },
  );
}

function describe(status: SchemaStatus, applied: readonly MigrationRecord[] | undefined): string {
  const lines = [`Database schema version ${status.databaseVersion}; this code's ${status.codeVersion}.`];
  if (applied) lines.push(applied.length === 0 ? 'Nothing to apply.' : `Applied ${applied.map((m) => m.version).join(', ')}.`);
  else if (status.databaseVersion > status.codeVersion) lines.push('The database is newer than this code: run the newer release.');
  else
    lines.push(
      status.pending.length === 0
        ? 'Nothing pending.'
        : `Pending (applied by \`campus migrate\` or the next \`campus serve\`): ${status.pending.map((m) => `${m.version} ${m.name}`).join('; ')}.`,
    );
  lines.push(status.history.length === 0 ? 'History: none.' : 'History:');
  for (const h of status.history) lines.push(`  ${h.version} ${h.name}: applied ${new Date(h.appliedAt).toISOString()} by ${h.by}`);
  return lines.join('\n');
}
