import { Agent } from 'node:http';
import { openDatabase, type Database } from '../src/data/database.js';
import { deleteMatching } from '../src/data/platform/delete-matching.js';
import { seedDemoSchool } from '../src/data/school/demo.js';
import { AccountStore } from '../src/data/accounts/store.js';
import { AccountService } from '../src/oauth/accounts.js';
import { hashPassword } from '../src/oauth/secrets.js';
import { AppService } from '../src/oauth/apps.js';
import {
  benchDatabase,
  measureHashFloor,
  type MetricSample,
  percentile,
  processCpuMs,
  readMetrics,
  report,
  runChild,
  startProcess,
} from './lib.js';
import type { RushPlan, RushResult } from './rush-client.js';
import { signIn, type SignInApp } from './signin.js';

/**
 * The morning rush: ACCOUNTS different students each sign in once to one app, all from one
 * address (a school's network behind one public address; here 127.0.0.1), arriving at random
 * over SECONDS (open arrival: each starts at its own moment whatever the others are doing), each
 * the whole way: authorize, the login page, the password (argon2id), the code at the app's
 * redirect, the app's token exchange with PKCE and one userinfo request. Target: p99 from
 * authorize to tokens at most MAX_P99_MS, and no error. The accounts are made before the clock
 * starts (and kept in the bench's database for the next run); the load generator runs in its own
 * process (bench/rush-client.ts); the hash floor is measured just before, for scale.
 */

const ACCOUNTS = 1000;
const SECONDS = 60;
const MAX_P99_MS = 2000;
/** Sign-ins of a separate account before the clock starts (JIT, keys, the first reads), unrecorded. */
const WARM_UP_SIGN_INS = 10;
/** Passwords hashed at a time in the set-up (argon2id runs on libuv's 4 threads). */
const CREATING_AT_ONCE = 4;
/** The server's time per route and per database operation (src/http/metrics.ts), read before and after the rush. */
const TIMED_SERIES = [
  'campus_http_request_duration_seconds_sum',
  'campus_http_request_duration_seconds_count',
  'campus_db_operation_duration_seconds_sum',
  'campus_db_operation_duration_seconds_count',
];
/** Database operations listed under the table, most total time first. */
const OPERATIONS_LISTED = 8;
/** Distinct errors listed under the table. */
const ERRORS_LISTED = 5;
const PASSWORD = 'rush bench password 1';
const WARM_UP_EMAIL = 'rush-warm-up@bench.test';
const APP = { id: 'bench-rush-app', secret: 'bench-rush-app-secret', redirectUri: 'http://127.0.0.1:9/cb', scope: 'self:read' } as const;

export async function runRushBench(): Promise<boolean> {
  const database = await benchDatabase('bench-rush');
  const url = new URL(database.uri);
  url.pathname = '/bench_rush';
  const db = await openDatabase(url.toString(), { backendIndexes: database.indexer });
  try {
    const emails = await prepareRush(db);
    const server = await startProcess('bench/serve-oauth.ts', { MONGODB_URI: url.toString(), LOG_LEVEL: 'silent' });
    try {
      const app: SignInApp = {
        url: server.url,
        clientId: APP.id,
        clientSecret: APP.secret,
        redirectUri: APP.redirectUri,
        scope: APP.scope,
      };
      const agent = new Agent({ keepAlive: true });
      for (let i = 0; i < WARM_UP_SIGN_INS; i++) await signIn(app, { email: WARM_UP_EMAIL, password: PASSWORD }, { agent });
      agent.destroy();
      const floor = await measureHashFloor(3);
      const plan: RushPlan = { app, password: PASSWORD, emails, seconds: SECONDS };
      const serverCpuBefore = processCpuMs(server.child.pid);
      const timesBefore = await readMetrics(server.url, TIMED_SERIES);
      const rush = await runChild<RushResult>('bench/rush-client.ts', {}, JSON.stringify(plan));
      const serverCpuAfter = processCpuMs(server.child.pid);
      const serverCpuMs = serverCpuBefore === undefined || serverCpuAfter === undefined ? undefined : serverCpuAfter - serverCpuBefore;
      const met = printRush(floor, rush, serverCpuMs);
      printWhereTimeWent(timesBefore, await readMetrics(server.url, TIMED_SERIES));
      return met;
    } finally {
      await server.stop();
    }
  } finally {
    await db.close();
    await database.stop();
  }
}

/**
 * A school of ACCOUNTS students, an account for each (argon2id hashes, made in parallel; those
 * an earlier run made are kept), the warm-up account, and the app, first-party (no consent page)
 * with PKCE required. Returns the students' emails. OAuth records of earlier runs are cleared,
 * so every run meets a store of the same size.
 */
async function prepareRush(db: Database): Promise<string[]> {
  if ((await db.models.students.countDocuments()) !== ACCOUNTS) await seedDemoSchool(db, { students: ACCOUNTS });
  const students = await db.models.students.find({}, { email: 1 }).sort({ _id: 1 }).lean<{ email: string }[]>();
  const emails = students.map((s) => s.email);
  const existing = new Set(
    (await db.models.accounts.find({ email: { $in: emails } }, { email: 1 }).lean<{ email: string }[]>()).map((a) => a.email),
  );
  await makeAccounts(
    db,
    emails.filter((email) => !existing.has(email)),
  );
  const accounts = new AccountService(db);
  await accounts.ensure({ email: WARM_UP_EMAIL, password: PASSWORD, role: 'USER' });
  await new AppService(db, { isProduction: false }).put({
    id: APP.id,
    secret: APP.secret,
    name: 'bench rush',
    redirectUris: [APP.redirectUri],
    firstParty: true,
    pkce: 'required',
  });
  await deleteMatching(db.models.oauthRecords.collection, {});
  await deleteMatching(db.models.oauthInteractions.collection, {});
  return emails;
}

