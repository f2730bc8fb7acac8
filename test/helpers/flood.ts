/**
 * A bounded load generator, run as a child process (`runFlood`) so that its own work does not
 * sit on the event loop of the app under test: `connections` loops send the same request until
 * `durationMs` has passed or `maxRequests` were sent, then it prints one JSON summary line.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface FloodOptions {
  readonly url: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly connections: number;
  readonly durationMs: number;
  readonly maxRequests: number;
}

/** One kind of answer the flood got: status, envelope status and message, Retry-After. */
export interface FloodOutcome {
  readonly status: number;
  readonly envelopeStatus: string | null;
  readonly message: string | null;
  readonly retryAfter: string | null;
  count: number;
}

export interface FloodSummary {
  readonly sent: number;
  readonly failedToConnect: number;
  /** Answers grouped by status and message (a 200's body is not kept). */
  readonly outcomes: FloodOutcome[];
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** Runs the flood in a child Node.js process and resolves with its summary. */
export function runFlood(options: FloodOptions): Promise<FloodSummary> {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.end(JSON.stringify(options));
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`flood exited with ${String(code)}: ${output}`));
      else resolve(JSON.parse(output) as FloodSummary);
    });
  });
}

/** Percentile (0..100) of `values` by the nearest-rank method. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

async function flood(options: FloodOptions): Promise<FloodSummary> {
  const stopAt = performance.now() + options.durationMs;
  const outcomes = new Map<string, FloodOutcome>();
  const latencies: number[] = [];
  let sent = 0;
  let failedToConnect = 0;
  const loop = async () => {
    while (performance.now() < stopAt && sent < options.maxRequests) {
      sent += 1;
      const started = performance.now();
      try {
        const res = await fetch(options.url, {
          method: options.method,
          headers: options.headers,
          ...(options.body === undefined ? {} : { body: options.body }),
          signal: AbortSignal.timeout(60_000),
        });
        const text = await res.text();
        latencies.push(performance.now() - started);
        const envelope = res.status === 200 ? null : parseEnvelope(text);
        const outcome = {
          status: res.status,
          envelopeStatus: envelope?.status ?? null,
          message: res.status === 200 ? null : (envelope?.message ?? text.slice(0, 300)),
          retryAfter: res.headers.get('retry-after'),
        };
        const key = JSON.stringify(outcome);
        const seen = outcomes.get(key);
        if (seen) seen.count += 1;
        else outcomes.set(key, { ...outcome, count: 1 });
      } catch {
        failedToConnect += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, loop));
  return { sent, failedToConnect, outcomes: [...outcomes.values()], p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
}

function parseEnvelope(text: string): { status: string; message: string } | null {
  try {
    const body = JSON.parse(text) as { status?: unknown; message?: unknown };
    return typeof body.status === 'string' && typeof body.message === 'string' ? { status: body.status, message: body.message } : null;
  } catch {
    return null;
  }
}

// Run as a script: read the options from stdin, print the summary.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let input = '';
  process.stdin.setEncoding('utf8').on('data', (chunk: string) => (input += chunk));
  process.stdin.on('end', () => {
    flood(JSON.parse(input) as FloodOptions).then(
      (summary) => process.stdout.write(JSON.stringify(summary)),
      (err: unknown) => {
        process.stderr.write(String(err));
        process.exitCode = 1;
      },
    );
  });
}
