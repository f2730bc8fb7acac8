import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);

export interface CliResult {
  stdout: string;
  stderr: string;
  code: number;
}

/**
 * The command as people run it: bin/campus.js, which loads the compiled dist/ (about 0.35 s
 * faster a start than compiling src/ with tsx in every child, and the suite starts hundreds).
 */
const CAMPUS = 'bin/campus.js';

/**
 * Compiles src/ into dist/ (incrementally: about 2 s when little changed), so that the command
 * the tests start is built from the source under test. Run once per suite (test/helpers/hooks.ts).
 */
export async function buildCampus(): Promise<void> {
  await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json']);
}

/**
 * Runs the real `campus` command (built from the source under test) as a child process. `env` is
 * added to the test's environment; with `clean` it replaces it entirely; `stdin` is its standard
 * input; `timeoutMs` ends it (SIGTERM) if it runs longer, e.g. a `serve` expected to refuse to start.
 */
export async function runCampus(
  env: Record<string, string>,
  args: string[],
  options: { clean?: boolean; stdin?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  try {
    const running = run(process.execPath, [CAMPUS, ...args], {
      env: options.clean ? env : { ...process.env, LOG_LEVEL: 'silent', ...env },
      ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
    });
    running.child.stdin?.end(options.stdin ?? '');
    const { stdout, stderr } = await running;
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

/** What a `campus ... --json` printed, read as JSON; the test fails, showing its stderr, unless the command succeeded. */
export function jsonOf<T>(result: CliResult): T {
  expect(result.code, result.stderr).to.equal(0);
  return JSON.parse(result.stdout) as T;
}

/** A `campus` process left running (e.g. `serve`), and how to stop it. */
export interface RunningCampus {
  readonly child: ChildProcessWithoutNullStreams;
  /** The first line it printed on stdout (`serve --json` prints its start-up line). */
  readonly firstLine: string;
  /** Every line it printed on stdout so far (logs go there when LOG_LEVEL is not silent). */
  readonly lines: readonly string[];
  /** What it printed on stderr so far. */
  stderr(): string;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts the real `campus` command (built from the source under test) and waits for its first
 * line on stdout, or with `until` for the first line that matches it. A `serve` stops without
 * a drain (SHUTDOWN_DRAIN_SECONDS=0) unless `env` sets one.
 */
export async function startCampus(env: Record<string, string>, args: string[], until?: RegExp): Promise<RunningCampus> {
  const child = spawn(process.execPath, [CAMPUS, ...args], {
    // No drain on SIGTERM (src/main.ts) unless a test asks for one: `stop()` would wait 5 s.
    env: { ...process.env, LOG_LEVEL: 'silent', SHUTDOWN_DRAIN_SECONDS: '0', ...env },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const lines: string[] = [];
  const firstLine = await new Promise<string>((done, fail) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      if (!until || until.test(line)) done(line);
    });
    void exited.then((code) => fail(new Error(`campus ${args.join(' ')} exited with ${code}: ${stderr}`)));
  });
  return {
    child,
    firstLine,
    lines,
    stderr: () => stderr,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
