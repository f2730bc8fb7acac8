// What every bench server process shares: a free loopback port, the line bench/lib.ts waits
// for, and a clean stop on SIGTERM.
import { createServer, type RequestListener, type Server } from 'node:http';

/** Where bench/serve-oauth.ts answers its database command counts (with BENCH_COUNT_COMMANDS=1). */
export const COMMANDS_PATH = '/bench/database-commands';

/** Listens on a free loopback port; the URL is known before a handler is attached (issuers need it). */
export async function listenOnLoopback(): Promise<{ server: Server; url: string }> {
  const server = createServer();
  server.keepAliveTimeout = 5000;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  const address = server.address();
  return { server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
}

/** Attaches the handler, announces the URL, and on SIGTERM closes the server, then `cleanup`. */
export function serve(server: Server, url: string, listener: RequestListener, cleanup: () => Promise<void> = async () => {}): void {
  server.on('request', listener);
  console.log(`listening ${url}`);
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void cleanup().then(() => process.exit(0));
  });
}
