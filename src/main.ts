import { createServer, type Server } from 'node:http';
import { Redis } from 'ioredis';
import { closeServer, createApp, type App } from './app.js';
import type { Config } from './config/index.js';
import { BackupScheduler } from './data/operations/backup-schedule.js';
import type { Database } from './data/database.js';
import { Drain, KEEP_ALIVE_TIMEOUT_MS } from './http/drain.js';
import { migrate } from './data/migrations.js';
import { SchoolUnsettledError, settleSchool, watchForInterrupted } from './data/school/engine.js';
import { joinVersionBus, type VersionBus } from './data/platform/version-bus.js';
import { openDatabaseRuntime } from './data/runtime.js';
import type { SurfaceName } from './surfaces/types.js';
import type { Logger } from './logger.js';
import { refuseDemoCredentials } from './oauth/seed.js';
import { WebhookDelivery } from './events/delivery.js';
import { LogoutDelivery } from './events/logout-delivery.js';
import { LogoutNoticeStore } from './data/events/logout-notices.js';
import { logoutToken } from './oauth/backchannel-logout.js';
import { WebhookStore, WEBHOOK_SECRET_PURPOSE } from './data/events/webhooks.js';
import { loadOAuthKeys } from './oauth/signing-keys.js';
import { createMailer } from './oauth/mail.js';
import { CookieSealer } from './surfaces/web/seal.js';

/** Creates the Redis client for shared rate limits; failures are logged, never fatal. */
export function openRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    // Fail fast while disconnected so the in-memory insurance limiter answers instead.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  let lastReport = 0;
  redis.on('error', (err: Error) => {
    if (Date.now() - lastReport > 30000) {
      lastReport = Date.now();
      logger.warn({ err: { message: err.message } }, 'redis unavailable; rate limits fall back to this instance');
    }
  });
  return redis;
}

export interface RunningService {
  readonly server: Server;
  readonly url: string;
  /** Drains, then stops (see startService); called again, it hurries: no more drain, idle connections closed at once. */
  stop(): Promise<void>;
}

/**
 * The composition root: connect, migrate the schema (one instance migrates under the lock, the
 * others wait; a database newer than the code stops the start-up), build the app, listen, start
 * the optional daily backup. Stopping (SIGTERM/SIGINT: src/cli/commands/serve.ts) takes a process
 * out of its pool without losing a request (src/http/drain.ts): for SHUTDOWN_DRAIN_SECONDS
 * `/readyz` answers 503 while every request is still served; then it stops accepting, lets each
 * connection end after its answer (for SHUTDOWN_TIMEOUT_SECONDS at most), and stops the workers
 * (webhook delivery, the NEIS scheduler, the backup schedule, each releasing its leases) before
 * closing the database.
 */
