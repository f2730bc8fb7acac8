// The authorization and userinfo servers under test, alone in their process: the real app.
// With BENCH_COUNT_COMMANDS=1 it also counts the database commands the driver sends, by command
// and collection, and answers them as JSON at COMMANDS_PATH (bench/signin-ops.ts): they include
// what the models' telemetry does not see (the version clock's reads, deletes by filter).
import type { RequestListener } from 'node:http';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/data/database.js';
import { batchedDestination, createLogger } from '../src/logger.js';
import { COMMANDS_PATH, listenOnLoopback, serve } from './serve.js';

/** The collections whose keys name their records' kinds (src/data/models/oauth-record.model.ts). */
const OAUTH_RECORD_COLLECTIONS: ReadonlySet<string> = new Set(['oauth_records', 'oauth_interactions']);

// Listen first: the issuer (AUTH_URL defaults to http://HOST:PORT) must be the real address.
const { server, url } = await listenOnLoopback();
const port = new URL(url).port;

const config = loadConfig({ ...process.env, NODE_ENV: 'test', NEIS_SYNC_ENABLED: 'false', HOST: '127.0.0.1', PORT: port });
const counting = process.env['BENCH_COUNT_COMMANDS'] === '1';
const db = await openDatabase(config.mongodbUri ?? '', { monitorCommands: counting });
// Access logs are written as in production (info), to /dev/null rather than a terminal.
const logger = createLogger('info', batchedDestination('/dev/null'));
const app = await createApp({ config, db, logger }, { surfaces: ['auth', 'userinfo'] });
serve(server, url, counting ? countingCommands(app.callback()) : app.callback(), () => app.close().then(() => db.close()));

/** Counts every command the driver sends and answers the counts at COMMANDS_PATH; the app answers the rest. */
function countingCommands(handle: ReturnType<typeof app.callback>): RequestListener {
  const commands: Record<string, number> = {};
  db.client.on('commandStarted', (event) => {
    const command = event.command as Record<string, unknown>;
    const target = command[event.commandName];
    const collection = typeof target === 'string' ? target : '-';
    const kinds = OAUTH_RECORD_COLLECTIONS.has(collection) ? recordKinds(command) : '';
    const name = `${event.commandName} ${collection}${kinds ? ` ${kinds}` : ''}`;
    commands[name] = (commands[name] ?? 0) + 1;
  });
  return (req, res) => {
    if (req.url !== COMMANDS_PATH) {
      void handle(req, res);
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(commands));
  };
}

/**
 * The kinds of OAuth records a command reads or writes, from their keys (src/data/accounts/oauth-records.ts:
 * `Kind:id`, `Kind#field:value` for a lookup pointer, `...#claim` for a claim), e.g. `Grant` or
 * `AuthorizationCode#claim+RefreshToken` for a batch; empty when the command names no key.
 */
function recordKinds(command: Record<string, unknown>): string {
  const { documents, updates, deletes, filter } = command;
  const queried = (list: unknown) => (Array.isArray(list) ? list.map((entry: unknown) => field(entry, 'q')) : []);
  const targets = Array.isArray(documents) ? documents : [...queried(updates), ...queried(deletes), filter];
  return targets
    .map((target) => field(target, '_id'))
    .filter((id): id is string => typeof id === 'string')
    .map((id) => `${/^[^:]*/.exec(id)?.[0] ?? ''}${id.endsWith('#claim') ? '#claim' : ''}`)
    .join('+');
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}
