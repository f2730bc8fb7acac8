import { buildCampus } from './cli.js';
import { startTestDatabase, stopTestDatabase } from './database.js';

/** Mocha root hooks: one real database server for the whole suite, and the `campus` command built. */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    // The first run on a machine builds FerretDB (1-3 minutes); later runs start it in a second.
    this.timeout(600000);
    await Promise.all([startTestDatabase(), buildCampus()]);
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30000);
    await stopTestDatabase();
  },
};
