/**
 * Load through a TLS proxy while its processes restart, run as a child process (`startProxyLoad`)
 * so that its work does not sit on the test's event loop: `getLoops` loops read a data endpoint
 * with an API key, and `postLoops` loops refresh OAuth tokens (a token POST; each refresh token
 * is single use, so an answer lost or a POST sent twice breaks its chain: the token's reuse is
 * refused, a failure, and the loop goes on with a spare grant). Each loop sends a request every `everyMs` (or, when
 * an answer takes longer, as soon as its last one was answered), until told to stop: a steady
 * rate, so that the count of failures says how long requests failed, not how fast a 502 comes. Every answer that is not a 200, and every request that got no
 * answer, is a failure, noted with its time.
 */
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:https';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface ProxyLoadOptions {
  /** The proxy's address, e.g. https://127.0.0.1:41234. */
  readonly url: string;
  /** The proxy's certificate (PEM), trusted for this load only. */
  readonly ca: string;
  readonly get: { readonly path: string; readonly apiKey: string; readonly loops: number; readonly everyMs: number };
  readonly post: {
    readonly everyMs: number;
    readonly clientId: string;
    readonly clientSecret: string;
    /** One list per loop: the refresh token it starts with, then its spares (each of another grant). */
    readonly refreshTokens: readonly (readonly string[])[];
  };
}

/** One request that failed: which kind, when (ms after the load started), and what came back. */
export interface LoadFailure {
  readonly kind: 'GET' | 'POST';
  readonly atMs: number;
  /** The status, or the connection error's code when no answer came. */
  readonly outcome: string;
  readonly body: string;
}

export interface LoadCounts {
  readonly sent: number;
  /** Answers by status, and requests without an answer by error code (e.g. ECONNRESET). */
  readonly outcomes: Record<string, number>;
}

export interface LoadSummary {
  readonly durationMs: number;
  readonly get: LoadCounts;
  readonly post: LoadCounts;
  /** The first failures (up to 50), in order. */
  readonly failures: LoadFailure[];
  /** Token POST loops that ran out of refresh tokens (every spare broken). */
  readonly exhaustedPostLoops: number;
}

export interface RunningLoad {
  /** Ms since the load started (to place a restart among the failures). */
  elapsedMs(): number;
  /** Ends the loops (each finishes the request it has in flight) and resolves with what they saw. */
  stop(): Promise<LoadSummary>;
}

/** Starts the load in a child Node.js process; resolves once its loops run. */
export async function startProxyLoad(options: ProxyLoadOptions): Promise<RunningLoad> {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.write(`${JSON.stringify(options)}\n`);
  const lines = createInterface({ input: child.stdout });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const received: string[] = [];
  let wake: (() => void) | undefined;
  lines.on('line', (line) => {
    received.push(line);
    wake?.();
  });
  const nextLine = async (): Promise<string> => {
    while (received.length === 0) {
      const exit = exited.then((code) => {
        throw new Error(`the load exited with ${String(code)}`);
      });
      await Promise.race([new Promise<void>((done) => (wake = done)), exit]);
    }
    return received.shift() ?? '';
  };
  if ((await nextLine()) !== 'started') throw new Error('the load did not start');
  const startedAt = performance.now();
  return {
    elapsedMs: () => performance.now() - startedAt,
    async stop() {
      child.stdin.end('stop\n');
      const summary = JSON.parse(await nextLine()) as LoadSummary;
      await exited;
      return summary;
    },
  };
}

