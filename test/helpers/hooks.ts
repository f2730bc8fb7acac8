import { buildCampus } from './cli.js';
import { joinTestDatabase, startTestDatabase, stopTestDatabase } from './database.js';

/**
 * Mocha's global fixtures, run once in the process that runs mocha: one real database server for
 * the whole suite, and the `campus` command built. The first run on a machine builds FerretDB
 * (1-3 minutes); later runs start it in a second.
 */
export async function mochaGlobalSetup(): Promise<void> {
  await Promise.all([startTestDatabase(), buildCampus()]);
}

export async function mochaGlobalTeardown(): Promise<void> {
  await stopTestDatabase();
}

/**
 * Root hooks: with `--parallel`, test files run in worker processes, which reach the server the
 * global setup started (in a serial run this finds it started already).
 */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60000);
    await joinTestDatabase();
  },
};
