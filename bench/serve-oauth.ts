// The authorization and userinfo servers under test, alone in their process: the real app.
import { createServer } from 'node:http';
import { destination } from 'pino';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/data/database.js';
import { createLogger } from '../src/logger.js';

// Listen first: the issuer (AUTH_URL defaults to http://HOST:PORT) must be the real address.
const server = createServer();
server.keepAliveTimeout = 5000;
await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
const address = server.address();
const port = typeof address === 'object' && address ? address.port : 0;

const config = loadConfig({ ...process.env, NODE_ENV: 'test', NEIS_SYNC_ENABLED: 'false', HOST: '127.0.0.1', PORT: String(port) });
const db = await openDatabase(config.mongodbUri ?? '');
// Access logs are written as in production (info), to /dev/null rather than a terminal.
const logger = createLogger('info', destination({ dest: '/dev/null', sync: false, minLength: 4096 }));
const app = await createApp({ config, db, logger }, { surfaces: ['auth', 'userinfo'] });
server.on('request', app.callback());
console.log(`listening http://127.0.0.1:${port}`);

process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void app.close().then(() => db.close()).then(() => process.exit(0));
});
