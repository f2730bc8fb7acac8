import { Agent, get } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiKeyService, API_SCOPES } from '../src/data/keys/store.js';
import { TEST_POLICY } from '../test/helpers/factories.js';
import { openDatabase } from '../src/data/database.js';
import { seedDemoSchool } from '../src/data/school/demo.js';
import { benchDatabase, type Figures, measureHashFloor, percentile, report, runChild, startProcess } from './lib.js';
import { LOGIN_BROWSERS, measureLogins, prepare, type Server } from './oauth.js';

/**
 * Floods, each from its own process (bench/flood-client.ts), beside what must keep working:
 *
 * 1. The self-service flood: whole logins (the form with its argon2id check) while CONNECTIONS
 *    connections flood `PUT /v1/accounts/password` with wrong codes and long new passwords (fresh
 *    random emails, one address), against the same logins undisturbed, measured just before on
 *    the same server process. Logins must keep at least LOGINS_TARGET of their undisturbed rate,
 *    and the flood must be refused (400 or 429 only) within FLOOD_MAX_P50_MS at the median: a
 *    wrong code is checked and refused before any argon2. The hash floor (bench/lib.ts) is
 *    printed beside the logins, measured just before them.
 * 2. The data API: GRAPHQL_CONNECTIONS connections flood `POST /graphql` with documents no cache
 *    can answer, with one API key on the default rate limit (most are refused, 429), while
 *    `GET /v1/health` is probed one request at a time; its p99 must stay under HEALTH_MAX_P99_MS.
 */

const SECONDS = 10;
const CONNECTIONS = 32;
/** Logins during the flood, as a share of their undisturbed rate. */
const LOGINS_TARGET = 0.7;
/** The flood's refusals: median and p99; they are answered without hashing. */
const FLOOD_MAX_P50_MS = 20;
const FLOOD_MAX_P99_MS = 250;
const GRAPHQL_SECONDS = 8;
const GRAPHQL_CONNECTIONS = 16;
const HEALTH_MAX_P99_MS = 200;
/** The health probe's pause between answers: a monitor probes, it does not load. */
const PROBE_PAUSE_MS = 10;

