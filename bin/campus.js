#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm install` through the prepare script).
import { existsSync } from 'node:fs';
import { enableCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';

// Node.js 24.11 (the first LTS release of Node 24) or later (package.json "engines"); `npx campus`
// and `npm run` use the project's own Node 24 from node_modules/.bin when the machine's is older
// (README, "Node.js").
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 24 || (major === 24 && minor < 11)) {
  console.error(
    `campus: Node.js ${process.version} is not supported; use Node.js 24.11 or later (run \`npx campus ...\` to use the project's own Node 24).`,
  );
  process.exit(1);
}

// V8 keeps the code it compiled for dist/ and its dependencies on disk (in the system's temporary
// directory, per Node.js version and file), so a command after the first starts in about two
// thirds of the time: every `campus` command loads the same few hundred modules.
enableCompileCache();

const entry = new URL('../dist/cli/index.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  console.error('campus: dist/ is missing; run `npm install` (or `npm run build`) first.');
  process.exit(1);
}
const { main } = await import(entry.href);
await main(process.argv);
