import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { closeServer, createApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import type { Database } from '../../src/data/database.js';
import type { SurfaceName } from '../../src/surfaces/types.js';
import type { StatusBoard } from '../../src/data/operations/status.js';
import { createLogger } from '../../src/logger.js';
import { createTestDatabase } from './database.js';

export interface TestApp {
  readonly app: App;
  readonly db: Database;
  readonly config: Config;
  /** Base address of the real HTTP listener, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  readonly server: Server;
  /** Every log line the app wrote, parsed. */
  readonly logs: Record<string, unknown>[];
  /** The raw log text (for "no secret in the logs" checks). */
  logText(): string;
  /** fetch() against the listener; `path` is relative to `url`. */
  request(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment overrides (strings, as the real environment has them). */
  env?: Record<string, string>;
  /** An existing database to use (else a fresh one of its own, dropped on close). */
  db?: Database;
  redis?: Redis;
  now?: () => Date;
  surfaces?: readonly SurfaceName[];
  /** Listen on this port (e.g. to build AUTH_URL before the app exists); default: any free port. */
  port?: number;
  /** The status page's board, for a test that records its minutes itself (default: the app's own). */
  status?: StatusBoard;
}

/** Builds the real app on a real listener, against a real database, with logs captured. */
export async function buildTestApp(name: string, options: TestAppOptions = {}): Promise<TestApp> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const ownDb = options.db ? undefined : await createTestDatabase(name);
  const db = options.db ?? ownDb;
  if (!db) throw new Error('no database');
  const server = createServer();
  await new Promise<void>((done) => server.listen(options.port ?? 0, '127.0.0.1', () => done()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    PORT: String(port),
    NEIS_SYNC_ENABLED: 'false',
    ...options.env,
  });
  const logger = createLogger(config.logLevel ?? 'info', sink);
  const app = await createApp(
    {
      config,
      db,
      logger,
      ...(options.redis ? { redis: options.redis } : {}),
      ...(options.now ? { now: options.now } : {}),
      ...(options.status ? { status: options.status } : {}),
    },
    options.surfaces ? { surfaces: options.surfaces } : {},
  );
  server.on('request', app.callback());
  return {
    app,
    db,
    config,
    url,
    server,
    get logs() {
      return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    logText: () => lines.join('\n'),
    request: (path, init) => fetch(`${url}${path}`, init),
    async close() {
      await closeServer(server, 100);
      await app.close();
      await ownDb?.drop();
    },
  };
}
