// The baseline: a bare Node http server answering the same bytes (and a bare 304).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const body = readFileSync(process.env['BARE_BODY_FILE'] ?? '');
const etag = process.env['BARE_ETAG'] ?? '"x"';
const server = createServer((req, res) => {
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, { ETag: etag, 'Cache-Control': 'private, no-cache' });
    res.end();
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', ETag: etag, 'Cache-Control': 'private, no-cache', 'Content-Length': body.length });
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
