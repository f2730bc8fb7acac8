import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a webhook receiver got. */
export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The status it was answered with. */
  readonly status: number;
}

/**
 * A real webhook receiver on a local port (for the webhook delivery tests): it answers each request with the
 * next status of `statuses` (then 200), records what it got, and can be closed and opened again
 * on the same port (a receiver that was down).
 */
export class TestReceiver {
  readonly received: Received[] = [];
  private server: Server | undefined;
  private port = 0;
  /** Requests held without an answer (hold = true), to kill a sender mid-delivery. */
  hold = false;
  /** Requests that arrived, answered or held. */
  arrived = 0;

  constructor(private readonly statuses: number[] = []) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async open(): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.arrived += 1;
        if (this.hold) return;
        const status = this.statuses.shift() ?? 200;
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status });
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : `failing with ${status}`);
      });
    });
    await new Promise<void>((done) => server.listen(this.port, '127.0.0.1', () => done()));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  }

  /** The requests answered 2xx. */
  get delivered(): Received[] {
    return this.received.filter((r) => r.status < 300);
  }
}

/** Waits until `check` returns a value other than undefined/false (polling), or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 15_000,
  what = 'the condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}
