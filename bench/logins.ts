import { alternate, benchDatabase, measureHashFloor, report, startProcess } from './lib.js';
import { LOGIN_BROWSERS, measureLogins, prepare, startBareProvider, type Server } from './oauth.js';

/**
 * Whole logins (authorize, the login form with its argon2id check, the code at the redirect),
 * LOGIN_BROWSERS at a time on one account, against the hash floor (bench/lib.ts): the argon2id
 * checks the machine does two at a time in a process of its own. Each login checks one password,
 * so the floor bounds the login rate; the rest of a login should cost little beside it (target:
 * at least TARGET of the floor), and an absolute target, MIN_LOGINS_PER_SECOND. A reference row,
 * not a target: the same logins on bare oidc-provider with its in-memory adapter and a form that
 * checks the same argon2id password (bench/serve-oauth-bare.ts), what the provider itself costs
 * beside the hash with nothing of ours around it. They alternate in rounds, after a warm-up round
 * each, and are compared by their median rounds (bench/lib.ts, alternate).
 */

const ROUNDS = 3;
const SECONDS = 4;
/** Whole logins a second, as a share of the hash floor's checks a second. */
const TARGET = 0.8;
/** The absolute target for whole logins per second. */
const MIN_LOGINS_PER_SECOND = 20;

export async function runLoginsBench(): Promise<boolean> {
  const database = await benchDatabase('bench-logins');
  const prepared = await prepare(database.uri, database.indexer, 'bench_logins');
  const app = await startProcess('bench/serve-oauth.ts', { MONGODB_URI: prepared.uri, LOG_LEVEL: 'silent' });
  const bareProcess = await startBareProvider();
  try {
    const server: Server = { label: 'our app', url: app.url, cookies: new Map() };
    const bare: Server = { label: 'bare oidc-provider', url: bareProcess.url, cookies: new Map() };
    const [floor, logins, bareLogins] = await alternate(
      [
        (warmingUp) => measureHashFloor(warmingUp ? 1 : SECONDS),
        (warmingUp) =>
          measureLogins(server, warmingUp ? 2 : SECONDS, `whole logins (argon2id), ${LOGIN_BROWSERS} at a time`, app.child.pid),
        (warmingUp) => measureLogins(bare, warmingUp ? 2 : SECONDS, `  bare oidc-provider, in memory, same logins`, bareProcess.child.pid),
      ],
      ROUNDS,
    );
    if (!floor || !logins || !bareLogins) throw new Error('no rounds measured');
    return report(
      `Whole logins against the hash floor (after a warm-up, median of ${ROUNDS} alternating ${SECONDS} s rounds; one account; the floor in its own process)`,
      [
        { figures: floor, note: 'baseline' },
        { figures: logins, baseline: floor, target: TARGET, minRps: MIN_LOGINS_PER_SECOND },
        { figures: bareLogins, baseline: floor },
      ],
    );
  } finally {
    await app.stop();
    await bareProcess.stop();
    await prepared.db.close();
    await database.stop();
  }
}
