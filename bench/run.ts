// `npm run bench`: speed as ratios against baselines measured in the same run (machines are noisy).
// `npm run bench -- flood` (or any of the names below) runs only those parts.
import { runDataBench } from './data.js';
import { runDatabaseBench } from './database.js';
import { runFloodBench } from './flood.js';
import { benchDatabaseName } from './lib.js';
import { runOAuthBench } from './oauth.js';
import { runSchoolBench } from './school.js';
import { runUncachedBench } from './uncached.js';
import { runWebhooksBench } from './webhooks.js';

const parts: Record<string, () => Promise<boolean>> = {
  data: runDataBench,
  uncached: runUncachedBench,
  database: runDatabaseBench,
  oauth: runOAuthBench,
  flood: runFloodBench,
  school: runSchoolBench,
  webhooks: runWebhooksBench,
};
const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !(name in parts));
if (unknown.length > 0) {
  console.error(`Unknown bench part: ${unknown.join(', ')}; the parts are ${Object.keys(parts).join(', ')}.`);
  process.exit(2);
}

console.log(`On Node.js ${process.versions.node}, ${benchDatabaseName()}.`);
const results: boolean[] = [];
for (const [name, run] of Object.entries(parts)) if (asked.length === 0 || asked.includes(name)) results.push(await run());

console.log(results.every(Boolean) ? '\nAll targets met, no failed request.' : '\nSome target was missed or a request failed (see above).');
process.exit(results.every(Boolean) ? 0 : 1);
