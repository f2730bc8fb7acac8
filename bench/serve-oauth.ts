// The authorization and userinfo servers under test, alone in their process: the real app.
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/data/database.js';
import { batchedDestination, createLogger } from '../src/logger.js';
import { listenOnLoopback, serve } from './serve.js';

// Listen first: the issuer (AUTH_URL defaults to http://HOST:PORT) must be the real address.
const { server, url } = await listenOnLoopback();
const port = new URL(url).port;

const config = loadConfig({ ...process.env, NODE_ENV: 'test', NEIS_SYNC_ENABLED: 'false', HOST: '127.0.0.1', PORT: port });
const db = await openDatabase(config.mongodbUri ?? '');
// Access logs are written as in production (info), to /dev/null rather than a terminal.
const logger = createLogger('info', batchedDestination('/dev/null'));
const app = await createApp({ config, db, logger }, { surfaces: ['auth', 'userinfo'] });
serve(server, url, app.callback(), () => app.close().then(() => db.close()));