export async function startService(
  config: Config,
  logger: Logger,
  options: { surfaces?: readonly SurfaceName[] | undefined; progress?: (line: string) => void } = {},
): Promise<RunningService> {
  // Long work (the embedded database's first build, migrations) shows its progress: as log lines,
  // or as the command's own lines when it logs nothing (src/cli/commands/serve.ts).
  const progress = options.progress ?? ((line: string) => logger.info(line));
  const { surfaces } = options;
  const runtime = await openDatabaseRuntime(config, progress, { waitForDatabase: true });
  const redis = config.redisUrl ? openRedis(config.redisUrl, logger) : undefined;
  let app: App | undefined;
  const backups = config.backup.dir
    ? new BackupScheduler({
        db: runtime.db,
        logger,
        dir: config.backup.dir,
        time: config.backup.time,
        timeZone: config.schoolTimeZone,
        keep: config.backup.keep,
        key: config.backupKey,
      })
    : undefined;
  const drain = new Drain();
  const server = createServer({ ServerResponse: drain.responseClass() });
  let stopWatching = () => {};
  let bus: VersionBus | undefined;
  let webhooks: { delivery: WebhookDelivery; close(): Promise<void> } | undefined;
  try {
    await migrate(runtime.db, { progress });
    // The demo key, clients and account are published in the README and docs/oauth.md: never serve them for real.
    if (config.isProduction) await refuseDemoCredentials(runtime.db);
    await ensureIndexes(runtime.db, logger);
    // A school change its writer left half-applied (a kill, a database that went away) is rolled
    // back before any request is answered (docs/school-writes.md); readers check again later.
    // A living writer's change is not waited for past a few seconds: readers wait for it themselves.
    const recovered = await settleSchool(runtime.db, 5000, 'at start-up').catch((err: unknown) => {
      if (err instanceof SchoolUnsettledError) return [];
      throw err;
    });
    if (recovered.length > 0) logger.warn({ batches: recovered }, `rolled back ${recovered.length} interrupted change(s) to school data`);
    // Processes sharing the database hear each other's data changes and revocations at once
    // through Redis (src/data/platform/version-bus.ts); without Redis, within the clock's second.
    if (redis) bus = await joinVersionBus(runtime.db.versions, redis, runtime.db.name, logger);
    // Every `campus serve` records the status page's checks each minute (src/data/operations/status.ts).
    app = await createApp(
      { config, db: runtime.db, logger, ...(redis ? { redis } : {}) },
      { drain, ...(surfaces ? { surfaces } : {}), recordStatus: true },
    );
    server.on('request', app.callback());
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen(config.port, config.host, () => done());
    });
    await backups?.start();
    stopWatching = watchForInterrupted(runtime.db, (batches) =>
      logger.warn({ batches }, `rolled back ${batches.length} interrupted change(s) to school data`),
    );
    webhooks = await startWebhookDelivery(config, runtime.db, logger);
  } catch (err) {
    // Leave nothing running (the embedded database is a child process) when start-up fails.
    if (server.listening) await closeServer(server);
    await webhooks?.close();
    await backups?.stop();
    await app?.close();
    await bus?.close();
    redis?.disconnect();
    await runtime.close();
    throw err;
  }
  const running = app;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    if (stopping) {
      drain.hurry();
      return stopping;
    }
    return (stopping = (async () => {
      const { drainMs, timeoutMs } = config.shutdown;
      drain.start();
      if (drainMs > 0) {
        progress(
          `stopping: /readyz answers 503 while this process serves ${drainMs / 1000} s more; a second Ctrl+C or SIGTERM ends the wait`,
        );
      }
      await drain.wait(drainMs);
      logger.info('stopping: no new connections; finishing requests in flight');
      await drain.close(server, timeoutMs);
      stopWatching();
      await webhooks?.close();
      await backups?.stop();
      await running.close();
      await bus?.close();
      redis?.disconnect();
      await runtime.close();
      logger.info('stopped');
    })());
  };
  return { server, url, stop };
}

/**
 * Webhook delivery (src/events/delivery.ts): every `campus serve` runs it; leases share the
 * webhooks among the processes. Its mailer tells owners of failing webhooks. The same worker sends
 * apps their back-channel logout tokens (src/events/logout-delivery.ts), signed with the ID tokens' key.
 */
async function startWebhookDelivery(
  config: Config,
  db: Database,
  logger: Logger,
): Promise<{ delivery: WebhookDelivery; close(): Promise<void> }> {
  const keys = await loadOAuthKeys(config, db);
  const mailer = createMailer(config, logger);
  const policy = { production: config.isProduction, allowPrivate: config.webhooks.allowPrivate };
  const logoutNotices = new LogoutNoticeStore(db);
  void logoutNotices.ensureIndexes().catch(() => {});
  const delivery = new WebhookDelivery({
    db,
    store: new WebhookStore(db, new CookieSealer(keys.cookieKeys, WEBHOOK_SECRET_PURPOSE), config.policy),
    policy,
    retryScheduleMs: config.webhooks.retryScheduleMs,
    logouts: new LogoutDelivery({
      db,
      store: logoutNotices,
      policy,
      retryScheduleMs: config.webhooks.retryScheduleMs,
      logger,
      sign: (notice, at) => logoutToken(keys, config.urls.auth, notice, at),
    }),
    logger,
    sendMail: (mail) => mailer.send(mail),
    consoleUrl: `${config.urls.auth}/console/webhooks`,
  });
  delivery.start();
  return {
    delivery,
    close: async () => {
      await delivery.stop();
      await mailer.close();
    },
  };
}

/** Creates indexes at start; a failure is logged, not fatal (the data API answers 503 until it returns). */
async function ensureIndexes(db: Database, logger: Logger): Promise<void> {
  await db.ensureIndexes().catch((err: Error) => logger.warn({ err: { message: err.message } }, 'could not ensure indexes'));
}
