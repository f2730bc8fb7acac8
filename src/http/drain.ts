import { ServerResponse, type IncomingMessage, type OutgoingHttpHeaders, type Server } from 'node:http';
import { Server as NetServer } from 'node:net';

/** What the readiness probe reads (src/http/probes.ts): whether this process is on its way out. */
export interface DrainState {
  readonly draining: boolean;
}

/**
 * How long the server keeps an idle connection open (`server.keepAliveTimeout`). A proxy must
 * close its idle connections sooner (nginx's upstream `keepalive_timeout 4s`,
 * deploy/nginx/campus.conf), or it may send a request on one as the server closes it.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 5000;

/** In a hurry, how often connections that became idle are closed. */
const SWEEP_MS = 50;

/**
 * How a process leaves its pool without losing a request (src/main.ts runs it on SIGTERM and
 * SIGINT; docs/operations.md, "11. Restarts and rolling upgrades"):
 * 1. `start()`: `/readyz` answers 503, so a balancer that polls it sends no more; every request
 *    is still served as before, keep-alive included, for the drain (`wait`). A proxy that checks
 *    passively only (nginx) keeps sending here meanwhile: the drain is the time it needs to take
 *    the other process, restarted a moment ago, back (its fail_timeout is shorter).
 * 2. `close()`: the listener closes, so a new connection is refused and the proxy tries the other
 *    process (safe for any request: none was sent). From then on every answer carries
 *    `Connection: close`, so that each connection ends after the answer to its request in flight
 *    or to the next one the proxy sends on it; a connection left idle is closed by the proxy
 *    (nginx's upstream keepalive_timeout, shorter than Node's) or by Node's keep-alive timeout.
 *    No connection is ever closed here while a request may be on its way on it: nginx does not
 *    resend a POST it had written on a connection that then closed, it answers 502.
 * Answers during the drain keep their connections open on purpose: closing them would make
 * the proxy open a new connection for every request, and at the moment the listener closes the
 * kernel resets the connections it had accepted and Node had not yet taken (a POST among them is
 * a 502; docs/benchmarks.md, "Restarts behind nginx", measured both).
 * `hurry()` (a second signal, or a drain of 0 s: development and tests) ends the drain at once
 * and closes every idle connection at once, as it becomes idle.
 */
export class Drain implements DrainState {
  #draining = false;
  #closing = false;
  #hurried = false;
  #onHurry: (() => void)[] = [];

  get draining(): boolean {
    return this.#draining;
  }

  start(): void {
    this.#draining = true;
  }

  hurry(): void {
    this.#hurried = true;
    for (const act of this.#onHurry.splice(0)) act();
  }

  /** Waits `ms`, or until `hurry()`; a wait of 0 is a hurry. */
  async wait(ms: number): Promise<void> {
    if (ms === 0) this.hurry();
    if (this.#hurried) return;
    await new Promise<void>((done) => {
      const timer = setTimeout(done, ms);
      this.#onHurry.push(() => {
        clearTimeout(timer);
        done();
      });
    });
  }

  /**
   * Stops accepting and resolves once every connection has ended; after `timeoutMs` those still
   * open are closed, requests in flight or not. The listener is closed by net.Server's `close`,
   * not http.Server's, which would also close every idle connection at once: a connection the
   * proxy is reusing right then, or one accepted a moment ago whose request Node has not read yet.
   */
  async close(server: Server, timeoutMs: number): Promise<void> {
    this.#closing = true;
    const closed = new Promise<void>((done) => NetServer.prototype.close.call(server, () => done()));
    let sweep: NodeJS.Timeout | undefined;
    let ended = false;
    const closeIdle = () => {
      if (ended) return;
      server.closeIdleConnections();
      sweep = setInterval(() => server.closeIdleConnections(), SWEEP_MS);
    };
    if (this.#hurried) closeIdle();
    else this.#onHurry.push(closeIdle);
    const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
    try {
      await closed;
    } finally {
      ended = true;
      clearInterval(sweep);
      clearTimeout(timer);
    }
  }

  /**
   * The server's response class (`createServer({ ServerResponse })`): once the listener is
   * closed, `Connection: close` is added as an answer's head is written, so that it reaches the
   * answers of requests already in flight too, at no cost before. Node writes every head through
   * `writeHead` (an implicit head too).
   */
  responseClass(): typeof ServerResponse<IncomingMessage> {
    const closing = () => this.#closing;
    return class ClosingResponse extends ServerResponse<IncomingMessage> {
      override writeHead(statusCode: number, ...rest: unknown[]): this {
        if (closing() && !this.headersSent) this.setHeader('Connection', 'close');
        return super.writeHead(statusCode, ...(rest as [string | undefined, OutgoingHttpHeaders | undefined]));
      }
    };
  }
}
