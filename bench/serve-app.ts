// The service under test, alone in its process: the real app on a real listener.
import { createServer } from 'node:http';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/data/database.js';
import { batchedDestination, createLogger } from '../src/logger.js';

const config = loadConfig({ ...process.env, NODE_ENV: 'test', NEIS_SYNC_ENABLED: 'false' });
const db = await openDatabase(config.mongodbUri ?? '');
// Access logs are written as in production (info), to /dev/null rather than a terminal.
const logger = createLogger('info', batchedDestination('/dev/null'));
const app = await createApp({ config, db, logger }, { surfaces: ['data'] });
const server = createServer(app.callback());
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void app.close().then(() => db.close()).then(() => process.exit(0));
});
