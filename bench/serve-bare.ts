// The baseline: a bare Node http server answering the same bytes as the service: the same
// status, headers and body for the 200, and the same headers for the 304.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

interface Recorded {
  /** Headers of the service's 200 and 304 answers, as it sent them (minus Date, Connection, Keep-Alive). */
  readonly ok: Record<string, string>;
  readonly notModified: Record<string, string>;
}

const body = readFileSync(process.env['BARE_BODY_FILE'] ?? '');
const recorded = JSON.parse(readFileSync(process.env['BARE_HEADERS_FILE'] ?? '', 'utf8')) as Recorded;
const etag = recorded.ok['etag'];
const server = createServer((req, res) => {
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, recorded.notModified);
    res.end();
    return;
  }
  res.writeHead(200, recorded.ok);
  res.end(body);
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
