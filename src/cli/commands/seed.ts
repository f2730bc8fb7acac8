import type { Config } from '../../config/index.js';
import type { Command } from 'commander';
import { ApiKeyService, API_SCOPES, hashApiKey } from '../../data/keys/store.js';
import type { Database } from '../../data/database.js';
import { DEMO_API_KEY, DEMO_STUDENTS, loadDemoSchool, type DemoSchoolLoad, type SchoolSize } from '../../data/school/demo.js';
import { seedDemoNeis } from '../../neis/seed.js';
import { removeDemoCredentials, seedDemoOAuth, type RemovedDemoCredentials } from '../../oauth/seed.js';
import { CliError, jsonCommand, progress } from '../runtime.js';

export { DEMO_API_KEY } from '../../data/school/demo.js';

export function registerSeed(program: Command): void {
  jsonCommand(
    program
      .command('seed')
      .description(
        'load data; --demo loads the deterministic demo school into a database without a school (a school that is there is kept; --reset replaces it), and the demo credentials; --remove-demo removes the demo credentials',
      )
      .option(
        '--demo',
        'load the demo school (unless the database holds a school), demo accounts and clients, NEIS demo data and the demo API key',
      )
      .option(
        '--reset',
        'with --demo: replace the school that is there with the demo school (recorded in the audit log; earlier changes read as superseded)',
      )
      .option(
        '--remove-demo',
        'remove the demo API key, the demo clients and the demo account with their grants and tokens; school data stays (works in production)',
      )
      .option(
        '--students <n>',
        `with --demo: a school of n students (${DEMO_STUDENTS.min} to ${DEMO_STUDENTS.max}), for benchmarks; beyond 216 enrolled seats the rest are alumni`,
      ),
    {
      json: 'the summary',
      writes: true,
      run: async ({ config, db }, options: SeedOptions) => {
        if (options.demo && options.removeDemo) throw new CliError('Give either --demo or --remove-demo, not both.');
        if (options.students !== undefined && !options.demo) throw new CliError('--students goes with --demo.');
        if (options.reset && !options.demo) throw new CliError('--reset goes with --demo.');
        const size = options.students === undefined ? undefined : studentCount(options.students);
        // `campus seed --remove-demo`: the published credentials go, the school's data stays.
        if (options.removeDemo) return { done: 'removed' as const, removed: await removeDemoCredentials(await db(), config) };
        if (!options.demo)
          throw new CliError(
            "Only `campus seed --demo` and `campus seed --remove-demo` exist: real data comes from the school's own import.",
          );
        if (config.isProduction) throw new CliError('Refusing to load demo data (and its published demo key) in production.');
        return { done: 'loaded' as const, loaded: await loadDemo(await db(), config, options.reset ?? false, size) };
      },
      human: (result) =>
        result.done === 'removed'
          ? describeRemoved(result.removed)
          : [
              ...describeSchool(result.loaded.school),
              `Demo API key (scopes ${API_SCOPES.join(', ')}): ${result.loaded.apiKey}`,
              ...describe(result.loaded.oauth),
              ...describe(result.loaded.neis),
            ].join('\n'),
      data: (result) => (result.done === 'removed' ? result.removed : result.loaded),
    },
  );
}

interface SeedOptions {
  demo?: boolean;
  reset?: boolean;
  removeDemo?: boolean;
  students?: string;
}

/** The demo school, key, apps, accounts and NEIS data. */
async function loadDemo(db: Database, config: Config, reset: boolean, size: number | undefined) {
  const school = await loadDemoSchool(db, {
    ...(reset ? { reset: true } : {}),
    ...(size === undefined ? {} : { students: size, onProgress: tenthsReporter() }),
  });
  const key = await ensureDemoKey(db, config);
  const oauth = await seedDemoOAuth(db, config);
  const neis = await seedDemoNeis(db, config);
  // The school now in the database at the top (students, clubs, projects), then what happened to it.
  const { school: current, ...happened } = school;
  return { ...current, ...happened, school, apiKey: key, oauth, neis };
}

const sizeText = (s: SchoolSize) => `${s.students} students, ${s.clubs} clubs, ${s.projects} projects`;

/** What happened to the school, in words (the lines that come first in the command's answer). */
function describeSchool(load: DemoSchoolLoad): string[] {
  if (load.outcome === 'loaded') return [`Demo school loaded: ${sizeText(load.school)}.`];
  if (load.outcome === 'kept')
    return [
      `The database already holds a school (${sizeText(load.school)}): kept as it is, with every import and edit.`,
      'To replace it with the demo school, run `campus seed --demo --reset` (recorded in the audit log).',
    ];
  return [
    `Demo school loaded: ${sizeText(load.school)}; it replaced ${sizeText(load.replaced)}.`,
    `The reset is in the audit log (batch ${load.batchId}); earlier changes it superseded: ${load.superseded}.`,
  ];
}

function studentCount(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || n < DEMO_STUDENTS.min || n > DEMO_STUDENTS.max) {
    throw new CliError(
      `--students must be a whole number from ${DEMO_STUDENTS.min} to ${DEMO_STUDENTS.max} (got ${JSON.stringify(text)}).`,
    );
  }
  return n;
}

/** Progress on stderr: one line per tenth of the students written. */
function tenthsReporter(): (written: number, total: number) => void {
  let reported = 0;
  return (written, total) => {
    const tenth = Math.floor((written * 10) / total);
    if (tenth > reported) {
      reported = tenth;
      progress(`  students written: ${written} of ${total}`);
    }
  };
}

function describeRemoved(removed: RemovedDemoCredentials): string {
  const parts = [
    removed.apiKeys > 0 ? 'the demo API key' : undefined,
    removed.clientIds.length > 0 ? `clients ${removed.clientIds.join(', ')}` : undefined,
    removed.accountEmails.length > 0 ? `account ${removed.accountEmails.join(', ')}` : undefined,
  ].filter(Boolean);
  if (parts.length === 0) return 'No demo credentials found; nothing removed.';
  return `Removed ${parts.join(', ')} (${removed.revoked} grants, codes, tokens and sessions revoked). School data is unchanged.`;
}

/** Re-issues the demo key with every scope and a fresh 30 days, without duplicating it. */
async function ensureDemoKey(db: Database, config: Config): Promise<string> {
  await db.models.apiKeys.deleteMany({ hash: hashApiKey(DEMO_API_KEY) });
  await new ApiKeyService(db, config.policy).issue({ key: DEMO_API_KEY, scopes: [...API_SCOPES], label: 'demo key (campus seed --demo)' });
  return DEMO_API_KEY;
}

function describe(section: { lines: string[] } | undefined): string[] {
  return section?.lines ?? [];
}
