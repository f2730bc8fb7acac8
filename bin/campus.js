#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm install` through the prepare script).
// Only what every Node.js since 12 has is imported statically: the version check below must run
// (and say which Node to use) before anything that needs Node.js 24 is loaded, since a missing
// export of a static import ends an older Node with a SyntaxError before any line here runs.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The Node.js package.json "engines" asks for (`>=24.11.0`, the first LTS release of Node 24).
// `npx campus` and `npm run campus --` put node_modules/.bin first on PATH, where the project's
// own Node 24 (the `node` dev dependency) is, so they run on it when the machine's is older.
const engines = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node;
const [needMajor = 0, needMinor = 0] = (/^>=(\d+)\.(\d+)/.exec(engines) ?? []).slice(1).map(Number);
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < needMajor || (major === needMajor && minor < needMinor)) {
  console.error(
    `campus: needs Node.js ${needMajor}.${needMinor} or later, not ${process.version} (${process.execPath}); ` +
      "run it with the project's own Node.js instead: `npx campus ...` or `npm run campus -- ...`.",
  );
  process.exit(1);
}

// V8 keeps the code it compiled for dist/ and its dependencies on disk (in the system's temporary
// directory, per Node.js version and file), so a command after the first starts in about two
// thirds of the time: every `campus` command loads the same few hundred modules.
const { enableCompileCache } = await import('node:module');
enableCompileCache();

const entry = new URL('../dist/cli/index.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  console.error('campus: dist/ is missing; run `npm install` (or `npm run build`) first.');
  process.exit(1);
}
const { main } = await import(entry.href);
await main(process.argv);
