import { Agent } from 'node:http';
import { openDatabase } from '../src/data/database.js';
import { deleteMatching } from '../src/data/platform/delete-matching.js';
import { seedDemoSchool } from '../src/data/school/demo.js';
import { AccountService } from '../src/oauth/accounts.js';
import { AppService } from '../src/oauth/apps.js';
import { benchDatabase, getText, readMetrics, startProcess } from './lib.js';
import { COMMANDS_PATH } from './serve.js';
import { signIn, type Credentials, type SignInApp } from './signin.js';

/**
 * What one sign-in asks of the database (the map for making sign-ins cheaper; no target): the
 * whole sign-in of bench/signin.ts (authorize, login page, password, code, token with PKCE,
 * userinfo), one request at a time, with the database operations counted after each request,
 * two ways: the models' operations by collection and operation, as /metrics counts them
 * (campus_db_operation_duration_seconds_count, src/http/metrics.ts), and the commands the driver
 * sends (bench/serve-oauth.ts with BENCH_COUNT_COMMANDS=1), which also shows what goes around the
 * models (the version clock's `meta` reads, deletes by filter). First MEASURED sign-ins of one
 * account after WARM_UPS unrecorded ones, then one sign-in each of OTHERS accounts that have not
 * signed in on this server yet: the difference is what a sign-in costs per account.
 */

const WARM_UPS = 5;
const MEASURED = 10;
const OTHERS = 3;
const PASSWORD = 'signin ops password 1';
const APP = { id: 'bench-ops-app', secret: 'bench-ops-app-secret', redirectUri: 'http://127.0.0.1:9/cb', scope: 'self:read' } as const;

/** Counts by name (`collection operation`, or `command collection`). */
type Counts = Map<string, number>;

/** What each request of a sign-in cost, summed over the sign-ins measured, by request (method and path). */
interface Tally {
  readonly signIns: number;
  readonly steps: Map<string, { operations: Counts; commands: Counts }>;
}

export async function runSigninOpsBench(): Promise<boolean> {
  const database = await benchDatabase('bench-signin-ops');
  const url = new URL(database.uri);
  url.pathname = '/bench_signin_ops';
  const db = await openDatabase(url.toString(), { backendIndexes: database.indexer });
  try {
    await seedDemoSchool(db);
    const students = await db.models.students
      .find({}, { email: 1 })
      .sort({ _id: 1 })
      .limit(1 + OTHERS)
      .lean<{ email: string }[]>();
    const people: Credentials[] = students.map((s) => ({ email: s.email, password: PASSWORD }));
    const accounts = new AccountService(db);
    for (const who of people) await accounts.ensure({ ...who, role: 'USER' });
    await new AppService(db, { isProduction: false }).put({
      id: APP.id,
      secret: APP.secret,
      name: 'bench sign-in operations',
      redirectUris: [APP.redirectUri],
      firstParty: true,
      pkce: 'required',
    });
    // No grant or token of an earlier run: the other accounts sign in here for the first time.
    await deleteMatching(db.models.oauthRecords.collection, {});
    await deleteMatching(db.models.oauthInteractions.collection, {});
    const server = await startProcess('bench/serve-oauth.ts', {
      MONGODB_URI: url.toString(),
      LOG_LEVEL: 'silent',
      BENCH_COUNT_COMMANDS: '1',
    });
    const agent = new Agent({ keepAlive: true });
    try {
      const app: SignInApp = {
        url: server.url,
        clientId: APP.id,
        clientSecret: APP.secret,
        redirectUri: APP.redirectUri,
        scope: APP.scope,
      };
      const [first, ...others] = people;
      if (!first) throw new Error('the demo school has no student');
      for (let i = 0; i < WARM_UPS; i++) await signIn(app, first, { agent });
      const again = await tally(
        app,
        agent,
        Array.from({ length: MEASURED }, () => first),
      );
      const fresh = await tally(app, agent, others);
      printTally(
        `Database operations of a warm sign-in: one account again (mean of ${MEASURED}, after ${WARM_UPS} warm-up sign-ins)`,
        again,
      );
      printTally(
        `Database operations of a sign-in of an account new to the server (mean of ${others.length} accounts, one sign-in each)`,
        fresh,
      );
      return true;
    } finally {
      agent.destroy();
      await server.stop();
    }
  } finally {
    await db.close();
    await database.stop();
  }
}

/** Signs each in turn in, counting the database's work after every request. */
async function tally(app: SignInApp, agent: Agent, people: readonly Credentials[]): Promise<Tally> {
  const steps: Tally['steps'] = new Map();
  for (const who of people) {
    let last = await snapshot(app.url, agent);
    await signIn(app, who, {
      agent,
      afterStep: async (step) => {
        const now = await snapshot(app.url, agent);
        const spent = steps.get(step) ?? { operations: new Map(), commands: new Map() };
        addDifference(spent.operations, now.operations, last.operations);
        addDifference(spent.commands, now.commands, last.commands);
        steps.set(step, spent);
        last = now;
      },
    });
  }
  return { signIns: people.length, steps };
}

/** The server's counts so far: the models' operations (/metrics) and the driver's commands. */
async function snapshot(url: string, agent: Agent): Promise<{ operations: Counts; commands: Counts }> {
  const [samples, commands] = await Promise.all([
    readMetrics(url, ['campus_db_operation_duration_seconds_count'], agent),
    getText(`${url}${COMMANDS_PATH}`, agent),
  ]);
  const operations: Counts = new Map();
  for (const { labels, value } of samples) {
    operations.set(`${labels['collection']} ${labels['operation']}${labels['outcome'] === 'ok' ? '' : ` (${labels['outcome']})`}`, value);
  }
  return { operations, commands: new Map(Object.entries(JSON.parse(commands) as Record<string, number>)) };
}

function addDifference(into: Counts, now: Counts, before: Counts): void {
  for (const [name, n] of now) {
    const spent = n - (before.get(name) ?? 0);
    if (spent > 0) into.set(name, (into.get(name) ?? 0) + spent);
  }
}

/** Per sign-in: each request's operations and commands, then the whole sign-in's. */
function printTally(title: string, { signIns, steps }: Tally): void {
  const mean = (n: number) => (n / signIns).toFixed(1);
  const sum = (counts: Counts) => [...counts.values()].reduce((a, b) => a + b, 0);
  const list = (counts: Counts) =>
    [...counts]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([name, n]) => `${mean(n)} ${name}`)
      .join(', ') || 'none';
  const print = (name: string, spent: { operations: Counts; commands: Counts }) => {
    console.log(`  ${name}: ${mean(sum(spent.operations))} model operations, ${mean(sum(spent.commands))} driver commands`);
    console.log(`      models (/metrics: collection operation): ${list(spent.operations)}`);
    console.log(`      driver (command collection): ${list(spent.commands)}`);
  };
  const whole = { operations: new Map<string, number>(), commands: new Map<string, number>() };
  console.log(`\n${title}`);
  for (const [step, spent] of steps) {
    print(step, spent);
    addDifference(whole.operations, spent.operations, new Map());
    addDifference(whole.commands, spent.commands, new Map());
  }
  print('the whole sign-in', whole);
}
