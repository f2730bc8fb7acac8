// `npm run bench`: speed as ratios against baselines measured in the same run (machines are noisy).
import { existsSync } from 'node:fs';
import { runDataBench } from './data.js';
import { benchDatabaseName } from './lib.js';
import { runUncachedBench } from './uncached.js';

console.log(`On Node.js ${process.versions.node}, ${benchDatabaseName()}.`);
const results: boolean[] = [await runDataBench(), await runUncachedBench()];

// The OAuth part (token refresh and userinfo against bare oidc-provider) lives beside it.
if (existsSync(new URL('./oauth.ts', import.meta.url))) {
  const { runOAuthBench } = (await import('./oauth.js')) as { runOAuthBench: () => Promise<boolean | void> };
  results.push((await runOAuthBench()) !== false);
}

console.log(results.every(Boolean) ? '\nAll targets met, no failed request.' : '\nSome target was missed or a request failed (see above).');
process.exit(results.every(Boolean) ? 0 : 1);
