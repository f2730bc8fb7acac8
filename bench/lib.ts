import autocannon from 'autocannon';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { get, type Agent } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig } from '../src/config/index.js';
import { acquireEmbeddedDatabase, freePort, type BackendIndexer } from '../src/data/platform/embedded/index.js';

/** The privilege settings of a service with no settings of its own (what `campus serve` runs with here). */
export const BENCH_POLICY = loadConfig({}).policy;

/** One measured load: requests per second, latency percentiles and failures. */
export interface Figures {
  readonly label: string;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly failures: number;
  /** CPU time per answer, in microseconds, when the server's process was named (LoadOptions.serverPid). */
  readonly cpu?: AnswerCpu;
}

/**
 * What one answer cost each side: the server process (user + system time, from /proc) and the
 * load generator (this process). When the load generator's share nears a whole core, the rate
 * measured is its own, not the server's (docs/benchmarks.md).
 */
export interface AnswerCpu {
  readonly serverUs: number;
  readonly loadUs: number;
  /** The rest of the machine's busy time (the database's processes, mostly), where counted. */
  readonly otherUs?: number;
}

/** CPU time so far, in ms: the server's process, this process, and the whole machine's busy time. */
export interface CpuReading {
  readonly server: number | undefined;
  readonly load: number;
  readonly machine: number | undefined;
}

export function cpuNow(serverPid: number | undefined): CpuReading {
  const load = process.cpuUsage();
  return { server: processCpuMs(serverPid), load: (load.user + load.system) / 1000, machine: machineBusyMs() };
}

/** What each of `answers` cost between two readings, in microseconds; undefined without a server or answers. */
export function cpuPerAnswer(before: CpuReading, after: CpuReading, answers: number): AnswerCpu | undefined {
  if (before.server === undefined || after.server === undefined || answers === 0) return undefined;
  const serverUs = ((after.server - before.server) * 1000) / answers;
  const loadUs = ((after.load - before.load) * 1000) / answers;
  if (before.machine === undefined || after.machine === undefined) return { serverUs, loadUs };
  const otherUs = Math.max(0, ((after.machine - before.machine) * 1000) / answers - serverUs - loadUs);
  return { serverUs, loadUs, otherUs };
}

/**
 * The machine's busy CPU time over all its cores, in ms (Linux: the first line of /proc/stat,
 * in clock ticks of 10 ms: user, nice, system, idle, iowait, irq, softirq, steal; all but idle
 * and iowait are busy), or undefined where /proc cannot tell.
 */
function machineBusyMs(): number | undefined {
  try {
    const [cpuLine = ''] = readFileSync('/proc/stat', 'utf8').split('\n');
    const [user, nice, system, , , irq, softirq, steal] = cpuLine.trim().split(/\s+/).slice(1).map(Number);
    const busy = [user, nice, system, irq, softirq, steal].reduce<number>((sum, ticks) => sum + (ticks ?? 0), 0);
    return Number.isFinite(busy) ? busy * 10 : undefined;
  } catch {
    return undefined;
  }
}

export interface LoadOptions {
  url: string;
  headers?: Record<string, string>;
  method?: 'GET' | 'POST';
  body?: string;
  /** Expected status; anything else counts as a failure. */
  expectStatus?: number;
  durationSeconds?: number;
  connections?: number;
  /** A path per request (for loads that must miss every cache); `url` then gives only the origin. */
  nextPath?: () => string;
  /** The server's process, to report the CPU time each answer cost it (Linux: /proc). */
  serverPid?: number | undefined;
}

/** Runs autocannon against one URL and reduces the result to the figures we print. */
export async function measure(label: string, options: LoadOptions): Promise<Figures> {
  const expected = options.expectStatus ?? 200;
  let wrongStatus = 0;
  const cpuBefore = cpuNow(options.serverPid);
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ...(options.body ? { body: options.body } : {}),
    connections: options.connections ?? 10,
    duration: options.durationSeconds ?? 5,
    ...(options.nextPath
      ? { requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, path: options.nextPath?.() ?? request.path }) }] }
      : {}),
    setupClient: (client) => {
      client.on('response', (statusCode: number) => {
        if (statusCode !== expected) wrongStatus++;
      });
    },
  });
  const cpu = cpuPerAnswer(cpuBefore, cpuNow(options.serverPid), result.requests.total);
  return {
    label,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.errors + result.timeouts + wrongStatus,
    ...(cpu ? { cpu } : {}),
  };
}

/**
 * User plus system CPU time of a process, in milliseconds, or undefined where /proc cannot tell.
 * Fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 a second on Linux); the name before
 * them may hold spaces and parentheses, so fields are counted after its last closing parenthesis.
 */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Measures a subject against its baseline in alternating rounds (A B A B ...) and keeps each
 * one's median round, so a burst of load from elsewhere on a noisy machine hits both alike (see
 * alternate).
 */
