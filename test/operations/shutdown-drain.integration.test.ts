import { expect } from 'chai';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { serveDemo, type ServedDemo } from '../helpers/serve.js';
import { DEMO_API_KEY } from '../../src/data/school/demo.js';

/**
 * How a real `campus serve` stops (src/main.ts, src/http/drain.ts): on SIGTERM `/readyz` answers
 * 503 at once while everything else is still served for SHUTDOWN_DRAIN_SECONDS; then new
 * connections are refused, a kept-alive connection still carries the request sent on it (its
 * answer closing it), a request in flight is answered, and the process exits 0. A second signal
 * ends the drain at once.
 */

const DRAIN_SECONDS = 3;

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Whether it went on a connection kept alive from an earlier request. */
  readonly reusedSocket: boolean;
}

function get(url: string, path: string, agent: Agent, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { agent, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, reusedSocket: req.reusedSocket }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Whether a new connection to `port` is accepted. */
function accepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

function portOf(served: ServedDemo): number {
  return Number(new URL(served.url).port);
}

/** A GraphQL POST whose body is sent only in part: a request in flight, inside the server, until `finish()`. */
async function halfSentPost(port: number): Promise<{ answer(): string; finish(): Promise<string> }> {
  const body = JSON.stringify({ query: '{ __typename }' });
  const socket: Socket = connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  let response = '';
  socket.on('data', (chunk: Buffer) => (response += chunk.toString()));
  const ended = new Promise<void>((done) => socket.once('close', () => done()));
  socket.write(
    `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-API-KEY: ${DEMO_API_KEY}\r\n` +
      `Content-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
  );
  return {
    answer: () => response,
    async finish() {
      socket.write(body.slice(5));
      await ended;
      return response;
    },
  };
}

describe('operations: campus serve drains on SIGTERM and SIGINT', function () {
  this.timeout(120_000);

  it(`answers /readyz 503 at once, serves everything else for ${DRAIN_SECONDS} s, then refuses new connections, answers the requests in flight and on kept-alive connections, and exits 0`, async () => {
    const served = await serveDemo('drain', { SHUTDOWN_DRAIN_SECONDS: String(DRAIN_SECONDS) });
    const port = portOf(served);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const key = { 'X-API-KEY': DEMO_API_KEY };
    try {
      expect((await get(served.url, '/readyz', agent)).status).to.equal(200);
      const inFlight = await halfSentPost(port);
      await new Promise((r) => setTimeout(r, 200));
      expect(inFlight.answer(), 'the server waits for the rest of the body').to.equal('');

      const signalled = Date.now();
      const exited = served.process.stop();
      let ready = await get(served.url, '/readyz', agent);
      while (ready.status === 200 && Date.now() - signalled < 2000) ready = await get(served.url, '/readyz', agent);
      const notReadyAfter = Date.now() - signalled;
      expect(ready.status).to.equal(503);
      expect(notReadyAfter, 'ms from SIGTERM to the first 503').to.be.lessThan(1000);
      expect(ready.headers['cache-control']).to.equal('no-store');
      expect(JSON.parse(ready.body)).to.deep.equal({
        status: 'SERVICE_UNAVAILABLE',
        code: 503,
        message: 'Not ready: this process is stopping.',
        data: null,
      });

      // The drain: everything but readiness is served as before, on the same kept-alive connection.
      const health = await get(served.url, '/v1/health', agent);
      expect(health.status).to.equal(200);
      expect((JSON.parse(health.body) as { status: string }).status).to.equal('OK');
      const students = await get(served.url, '/v1/students?size=1', agent, key);
      expect(students.status, students.body).to.equal(200);
      expect((JSON.parse(students.body) as { data: { students: unknown[] } }).data.students).to.have.length(1);
      expect(students.reusedSocket).to.equal(true);
      expect(students.headers.connection).to.equal('keep-alive');
      expect((await get(served.url, '/livez', agent)).status).to.equal(200);
      expect(await accepts(port), 'a new connection during the drain').to.equal(true);
      expect(served.process.stderr()).to.include(`stopping: /readyz answers 503 while this process serves ${DRAIN_SECONDS} s more`);

      // After the drain no new connection is accepted.
      while ((await accepts(port)) && Date.now() - signalled < DRAIN_SECONDS * 1000 + 5000) await new Promise((r) => setTimeout(r, 50));
      const refusedAfter = Date.now() - signalled;
      expect(await accepts(port)).to.equal(false);
      expect(refusedAfter, 'ms from SIGTERM to the first refused connection').to.be.at.least(DRAIN_SECONDS * 1000);

      // A request on the connection kept alive is still answered, and its answer closes it.
      const late = await get(served.url, '/v1/students?size=1', agent, key);
      expect(late.status, late.body).to.equal(200);
      expect(late.reusedSocket).to.equal(true);
      expect(late.headers.connection).to.equal('close');

      // The request in flight since before the signal is answered in full, closing its connection.
      const answer = await inFlight.finish();
      expect(answer).to.match(/^HTTP\/1\.1 200 OK\r\n/);
      expect(answer).to.match(/\r\nConnection: close\r\n/i);
      expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).to.equal('{"data":{"__typename":"Query"}}\n');

      expect(await exited).to.equal(0);
    } finally {
      agent.destroy();
      await served.stop();
    }
  });

  it('a second signal ends the drain at once (Ctrl+C twice) and the process exits 0', async () => {
    const served = await serveDemo('drain_hurry', { SHUTDOWN_DRAIN_SECONDS: '120' });
    const port = portOf(served);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const exited = new Promise<number | null>((done) => served.process.child.once('exit', (code) => done(code)));
      // An idle kept-alive connection, which a hurried stop closes instead of waiting for it.
      expect((await get(served.url, '/v1/health', agent)).status).to.equal(200);
      served.process.child.kill('SIGINT');
      let ready = await get(served.url, '/readyz', agent);
      while (ready.status === 200) ready = await get(served.url, '/readyz', agent);
      expect(ready.status).to.equal(503);
      expect(await accepts(port)).to.equal(true);

      const hurried = Date.now();
      served.process.child.kill('SIGINT');
      expect(await exited).to.equal(0);
      expect(Date.now() - hurried, 'ms from the second signal to the exit').to.be.lessThan(10_000);
    } finally {
      agent.destroy();
      await served.stop();
    }
  });
});
