// `npm run bench`: speed as ratios against baselines measured in the same run (machines are noisy).
import { runDataBench } from './data.js';
import { runDatabaseBench } from './database.js';
import { benchDatabaseName } from './lib.js';
import { runOAuthBench } from './oauth.js';
import { runUncachedBench } from './uncached.js';

console.log(`On Node.js ${process.versions.node}, ${benchDatabaseName()}.`);
const results: boolean[] = [await runDataBench(), await runUncachedBench(), await runDatabaseBench(), await runOAuthBench()];

console.log(results.every(Boolean) ? '\nAll targets met, no failed request.' : '\nSome target was missed or a request failed (see above).');
process.exit(results.every(Boolean) ? 0 : 1);