export async function compare(
  baseline: { label: string; options: LoadOptions },
  subject: { label: string; options: LoadOptions },
  rounds = 5,
  secondsPerRound = 2,
): Promise<{ baseline: Figures; subject: Figures }> {
  const side =
    ({ label, options }: { label: string; options: LoadOptions }) =>
    (warmingUp: boolean) =>
      measure(label, { ...options, durationSeconds: warmingUp ? 2 : secondsPerRound });
  const [baselineFigures, subjectFigures] = await alternate([side(baseline), side(subject)], rounds);
  if (!baselineFigures || !subjectFigures) throw new Error('no rounds measured');
  return { baseline: baselineFigures, subject: subjectFigures };
}

/**
 * Measures `sides` in alternating rounds (A B C A B C ...) and returns each one's median round,
 * in the same order. Each side first gets an unrecorded warm-up round (`warmingUp` true), so
 * none is measured while its JIT is still compiling the path under test; a request that fails
 * while warming up still counts as failed.
 */
export async function alternate(sides: readonly ((warmingUp: boolean) => Promise<Figures>)[], rounds: number): Promise<Figures[]> {
  const warmupFailures: number[] = [];
  for (const side of sides) warmupFailures.push((await side(true)).failures);
  const runs: Figures[][] = sides.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, side] of sides.entries()) runs[i]?.push(await side(false));
  }
  return runs.map((measured, i) => {
    const figures = median(measured);
    return { ...figures, failures: figures.failures + (warmupFailures[i] ?? 0) };
  });
}

/** The round with the median request rate; failures are summed over every round. */
function median(rounds: Figures[]): Figures {
  const sorted = [...rounds].sort((a, b) => a.rps - b.rps);
  const middle = sorted[Math.floor(sorted.length / 2)] ?? sorted[0];
  if (!middle) throw new Error('no rounds measured');
  return { ...middle, failures: rounds.reduce((sum, r) => sum + r.failures, 0) };
}

/** Prints figures as a table with each one's ratio to its baseline. */
export function report(
  title: string,
  rows: { figures: Figures; baseline?: Figures; target?: number; maxP50?: number; maxP99?: number; minRps?: number; note?: string }[],
): boolean {
  console.log(`\n${title}`);
  console.log('  measurement                                   req/s     p50 ms   p99 ms   failed   ratio to baseline');
  let ok = true;
  for (const { figures: f, baseline, target, maxP50, maxP99, minRps, note } of rows) {
    const ratio = baseline ? f.rps / baseline.rps : undefined;
    const verdict =
      ratio !== undefined && target !== undefined
        ? ratio >= target
          ? ` (target >= ${target}: met)`
          : ` (target >= ${target}: MISSED)`
        : '';
    const p50Verdict =
      maxP50 === undefined ? '' : f.p50 <= maxP50 ? ` (p50 target <= ${maxP50} ms: met)` : ` (p50 target <= ${maxP50} ms: MISSED)`;
    const p99Verdict =
      maxP99 === undefined ? '' : f.p99 <= maxP99 ? ` (p99 target <= ${maxP99} ms: met)` : ` (p99 target <= ${maxP99} ms: MISSED)`;
    if ((target !== undefined && ratio !== undefined && ratio < target) || f.failures > 0) ok = false;
    const rpsVerdict = minRps === undefined ? '' : f.rps >= minRps ? ` (target >= ${minRps}/s: met)` : ` (target >= ${minRps}/s: MISSED)`;
    if (maxP50 !== undefined && f.p50 > maxP50) ok = false;
    if (maxP99 !== undefined && f.p99 > maxP99) ok = false;
    if (minRps !== undefined && f.rps < minRps) ok = false;
    const other = f.cpu?.otherUs === undefined ? '' : `, the rest of the machine ${f.cpu.otherUs.toFixed(0)} us`;
    const cpu = f.cpu
      ? `; CPU per answer: server ${f.cpu.serverUs.toFixed(0)} us, load generator ${f.cpu.loadUs.toFixed(0)} us${other}`
      : '';
    console.log(
      `  ${f.label.padEnd(44)} ${f.rps.toFixed(0).padStart(7)}  ${f.p50.toFixed(1).padStart(7)}  ${f.p99.toFixed(1).padStart(7)}  ${String(f.failures).padStart(7)}   ${
        ratio === undefined ? (note ?? 'baseline') : `${ratio.toFixed(2)}x of "${baseline?.label}"${verdict}`
      }${p50Verdict}${p99Verdict}${rpsVerdict}${cpu}`,
    );
  }
  return ok;
}

