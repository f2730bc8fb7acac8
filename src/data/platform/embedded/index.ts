import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomInt } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { MisconfiguredError } from '../../../errors/index.js';
import { isAlive } from '../process-identity.js';

/**
 * The embedded MongoDB-compatible database for development and tests: FerretDB over SQLite,
 * built once from the Go module proxy and cached, or a `mongod` found on PATH. One instance
 * serves a DATA_DIR; commands that find it running reuse it instead of starting another.
 */
export interface EmbeddedDatabase {
  readonly uri: string;
  /** FerretDB over SQLite files in dataDir, FerretDB over PostgreSQL, or a mongod found on PATH. */
  readonly engine: 'ferretdb' | 'ferretdb-postgresql' | 'mongod';
  /** False when another command started it; stop() then leaves it running. */
  readonly owned: boolean;
  /** Makes the indexes FerretDB's own queries can use in one database; absent for mongod (see ferretDbIndexer). */
  readonly indexer: BackendIndexer | undefined;
  /**
   * Settles when the database process this command started exits without being asked to (killed,
   * crashed): with its pid, exit code and signal. Never settles for one another command started.
   */
  readonly died: Promise<{ pid: number; code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

/** Makes, in the named database, the indexes its storage needs beyond the ones MongoDB's commands make. */
export type BackendIndexer = (databaseName: string) => Promise<void>;

/** Where a FerretDB keeps its data: SQLite files in a directory, or a PostgreSQL database. */
export type FerretDbStorage = { readonly sqliteDir: string } | { readonly postgresqlUrl: string };

export interface EmbeddedOptions {
  dataDir: string;
  preferredPort: number;
  /** Human-readable progress lines (the first build takes a minute or two). */
  progress?: (line: string) => void;
  /** FerretDB keeps its data in this PostgreSQL database instead of SQLite files (FERRETDB_POSTGRESQL_URL). */
  postgresqlUrl?: string | undefined;
  /** SQLite's `synchronous` over SQLite files (SQLITE_SYNCHRONOUS); `normal` by default. */
  sqliteSynchronous?: 'normal' | 'full' | undefined;
}

export class EmbeddedDatabaseError extends MisconfiguredError {}

const FERRETDB_VERSION = 'v1.24.2';
const PACKAGE_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const FERRETDB_SOURCE = join(PACKAGE_ROOT, 'tools', 'ferretdb');

interface StateFile {
  pid: number;
  uri: string;
  engine: EmbeddedDatabase['engine'];
}

/** Returns the running embedded database of `dataDir`, starting one when none runs. */
export async function acquireEmbeddedDatabase(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const stateFile = join(dataDir, 'embedded-db.json');

  // Commands started at the same moment take turns: one starts the database, the rest reuse it.
  const release = await takeStartLock(join(dataDir, 'embedded-db.lock'));
  try {
    const running = await findRunning(stateFile);
    if (running) {
      // Commands reuse whatever `campus db` started here; only asking for PostgreSQL over a
      // running SQLite one is a mistake worth stopping for (the data would not be where meant).
      if (options.postgresqlUrl && running.engine !== 'ferretdb-postgresql') {
        throw new EmbeddedDatabaseError(
          `the embedded database of ${dataDir} already runs as ${running.engine}, not over PostgreSQL; stop it or use another DATA_DIR`,
        );
      }
      return {
        ...running,
        owned: false,
        indexer: indexerOf(running.engine, dataDir, options),
        died: new Promise(() => {}),
        stop: async () => {},
      };
    }
    return await startEmbedded(options, dataDir, stateFile);
  } finally {
    release();
  }
}

async function startEmbedded(options: EmbeddedOptions, dataDir: string, stateFile: string): Promise<EmbeddedDatabase> {
  const mongod = options.postgresqlUrl ? undefined : findOnPath('mongod');
  const started = mongod
    ? await startMongod(
        mongod,
        join(dataDir, 'mongod'),
        (await isPortFree(options.preferredPort)) ? options.preferredPort : await freePort(),
      )
    : await startFerretDb(await ensureFerretDbBinary(options.progress ?? (() => {})), options.preferredPort, {
        sqliteDir: join(dataDir, 'ferretdb'),
        postgresqlUrl: options.postgresqlUrl,
        sqliteSynchronous: options.sqliteSynchronous ?? 'normal',
      });

  const state: StateFile = { pid: started.child.pid ?? 0, uri: started.uri, engine: started.engine };
  writeFileSync(stateFile, JSON.stringify(state));
  let stopping = false;
  const died = new Promise<{ pid: number; code: number | null; signal: NodeJS.Signals | null }>((done) => {
    started.child.once('exit', (code, signal) => {
      if (!stopping) done({ pid: state.pid, code, signal });
    });
  });
  return {
    uri: started.uri,
    engine: started.engine,
    owned: true,
    indexer: indexerOf(started.engine, dataDir, options),
    died,
    stop: () => {
      stopping = true;
      return stopChild(started.child, stateFile);
    },
  };
}

function indexerOf(engine: EmbeddedDatabase['engine'], dataDir: string, options: EmbeddedOptions): BackendIndexer | undefined {
  if (engine === 'ferretdb') return ferretDbIndexer({ sqliteDir: join(dataDir, 'ferretdb') }, options.progress);
  // A FerretDB over PostgreSQL started by another command without the URL at hand here: it
  // indexed what existed when it started (tools/ferretdb/main.go).
  if (engine === 'ferretdb-postgresql' && options.postgresqlUrl)
    return ferretDbIndexer({ postgresqlUrl: options.postgresqlUrl }, options.progress);
  return undefined;
}

/**
 * FerretDB 1.24 cannot use the indexes it makes for its own lookups by `_id` (over SQLite) or its
 * equality filters (over PostgreSQL), so every update and delete scanned the whole collection:
 * its launcher makes indexes those queries can use (tools/ferretdb/indexes.go says which and
 * why). A real MongoDB needs none of this. Runs once per call; an index that exists is skipped.
 */
export function ferretDbIndexer(storage: FerretDbStorage, progress: (line: string) => void = () => {}): BackendIndexer {
  return async (databaseName) => {
    const binary = await ensureFerretDbBinary(progress);
    const args = 'sqliteDir' in storage ? ['--handler', 'sqlite', '--sqlite-dir', storage.sqliteDir] : ['--handler', 'postgresql'];
    await run(binary, ['index', ...args, '--database', databaseName], FERRETDB_SOURCE, () => {}, postgresqlEnv(storage));
  };
}

/** The PostgreSQL URL reaches FerretDB through its environment, so it stays out of `ps` (it may hold a password). */
function postgresqlEnv(storage: FerretDbStorage | { postgresqlUrl: string | undefined }): NodeJS.ProcessEnv {
  return 'postgresqlUrl' in storage && storage.postgresqlUrl
    ? { ...process.env, FERRETDB_POSTGRESQL_URL: storage.postgresqlUrl }
    : process.env;
}

/**
 * An exclusive lock file holding the owner's pid; a lock left by a dead process is taken over.
 * Waits as long as a first FerretDB build may take.
 */
async function takeStartLock(lockFile: string, timeoutMs = 10 * 60 * 1000): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
      return () => rmSync(lockFile, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (!isAlive(Number(readFileSync(lockFile, 'utf8').trim() || '0'))) {
      rmSync(lockFile, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new EmbeddedDatabaseError(`another command holds ${lockFile} for too long`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function findRunning(stateFile: string): Promise<StateFile | undefined> {
  if (!existsSync(stateFile)) return undefined;
  try {
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as StateFile;
    const { hostname, port } = new URL(state.uri);
    if (isAlive(state.pid) && (await canConnect(hostname, Number(port)))) return state;
  } catch {
    // A stale file from a process that died: fall through and start a new one.
  }
  rmSync(stateFile, { force: true });
  return undefined;
}

/** Builds the FerretDB launcher (tools/ferretdb) once and caches it by its source hash. */
export async function ensureFerretDbBinary(progress: (line: string) => void): Promise<string> {
  const binary = join(cacheDir(), `ferretdb-${FERRETDB_VERSION}-${sourceHash()}`);
  if (existsSync(binary)) return binary;

  if (!findOnPath('go')) {
    throw new EmbeddedDatabaseError(
      'MONGODB_URI is not set, and the embedded database cannot start: neither Go (needed once to build FerretDB) ' +
        'nor mongod was found on PATH. Install Go 1.24 or newer (https://go.dev/dl/), put a mongod on PATH, ' +
        'or set MONGODB_URI to a MongoDB server.',
    );
  }

  mkdirSync(dirname(binary), { recursive: true });
  const partial = `${binary}.${process.pid}.partial`;
  progress(`Building FerretDB ${FERRETDB_VERSION} for the embedded database (first run only; about 1-3 minutes)...`);
  const started = Date.now();
  let modules = 0;
  const ticker = setInterval(() => {
    progress(`  still building FerretDB: ${Math.round((Date.now() - started) / 1000)}s, ${modules} modules downloaded`);
  }, 15000);
  try {
    await run('go', ['build', '-o', partial, '.'], FERRETDB_SOURCE, (line) => {
      if (line.startsWith('go: downloading')) modules++;
      else if (line.trim()) progress(`  go: ${line}`);
    });
  } finally {
    clearInterval(ticker);
  }
  renameSync(partial, binary);
  progress(`FerretDB built in ${Math.round((Date.now() - started) / 1000)}s and cached at ${binary}`);
  return binary;
}

interface Started {
  child: ChildProcess;
  uri: string;
  engine: EmbeddedDatabase['engine'];
}

/** FerretDB could not bind the port it was given (another process holds it). */
class PortTakenError extends EmbeddedDatabaseError {}

/**
 * Starts FerretDB on the preferred port, taken by binding it (no check beforehand, which another
 * process could beat: two starts in the same second then clashed). When something holds it,
 * FerretDB binds port 0 instead, which the kernel hands out atomically, and its ready line
 * (`ready mongodb://127.0.0.1:<port>/`, tools/ferretdb/main.go) names the port it got.
 */
async function startFerretDb(
  binary: string,
  preferredPort: number,
  backend: { sqliteDir: string; postgresqlUrl: string | undefined; sqliteSynchronous: 'normal' | 'full' },
): Promise<Started> {
  try {
    return await spawnFerretDb(binary, preferredPort, backend);
  } catch (err) {
    if (!(err instanceof PortTakenError)) throw err;
    return spawnFerretDb(binary, 0, backend);
  }
}

async function spawnFerretDb(
  binary: string,
  port: number,
  backend: { sqliteDir: string; postgresqlUrl: string | undefined; sqliteSynchronous: 'normal' | 'full' },
): Promise<Started> {
  const storage = backend.postgresqlUrl
    ? ['--handler', 'postgresql']
    : ['--handler', 'sqlite', '--sqlite-dir', backend.sqliteDir, '--sqlite-synchronous', backend.sqliteSynchronous];
  const child = spawn(binary, ['--listen-addr', `127.0.0.1:${port}`, ...storage, '--exit-on-stdin-close', '--log-level', 'error'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: postgresqlEnv(backend),
  });
  const ready = await waitForLine(child, /^ready (mongodb:\/\/\S+)/, 30000);
  const bound = new URL(ready[1] ?? '').port;
  return { child, uri: `mongodb://127.0.0.1:${bound}/campus`, engine: backend.postgresqlUrl ? 'ferretdb-postgresql' : 'ferretdb' };
}

async function startMongod(mongod: string, dir: string, port: number): Promise<Started> {
  mkdirSync(dir, { recursive: true });
  const child = spawn(mongod, ['--dbpath', dir, '--port', String(port), '--bind_ip', '127.0.0.1', '--quiet'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitFor(() => canConnect('127.0.0.1', port), child, 30000);
  return { child, uri: `mongodb://127.0.0.1:${port}/campus`, engine: 'mongod' };
}

async function stopChild(child: ChildProcess, stateFile: string): Promise<void> {
  rmSync(stateFile, { force: true });
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/**
 * The first line of the child's stdout matching `pattern`, as matched. Fails when the child ends
 * first, with the last lines of its stderr (read whole: 'close' comes after its pipes are drained);
 * as PortTakenError when they say its port was taken.
 */
function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((done, fail) => {
    const errors: string[] = [];
    const stdout = child.stdout;
    const stderr = child.stderr;
    if (!stdout || !stderr) return fail(new EmbeddedDatabaseError('embedded database has no output pipes'));
    createInterface({ input: stderr }).on('line', (line) => {
      errors.push(line);
      if (errors.length > 5) errors.shift();
    });
    const timer = setTimeout(() => fail(new EmbeddedDatabaseError(`embedded database did not start in ${timeoutMs} ms`)), timeoutMs);
    createInterface({ input: stdout }).on('line', (line) => {
      const match = pattern.exec(line);
      if (match) {
        clearTimeout(timer);
        done(match);
      }
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      const message = `embedded database exited with code ${code}: ${errors.join(' | ')}`;
      fail(errors.some((line) => /address already in use/i.test(line)) ? new PortTakenError(message) : new EmbeddedDatabaseError(message));
    });
  });
}

async function waitFor(check: () => Promise<boolean>, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new EmbeddedDatabaseError(`mongod exited with code ${child.exitCode}`);
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new EmbeddedDatabaseError(`mongod did not start in ${timeoutMs} ms`);
}

function run(command: string, args: string[], cwd: string, onLine: (line: string) => void, env = process.env): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...env, GOFLAGS: '-mod=mod -buildvcs=false' },
    });
    const tail: string[] = [];
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        tail.push(line);
        if (tail.length > 20) tail.shift();
        onLine(line);
      });
    }
    child.once('error', fail);
    child.once('exit', (code) =>
      code === 0 ? done() : fail(new EmbeddedDatabaseError(`${command} ${args.join(' ')} failed (exit ${code}):\n${tail.join('\n')}`)),
    );
  });
}

