import type { Command } from 'commander';
import { ApiKeyService, API_SCOPES, hashApiKey } from '../../data/api-keys.js';
import type { Database } from '../../data/database.js';
import { seedDemoSchool } from '../../data/seed/demo.js';
import { seedDemoNeis } from '../../neis/seed.js';
import { seedDemoOAuth } from '../../oauth/seed.js';
import { CliError, cliConfig, output, withDatabase } from '../runtime.js';

/**
 * The demo key is fixed so the README's curl examples work as written. It exists only where
 * `campus seed --demo` ran, which production refuses.
 */
export const DEMO_API_KEY = 'de70c0de-5eed-4a11-8c0d-000000000001';

export function registerSeed(program: Command): void {
  program
    .command('seed')
    .description('load data; --demo loads the deterministic demo school (running it twice leaves the same data)')
    .option('--demo', 'load the demo school, demo accounts and clients, NEIS demo data and the demo API key')
    .option('--json', 'print the summary as JSON')
    .action(async (options: { demo?: boolean; json?: boolean }) => {
      if (!options.demo) throw new CliError('Only `campus seed --demo` exists: real data comes from the school\'s own import.');
      const config = cliConfig();
      if (config.isProduction) throw new CliError('Refusing to load demo data (and its published demo key) in production.');
      const summary = await withDatabase(config, async ({ db }) => {
        const school = await seedDemoSchool(db);
        const key = await ensureDemoKey(db);
        const oauth = await seedDemoOAuth(db, config);
        const neis = await seedDemoNeis(db, config);
        return { ...school, apiKey: key, oauth, neis };
      });
      output(options.json, summary, () =>
        [
          `Demo school loaded: ${summary.students} students, ${summary.clubs} clubs, ${summary.projects} projects.`,
          `Demo API key (scopes ${API_SCOPES.join(', ')}): ${summary.apiKey}`,
          ...describe(summary.oauth),
          ...describe(summary.neis),
        ].join('\n'),
      );
    });
}

/** Re-issues the demo key with every scope and a fresh 30 days, without duplicating it. */
async function ensureDemoKey(db: Database): Promise<string> {
  await db.models.apiKeys.deleteMany({ hash: hashApiKey(DEMO_API_KEY) });
  await new ApiKeyService(db).issue({ key: DEMO_API_KEY, scopes: [...API_SCOPES], label: 'demo key (campus seed --demo)' });
  return DEMO_API_KEY;
}

function describe(section: { lines: string[] } | undefined): string[] {
  return section?.lines ?? [];
}
