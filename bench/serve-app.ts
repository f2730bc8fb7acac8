// The service under test, alone in its process: the real app on a real listener.
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/data/database.js';
import { batchedDestination, createLogger } from '../src/logger.js';
import { listenOnLoopback, serve } from './serve.js';

const config = loadConfig({ ...process.env, NODE_ENV: 'test', NEIS_SYNC_ENABLED: 'false' });
const db = await openDatabase(config.mongodbUri ?? '');
// Access logs are written as in production (info), to /dev/null rather than a terminal.
const logger = createLogger('info', batchedDestination('/dev/null'));
const app = await createApp({ config, db, logger }, { surfaces: ['data'] });
const { server, url } = await listenOnLoopback();
serve(server, url, app.callback(), () => app.close().then(() => db.close()));