function cacheDir(): string {
  return join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'campus-data-service');
}

function sourceHash(): string {
  const hash = createHash('sha256');
  const files = readdirSync(FERRETDB_SOURCE).filter((file) => file.endsWith('.go') || file === 'go.mod' || file === 'go.sum');
  for (const file of files.sort()) hash.update(readFileSync(join(FERRETDB_SOURCE, file)));
  return hash.digest('hex').slice(0, 12);
}

function findOnPath(command: string): string | undefined {
  const result = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  const path = result.stdout.trim();
  return result.status === 0 && path ? path : undefined;
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host, port });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      done(false);
    });
    socket.once('error', () => done(false));
  });
}

function isPortFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

/**
 * A loopback port free now, for a listener started a moment later (the tests' `campus serve` and
 * embedded databases, mongod). It is picked at random below the kernel's ephemeral range, never
 * in it: the kernel takes ports of that range for every outgoing connection of every process, so
 * a port it picked there could be taken by any connection in the seconds before the listener
 * binds it (seen: "Cannot listen on 127.0.0.1:42787 (EADDRINUSE)" in
 * test/operations/operator-commands.integration.test.ts). Random, so that processes asking at once rarely meet.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralPortsStart();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = randomInt(FREE_PORTS_FROM, high);
    if (await isPortFree(port)) return port;
  }
  throw new EmbeddedDatabaseError(`no free loopback port found between ${FREE_PORTS_FROM} and ${high}`);
}

/** Where freePort starts: above the ports services usually listen on by default. */
const FREE_PORTS_FROM = 20000;

/** The first port of the kernel's ephemeral range (Linux's own file; 32768, its default and below every other system's, elsewhere). */
function ephemeralPortsStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(start) && start > FREE_PORTS_FROM + 1000) return start;
  } catch {
    // Not Linux.
  }
  return 32768;
}
