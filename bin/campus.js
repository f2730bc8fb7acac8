#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm install` through the prepare script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli/index.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  console.error('campus: dist/ is missing; run `npm install` (or `npm run build`) first.');
  process.exit(1);
}
const { main } = await import(entry.href);
await main(process.argv);
