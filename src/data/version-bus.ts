import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';
import type { DataVersions, VersionKind } from './versions.js';

/** What travels on the channel: which version moved, and which process moved it. */
interface Announcement {
  readonly kind: VersionKind;
  readonly from: string;
}

/** How long a bump waits for Redis to take its announcement (Redis down: the clock's re-read covers it). */
const ANNOUNCE_WAIT_MS = 250;

/** The channel of one database's version clock (several databases may share a Redis). */
export function versionChannel(databaseName: string): string {
  return `campus:versions:${databaseName}`;
}

export interface VersionBus {
  close(): Promise<void>;
}

/**
 * Joins a process's version clock to the others' through Redis pub/sub: every bump this process
 * makes is published on the database's channel, and every bump another process publishes drops
 * this process's cached stamp at once, so its next request reads the new version (new answers,
 * new ETags) instead of waiting out the clock's one-second cache.
 *
 * Redis is a shortcut, not the source of truth: the version lives in the database and the
 * one-second re-read stays, so a message lost while Redis is down delays a change by at most a
 * second; on every (re)connection the cached stamp is dropped too, for what was missed meanwhile.
 */
export async function joinVersionBus(versions: DataVersions, redis: Redis, databaseName: string, logger: Logger): Promise<VersionBus> {
  const channel = versionChannel(databaseName);
  const self = randomUUID();
  // A subscribed connection can do nothing else; this one may queue its SUBSCRIBE until Redis answers.
  const subscriber = redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, lazyConnect: true });
  let lastReport = 0;
  subscriber.on('error', (err: Error) => {
    if (Date.now() - lastReport > 30000) {
      lastReport = Date.now();
      logger.warn({ err: { message: err.message } }, 'redis unavailable; data changes of other instances show within a second');
    }
  });
  subscriber.on('ready', () => versions.invalidate());
  subscriber.on('message', (from: string, message: string) => {
    if (from !== channel) return;
    const heard = parse(message);
    if (heard && heard.from !== self) versions.invalidate();
  });
  // While Redis is down the SUBSCRIBE waits in the queue (and start-up does not wait for it).
  const connected = await subscriber.connect().then(
    () => true,
    () => false,
  );
  const subscribed = subscriber.subscribe(channel).catch(() => undefined);
  if (connected) await subscribed;

  versions.announceWith({
    async announce(kind) {
      const announcement: Announcement = { kind, from: self };
      // Redis answers PUBLISH after it has passed the message on to every subscriber, so waiting
      // for it orders the announcement before the writer's own answer. A bump must not fail or
      // wait long because Redis does: past ANNOUNCE_WAIT_MS the clock's re-read covers it.
      const published = redis.publish(channel, JSON.stringify(announcement)).then(
        () => undefined,
        () => undefined,
      );
      let timer: NodeJS.Timeout | undefined;
      const bounded = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ANNOUNCE_WAIT_MS);
        timer.unref();
      });
      await Promise.race([published, bounded]);
      clearTimeout(timer);
    },
  });

  return {
    async close() {
      versions.announceWith(undefined);
      subscriber.disconnect();
    },
  };
}

function parse(message: string): Announcement | undefined {
  try {
    const value: unknown = JSON.parse(message);
    if (typeof value === 'object' && value !== null && 'from' in value && typeof value.from === 'string') {
      return value as Announcement;
    }
  } catch {
    // Not ours: ignored.
  }
  return undefined;
}