/**
 * Accounts for `emails`, each with its own argon2id hash of PASSWORD (src/oauth/secrets.ts), as
 * AccountService.create makes them: the hashes in parallel, then the records one at a time
 * through the account store (src/data/accounts/store.ts), whose id counter makes concurrent creations
 * retry each other's ids (docs/benchmarks.md, "The morning rush's accounts").
 */
async function makeAccounts(db: Database, emails: readonly string[]): Promise<void> {
  if (emails.length === 0) return;
  const started = performance.now();
  const progress = (what: string, done: number) => {
    if (done % 100 === 0 || done === emails.length) {
      process.stderr.write(
        `  rush accounts: ${what} ${done} of ${emails.length} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
      );
    }
  };
  const hashes = new Map<string, string>();
  await inParallel(emails, CREATING_AT_ONCE, async (email) => {
    hashes.set(email, await hashPassword(PASSWORD));
    progress('hashed', hashes.size);
  });
  const store = new AccountStore(db);
  let stored = 0;
  for (const email of emails) {
    await store.create({ email, passwordHash: hashes.get(email) ?? '', role: 'USER' });
    progress('stored', ++stored);
  }
}

/** Runs `work` on every item, at most `atOnce` at a time. */
async function inParallel<T>(items: readonly T[], atOnce: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      if (item !== undefined) await work(item);
    }
  };
  await Promise.all(Array.from({ length: atOnce }, worker));
}

/** The rush's table, its percentiles and errors; false when a target was missed or a sign-in failed. */
function printRush(floor: Awaited<ReturnType<typeof measureHashFloor>>, rush: RushResult, serverCpuMs: number | undefined): boolean {
  const done = rush.tokensMs.length;
  const met = report(
    `Sign-in rush (${ACCOUNTS.toLocaleString('en')} different student accounts from one address, arriving at random over ${SECONDS} s; authorize, login page, password, code, token with PKCE, userinfo; the load generator in its own process)`,
    [
      { figures: floor, note: 'measured just before the rush (for scale)' },
      {
        figures: {
          label: 'rush sign-ins, authorize to tokens',
          rps: done / (rush.lastFinishMs / 1000),
          p50: percentile(rush.tokensMs, 0.5),
          p99: percentile(rush.tokensMs, 0.99),
          failures: rush.errors,
        },
        maxP99: MAX_P99_MS,
        note: `rate set by the arrivals (${ACCOUNTS} over ${SECONDS} s); failed: any unexpected answer (target: none)`,
      },
    ],
  );
  console.log(
    `  p95 ${percentile(rush.tokensMs, 0.95).toFixed(0)} ms, slowest ${(rush.tokensMs.at(-1) ?? 0).toFixed(0)} ms; ${done} of ${ACCOUNTS} signed in; the last finished at ${(rush.lastFinishMs / 1000).toFixed(1)} s`,
  );
  const perSignIn = (ms: number) => `${(ms / ACCOUNTS).toFixed(1)} ms`;
  console.log(
    `  CPU per sign-in: server ${serverCpuMs === undefined ? 'unknown' : perSignIn(serverCpuMs)}, load generator ${perSignIn(rush.loadCpuMs)}`,
  );
  console.log(`  errors: ${rush.errors}${rush.errors === 0 ? ' (target: none: met)' : ' (target: none: MISSED)'}`);
  for (const [error, count] of rush.distinctErrors.slice(0, ERRORS_LISTED)) console.log(`    ${count} x ${error}`);
  if (rush.distinctErrors.length > ERRORS_LISTED) console.log(`    and ${rush.distinctErrors.length - ERRORS_LISTED} other kinds`);
  return met;
}

/**
 * Where the server's time went during the rush, from its /metrics read before and after: each
 * route's answers (how many, mean time) and the database operations that took the most time in all.
 */
function printWhereTimeWent(before: readonly MetricSample[], after: readonly MetricSample[]): void {
  const spent = (prefix: string, key: (labels: MetricSample['labels']) => string) => {
    const totals = new Map<string, { seconds: number; count: number }>();
    const add = (samples: readonly MetricSample[], sign: number) => {
      for (const { name, labels, value } of samples) {
        if (!name.startsWith(prefix)) continue;
        const entry = totals.get(key(labels)) ?? { seconds: 0, count: 0 };
        if (name.endsWith('_sum')) entry.seconds += sign * value;
        else entry.count += sign * value;
        totals.set(key(labels), entry);
      }
    };
    add(after, 1);
    add(before, -1);
    return [...totals].filter(([, t]) => t.count > 0).sort((a, b) => b[1].seconds - a[1].seconds);
  };
  const line = ([name, t]: [string, { seconds: number; count: number }]) =>
    `${name} ${t.count} x ${((t.seconds / t.count) * 1000).toFixed(1)} ms`;
  const routes = spent('campus_http_request_duration_seconds', (l) => `${l['method']} ${l['route']} ${l['status']}`);
  const operations = spent(
    'campus_db_operation_duration_seconds',
    (l) => `${l['collection']} ${l['operation']}${l['outcome'] === 'ok' ? '' : ` (${l['outcome']})`}`,
  );
  console.log(`  the server's answers (route status: count x mean): ${routes.map(line).join('; ')}`);
  console.log(`  database operations, most time first (count x mean): ${operations.slice(0, OPERATIONS_LISTED).map(line).join('; ')}`);
}
