import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { benchDatabase, type Figures, report, startProcess } from './lib.js';
import { measureLogins, prepare, type Server } from './oauth.js';

/**
 * Issue 23's row: whole logins (the form with its argon2id check) while 32 connections flood
 * `PUT /v1/accounts/password` with wrong codes and long new passwords (fresh random emails, one
 * address), against the same logins undisturbed, measured in the same run on the same server
 * process. Logins must keep at least half their undisturbed rate, and the flood must be answered
 * in milliseconds with 400 or 429 only: a wrong code is checked and refused before any argon2.
 * The flood runs in its own process (bench/flood-client.ts).
 */

const SECONDS = 10;
const CONNECTIONS = 32;
const BROWSERS = 4;
/** The flood's p99 must stay below this: it is answered without hashing. */
const FLOOD_MAX_P99_MS = 250;

export async function runFloodBench(): Promise<boolean> {
  const database = await benchDatabase('bench-flood');
  const prepared = await prepare(database.uri, database.indexer, 'bench_flood');
  const app = await startProcess('bench/serve-oauth.ts', { MONGODB_URI: prepared.uri, LOG_LEVEL: 'silent' });
  try {
    const server: Server = { label: 'our app', url: app.url, cookies: new Map() };
    // Warm-up (JIT, the common-password list, the dummy hash), unrecorded.
    await measureLogins(server, 2);
    const quiet = await measureLogins(server, SECONDS, `whole logins, undisturbed (${BROWSERS} browsers)`);
    const flood = runFlood(app.url);
    const flooded = await measureLogins(server, SECONDS, `whole logins during the flood`);
    const result = await flood;
    const refused = Object.entries(result.statuses).filter(([status]) => status !== '400' && status !== '429');
    const floodFigures: Figures = {
      label: `  the flood: ${CONNECTIONS} x PUT password, wrong code`,
      rps: result.rps,
      p50: result.p50,
      p99: result.p99,
      failures: result.errors + refused.reduce((sum, [, n]) => sum + n, 0),
    };
    console.log(`\n  flood statuses: ${JSON.stringify(result.statuses)}`);
    return report(`Self-service flood (${SECONDS} s each; logins: ${BROWSERS} browsers at a time; the flood in its own process)`, [
      { figures: quiet },
      { figures: flooded, baseline: quiet, target: 0.5 },
      { figures: floodFigures, maxP99: FLOOD_MAX_P99_MS, note: 'answers other than 400/429 count as failed' },
    ]);
  } finally {
    await app.stop();
    await prepared.db.close();
    await database.stop();
  }
}

interface FloodResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  statuses: Record<string, number>;
}

function runFlood(url: string): Promise<FloodResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/flood-client.ts'], {
    env: { ...process.env, FLOOD_URL: url, FLOOD_SECONDS: String(SECONDS), FLOOD_CONNECTIONS: String(CONNECTIONS) },
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((done, fail) => {
    let result: FloodResult | undefined;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('{')) result = JSON.parse(line) as FloodResult;
    });
    child.once('exit', (code) => (result ? done(result) : fail(new Error(`the flood exited with ${code}: ${stderr}`))));
  });
}
