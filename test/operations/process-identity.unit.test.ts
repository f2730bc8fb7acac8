import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { hasExited, isAlive, thisProcess } from '../../src/data/platform/process-identity.js';

/** Waits until `check` holds (a process's end is seen by /proc a moment after it exits). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
}

describe('operations: whether a process runs (src/data/platform/process-identity.ts)', () => {
  it('isAlive: this process runs; an exited one, a zombie and a pid that is no pid do not', async () => {
    expect(isAlive(process.pid)).to.equal(true);
    expect([0, -1, 1.5, Number.NaN].map(isAlive)).to.deep.equal([false, false, false, false]);
    const exited = spawnSync('true').pid;
    expect(isAlive(exited)).to.equal(false);
    // The shell's background child, once exited, is never reaped by the `sleep` the shell became: a zombie.
    const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 5'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const [line] = (await once(parent.stdout, 'data')) as [Buffer];
      const zombie = Number(line.toString().trim());
      await until(() => !isAlive(zombie));
      expect(isAlive(zombie), 'a zombie').to.equal(false);
      expect(() => process.kill(zombie, 0), 'the zombie is still in the process table').to.not.throw();
      expect(isAlive(parent.pid ?? 0)).to.equal(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('hasExited: only a process of this pid namespace that is gone', () => {
    expect(hasExited(thisProcess())).to.equal(false);
    const exited = spawnSync('true').pid;
    expect(hasExited({ ...thisProcess(), pid: exited })).to.equal(true);
    expect(hasExited({ ...thisProcess(), pid: exited, pidSpace: 'another machine' })).to.equal(false);
  });
});