async function runLoad(options: ProxyLoadOptions, stopped: Promise<void>): Promise<LoadSummary> {
  const agent = new Agent({ keepAlive: true, ca: options.ca, maxSockets: options.get.loops + options.post.refreshTokens.length });
  const startedAt = performance.now();
  let stopping = false;
  void stopped.then(() => (stopping = true));
  const failures: LoadFailure[] = [];
  const counts = { GET: { sent: 0, outcomes: {} as Record<string, number> }, POST: { sent: 0, outcomes: {} as Record<string, number> } };
  let exhaustedPostLoops = 0;

  const note = (kind: 'GET' | 'POST', outcome: string, body: string) => {
    const { outcomes } = counts[kind];
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    if (outcome !== '200' && failures.length < 50) {
      failures.push({ kind, atMs: Math.round(performance.now() - startedAt), outcome, body: body.slice(0, 300) });
    }
  };
  const send = (method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: string) =>
    new Promise<{ outcome: string; body: string }>((done) => {
      const req = request(
        `${options.url}${path}`,
        { method, agent, headers: { ...headers, ...(body ? { 'content-length': Buffer.byteLength(body) } : {}) }, timeout: 60_000 },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => done({ outcome: String(res.statusCode), body: text }));
          res.on('error', (err: NodeJS.ErrnoException) => done({ outcome: err.code ?? err.message, body: text }));
        },
      );
      req.on('timeout', () => req.destroy(Object.assign(new Error('no answer in 60 s'), { code: 'TIMEOUT' })));
      req.on('error', (err: NodeJS.ErrnoException) => done({ outcome: err.code ?? err.message, body: '' }));
      req.end(body);
    });

  /** Waits out the rest of a loop's interval that began at `began`. */
  const pace = (began: number, everyMs: number) => new Promise((r) => setTimeout(r, Math.max(0, began + everyMs - performance.now())));
  const getLoop = async () => {
    while (!stopping) {
      const began = performance.now();
      counts.GET.sent += 1;
      const { outcome, body } = await send('GET', options.get.path, { 'x-api-key': options.get.apiKey });
      note('GET', outcome, body);
      await pace(began, options.get.everyMs);
    }
  };
  const postLoop = async (tokens: readonly string[]) => {
    const spares = [...tokens];
    let token = spares.shift();
    // As a client would: after an error it sends the same refresh token again, and only a refusal
    // (400: the token was used, so its grant is revoked) sends it on to a grant of its own.
    const nextAfterFailure = (outcome: string) => (outcome === '400' ? spares.shift() : token);
    while (!stopping && token !== undefined) {
      const began = performance.now();
      counts.POST.sent += 1;
      const body = new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: token,
        client_id: options.post.clientId,
        client_secret: options.post.clientSecret,
      }).toString();
      const answer = await send('POST', '/v1/oauth/token', { 'content-type': 'application/x-www-form-urlencoded' }, body);
      note('POST', answer.outcome, answer.body);
      token =
        answer.outcome === '200' ? (JSON.parse(answer.body) as { refresh_token: string }).refresh_token : nextAfterFailure(answer.outcome);
      await pace(began, options.post.everyMs);
    }
    if (token === undefined) exhaustedPostLoops += 1;
  };

  await Promise.all([
    ...Array.from({ length: options.get.loops }, getLoop),
    ...options.post.refreshTokens.map((tokens) => postLoop(tokens)),
  ]);
  agent.destroy();
  return {
    durationMs: Math.round(performance.now() - startedAt),
    get: counts.GET,
    post: counts.POST,
    failures,
    exhaustedPostLoops,
  };
}

// Run as a script: the options on the first line of stdin; "started" once the loops run; the
// summary as one JSON line once stdin ends.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const lines = createInterface({ input: process.stdin });
  let stop: () => void = () => {};
  const stopped = new Promise<void>((done) => (stop = done));
  let options: ProxyLoadOptions | undefined;
  lines.on('line', (line) => {
    if (options) return;
    options = JSON.parse(line) as ProxyLoadOptions;
    const running = runLoad(options, stopped);
    process.stdout.write('started\n');
    running.then(
      (summary) => process.stdout.write(`${JSON.stringify(summary)}\n`),
      (err: unknown) => {
        process.stderr.write(String(err));
        process.exitCode = 1;
      },
    );
  });
  lines.on('close', () => stop());
}