/** Starts a bench server script in its own process (so it does not share a core with the load). */
export async function startProcess(
  script: string,
  env: Record<string, string>,
): Promise<{ url: string; stop(): Promise<void>; child: ChildProcessWithoutNullStreams }> {
  const profile = process.env['BENCH_CPU_PROF'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_CPU_PROF']}`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', script], { env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const url = await new Promise<string>((done, fail) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /^listening (\S+)/.exec(line);
      if (match?.[1]) done(match[1]);
    });
    child.once('exit', (code) => fail(new Error(`${script} exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Runs a bench script in a process of its own (a load generator, or a baseline that must not
 * share the load generator's core), writes `input` to its stdin, and resolves with the last line
 * it printed that is a JSON object.
 */
export function runChild<T>(script: string, env: Record<string, string>, input = ''): Promise<T> {
  const profile = process.env['BENCH_CPU_PROF'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_CPU_PROF']}`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', script], { env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(input);
  return new Promise((done, fail) => {
    let result: T | undefined;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('{')) result = JSON.parse(line) as T;
    });
    child.once('exit', (code) => (result !== undefined ? done(result) : fail(new Error(`${script} exited with ${code}: ${stderr}`))));
  });
}

/** The label of the hash floor's row wherever a sign-in figure is printed. */
export const HASH_FLOOR_LABEL = 'the hash floor: argon2id checks, 2 at a time';

/**
 * The hash floor: how many password checks a second this machine does with the production
 * argon2id parameters (src/oauth/secrets.ts), two at a time, in a process of its own
 * (bench/hash-floor.ts), as p50/p99 of one check. A whole sign-in checks one password, so no
 * sign-in rate can pass it; the ratio to it says how much the rest of a sign-in costs.
 */
export async function measureHashFloor(seconds: number): Promise<Figures> {
  const floor = await runChild<{ rps: number; p50: number; p99: number }>('bench/hash-floor.ts', { HASH_SECONDS: String(seconds) });
  return { label: HASH_FLOOR_LABEL, ...floor, failures: 0 };
}

/** The value at quantile `q` (0-1) of ascending `sorted`, 0 when empty. */
export function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

/** One sample of a Prometheus text answer: its series name, labels and value. */
export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A sample line of the Prometheus text format: `name{label="value",...} number`. */
const SAMPLE_LINE = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? (\S+)$/;

/** The samples of the series named `names` that the app at `url` answers at /metrics (src/http/metrics.ts). */
export async function readMetrics(url: string, names: readonly string[], agent?: Agent): Promise<MetricSample[]> {
  const text = await getText(`${url}/metrics`, agent);
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    const [, name = '', labels = '', value = ''] = SAMPLE_LINE.exec(line) ?? [];
    if (!names.includes(name)) continue;
    samples.push({
      name,
      labels: Object.fromEntries([...labels.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]])),
      value: Number(value),
    });
  }
  return samples;
}

/** The body of a GET, as text (whatever the status). */
export function getText(url: string, agent?: Agent): Promise<string> {
  return new Promise((done, fail) => {
    get(url, agent ? { agent } : {}, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(Buffer.concat(chunks).toString()));
    }).on('error', fail);
  });
}

/** Where the bench's data lives, printed above its tables. */
export function benchDatabaseName(): string {
  if (process.env['MONGODB_URI']) return 'the database at MONGODB_URI';
  return process.env['FERRETDB_POSTGRESQL_URL'] ? 'the embedded FerretDB over PostgreSQL' : 'the embedded FerretDB over SQLite';
}

/**
 * The database a bench part runs on, chosen as `campus serve` chooses (src/config/index.ts):
 * MONGODB_URI when set, else the embedded FerretDB, keeping its data in the PostgreSQL database
 * FERRETDB_POSTGRESQL_URL names, else in SQLite files. `name` keeps each part's data apart.
 * `indexer` makes FerretDB's storage indexes, as `campus serve` does (pass it to openDatabase).
 */
export async function benchDatabase(name: string): Promise<{ uri: string; indexer: BackendIndexer | undefined; stop(): Promise<void> }> {
  const given = process.env['MONGODB_URI'];
  if (given) return { uri: given, indexer: undefined, stop: async () => {} };
  const postgresqlUrl = process.env['FERRETDB_POSTGRESQL_URL'];
  const embedded = await acquireEmbeddedDatabase({
    dataDir: join('.data', postgresqlUrl ? `${name}-postgresql` : name),
    preferredPort: await freePort(),
    postgresqlUrl,
  });
  const uri = new URL(embedded.uri);
  uri.pathname = `/${name.replace(/\W/g, '_')}`;
  return { uri: uri.toString(), indexer: embedded.indexer, stop: () => embedded.stop() };
}
