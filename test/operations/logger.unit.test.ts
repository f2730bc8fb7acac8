import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { batchedDestination, createLogger } from '../../src/logger.js';

const run = promisify(execFile);

/** Reads the JSON lines of a log file (empty while nothing was written). */
function logLines(file: string): Record<string, unknown>[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function waitFor(condition: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("operations: the logger's batched destination", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'campus-log-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes every line, in order and whole, within one batch interval', async () => {
    const file = join(dir, 'out.log');
    const logger = createLogger('info', batchedDestination(file, 20));
    for (let i = 0; i < 500; i++) logger.info({ i, path: '/v1/students' }, 'request');
    expect(logLines(file)).to.deep.equal([]);
    await waitFor(() => logLines(file).length === 500);
    const lines = logLines(file);
    expect(lines.map((l) => l['i'])).to.deep.equal([...Array(500).keys()]);
    expect(lines[0]).to.include({ level: 'info', service: 'campus-data-service', path: '/v1/students', msg: 'request' });
  });

  it('writes a batch at once when 64 KiB are waiting, before the interval', async () => {
    const file = join(dir, 'out.log');
    const logger = createLogger('info', batchedDestination(file, 60000));
    const filler = 'x'.repeat(1000);
    for (let i = 0; i < 70; i++) logger.info({ i, filler }, 'big');
    await waitFor(() => logLines(file).length >= 60);
    expect(logLines(file)[0]).to.include({ i: 0, msg: 'big' });
  });

  it('writes the lines still waiting when the process exits', async () => {
    const file = join(dir, 'exit.log');
    const script = [
      `import { batchedDestination, createLogger } from ${JSON.stringify(new URL('../../src/logger.ts', import.meta.url).pathname)};`,
      `const logger = createLogger('info', batchedDestination(${JSON.stringify(file)}, 60000));`,
      `for (let i = 0; i < 3; i++) logger.info({ i }, 'last words');`,
      `process.exit(0);`,
    ].join('\n');
    await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    expect(logLines(file).map((l) => [l['i'], l['msg']])).to.deep.equal([
      [0, 'last words'],
      [1, 'last words'],
      [2, 'last words'],
    ]);
  });
});
