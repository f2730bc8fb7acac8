import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);

/** Where a machine's own Node.js usually is (the project's Node 24 is node_modules/.bin/node). */
const MACHINE_NODES = ['/usr/bin/node', '/usr/local/bin/node'];

/** package.json "engines": the Node.js the project needs, e.g. 24.11. */
function requiredNode(): { major: number; minor: number } {
  const engines = (JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } }).engines.node;
  const [, major = '0', minor = '0'] = /^>=(\d+)\.(\d+)/.exec(engines) ?? [];
  return { major: Number(major), minor: Number(minor) };
}

/** A Node.js older than the project needs installed on this machine, with its version, or undefined. */
async function olderNode(): Promise<{ path: string; version: string } | undefined> {
  const need = requiredNode();
  for (const path of MACHINE_NODES.filter((p) => existsSync(p))) {
    const version = (await run(path, ['--version'])).stdout.trim();
    const [major = 0, minor = 0] = version.slice(1).split('.').map(Number);
    if (major < need.major || (major === need.major && minor < need.minor)) return { path, version };
  }
  return undefined;
}

/**
 * bin/campus.js on the machine's older Node.js (Debian's 20 on a fresh machine) says in one line
 * which Node it needs and how to run it with the project's own, instead of dying with a
 * SyntaxError from an import only Node 24 has. Skipped where no older Node is installed.
 */
describe('operations: bin/campus.js on an older Node.js', () => {
  it('prints one line naming the Node.js it needs and `npx campus`, and exits 1', async function () {
    const node = await olderNode();
    if (!node) this.skip();
    const need = requiredNode();
    const result = await run(node.path, ['bin/campus.js', 'keys', 'list']).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).to.deep.equal({
      code: 1,
      stdout: '',
      stderr:
        `campus: needs Node.js ${need.major}.${need.minor} or later, not ${node.version} (${node.path}); ` +
        "run it with the project's own Node.js instead: `npx campus ...` or `npm run campus -- ...`.\n",
    });
  });
});