export async function runFloodBench(): Promise<boolean> {
  const database = await benchDatabase('bench-flood');
  try {
    const logins = await selfServiceFlood(database);
    const graphql = await graphqlFlood(database);
    return logins && graphql;
  } finally {
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

type BenchDatabase = Awaited<ReturnType<typeof benchDatabase>>;

async function selfServiceFlood(database: BenchDatabase): Promise<boolean> {
  const prepared = await prepare(database.uri, database.indexer, 'bench_flood');
  const app = await startProcess('bench/serve-oauth.ts', { MONGODB_URI: prepared.uri, LOG_LEVEL: 'silent' });
  try {
    const server: Server = { label: 'our app', url: app.url, cookies: new Map() };
    // Warm-up (JIT, the common-password list, the dummy hash), unrecorded.
    await measureLogins(server, 2, 'warm-up');
    const floor = await measureHashFloor(3);
    const quiet = await measureLogins(server, SECONDS, `whole logins, undisturbed (${LOGIN_BROWSERS} browsers)`, app.child.pid);
    const flood = runFlood(app.url, { FLOOD_KIND: 'password', FLOOD_SECONDS: String(SECONDS), FLOOD_CONNECTIONS: String(CONNECTIONS) });
    const flooded = await measureLogins(server, SECONDS, `whole logins during the flood`, app.child.pid);
    const result = await flood;
    console.log(`\n  self-service flood statuses: ${JSON.stringify(result.statuses)}`);
    return report(
      `Self-service flood (${SECONDS} s each; logins: ${LOGIN_BROWSERS} browsers at a time; the flood and the hash floor in their own processes)`,
      [
        { figures: floor, note: 'measured just before the logins (for scale)' },
        { figures: quiet, note: `baseline; ${(quiet.rps / floor.rps).toFixed(2)}x of the hash floor` },
        { figures: flooded, baseline: quiet, target: LOGINS_TARGET },
        {
          figures: floodFigures(`  the flood: ${CONNECTIONS} x PUT password, wrong code`, result, ['400', '429']),
          maxP50: FLOOD_MAX_P50_MS,
          maxP99: FLOOD_MAX_P99_MS,
          note: 'answers other than 400/429 count as failed',
        },
      ],
    );
  } finally {
    await app.stop();
    await prepared.db.close();
  }
}

async function graphqlFlood(database: BenchDatabase): Promise<boolean> {
  const url = new URL(database.uri);
  url.pathname = '/bench_flood_data';
  const db = await openDatabase(url.toString(), { backendIndexes: database.indexer });
  try {
    await seedDemoSchool(db);
    await db.models.apiKeys.deleteMany({});
    // The default rate limit (RATE_LIMIT): the flood spends it within its first second.
    const { key } = await new ApiKeyService(db, TEST_POLICY).issue({ scopes: [...API_SCOPES], label: 'bench flood' });
    const app = await startProcess('bench/serve-app.ts', { MONGODB_URI: url.toString(), LOG_LEVEL: 'silent' });
    try {
      await probeHealth(app.url, 1, 'warm-up');
      const quiet = await probeHealth(app.url, 3, 'GET /v1/health, undisturbed');
      const flood = runFlood(app.url, {
        FLOOD_KIND: 'graphql',
        FLOOD_API_KEY: key,
        FLOOD_SECONDS: String(GRAPHQL_SECONDS),
        FLOOD_CONNECTIONS: String(GRAPHQL_CONNECTIONS),
      });
      const flooded = await probeHealth(app.url, GRAPHQL_SECONDS, 'GET /v1/health during the flood');
      const result = await flood;
      console.log(`\n  GraphQL flood statuses: ${JSON.stringify(result.statuses)}`);
      return report(
        `Data API flood (${GRAPHQL_SECONDS} s; health probed one request at a time, ${PROBE_PAUSE_MS} ms apart; the flood in its own process)`,
        [
          { figures: quiet, note: 'for scale' },
          { figures: flooded, maxP99: HEALTH_MAX_P99_MS, note: 'absolute (no baseline)' },
          {
            figures: floodFigures(`  the flood: ${GRAPHQL_CONNECTIONS} x POST /graphql, one key`, result, ['200', '429']),
            note: 'answers other than 200/429 count as failed',
          },
        ],
      );
    } finally {
      await app.stop();
    }
  } finally {
    await db.close();
  }
}

/** A flood's figures; answers other than `expected` statuses count as failed. */
function floodFigures(label: string, result: FloodResult, expected: readonly string[]): Figures {
  const unexpected = Object.entries(result.statuses).filter(([status]) => !expected.includes(status));
  return {
    label,
    rps: result.rps,
    p50: result.p50,
    p99: result.p99,
    failures: result.errors + unexpected.reduce((sum, [, n]) => sum + n, 0),
  };
}

function runFlood(url: string, env: Record<string, string>): Promise<FloodResult> {
  return runChild<FloodResult>('bench/flood-client.ts', { ...env, FLOOD_URL: url });
}

/** `GET /v1/health` one request at a time, PROBE_PAUSE_MS apart, for `seconds`; anything but 200 counts as failed. */
async function probeHealth(url: string, seconds: number, label: string): Promise<Figures> {
  const agent = new Agent({ keepAlive: true });
  const times: number[] = [];
  let failures = 0;
  const started = performance.now();
  const stopAt = started + seconds * 1000;
  while (performance.now() < stopAt) {
    const sent = performance.now();
    const status = await new Promise<number>((done) => {
      get(`${url}/v1/health`, { agent }, (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
      }).on('error', () => done(0));
    });
    times.push(performance.now() - sent);
    if (status !== 200) failures++;
    await sleep(PROBE_PAUSE_MS);
  }
  agent.destroy();
  times.sort((a, b) => a - b);
  const elapsed = (performance.now() - started) / 1000;
  return { label, rps: times.length / elapsed, p50: percentile(times, 0.5), p99: percentile(times, 0.99), failures };
}
