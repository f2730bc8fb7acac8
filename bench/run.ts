// `npm run bench`: speed as ratios against baselines measured in the same run (machines are noisy).
// `npm run bench -- flood` (or any of the names below) runs only those parts.
import { spawnSync } from 'node:child_process';
import { runDataBench } from './data.js';
import { runDatabaseBench } from './database.js';
import { runFloodBench } from './flood.js';
import { benchDatabaseName } from './lib.js';
import { runLoginsBench } from './logins.js';
import { runOAuthBench } from './oauth.js';
import { runRushBench } from './rush.js';
import { runSchoolBench } from './school.js';
import { runSigninOpsBench } from './signin-ops.js';
import { runUncachedBench } from './uncached.js';
import { runWebhooksBench } from './webhooks.js';

const parts: Record<string, () => Promise<boolean>> = {
  data: runDataBench,
  uncached: runUncachedBench,
  database: runDatabaseBench,
  oauth: runOAuthBench,
  logins: runLoginsBench,
  rush: runRushBench,
  flood: runFloodBench,
  school: runSchoolBench,
  webhooks: runWebhooksBench,
  'signin-ops': runSigninOpsBench,
};
const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !(name in parts));
if (unknown.length > 0) {
  console.error(`Unknown bench part: ${unknown.join(', ')}; the parts are ${Object.keys(parts).join(', ')}.`);
  process.exit(2);
}

const chosen = Object.keys(parts).filter((name) => asked.length === 0 || asked.includes(name));
// A part run for a whole run (below) prints only its own tables.
const oneOfMany = process.env['BENCH_PART_OF_RUN'] === '1';
if (!oneOfMany) console.log(`On Node.js ${process.versions.node}, ${benchDatabaseName()}.`);
const results = chosen.length === 1 ? [await parts[chosen[0] ?? '']?.()] : chosen.map(runInOwnProcess);
const met = results.every(Boolean);
if (!oneOfMany) console.log(met ? '\nAll targets met, no failed request.' : '\nSome target was missed or a request failed (see above).');
process.exit(met ? 0 : 1);

/**
 * Runs one part in a process of its own, so that what one part leaves in the load generator's
 * process (its heap, its connections) cannot slow the next: the refresh grant ran slower after the
 * data parts in the same process than in a process of its own (docs/benchmarks.md, its opening).
 */
function runInOwnProcess(name: string): boolean {
  const child = spawnSync(process.execPath, [...process.execArgv, process.argv[1] ?? '', name], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PART_OF_RUN: '1' },
  });
  return child.status === 0;
}
