import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../../logger.js';
import { VERSION_KINDS, type DataVersions, type VersionChange } from './versions.js';

/** What travels on the channel: the change (src/data/platform/versions.ts), and which process made it. */
interface Announcement extends VersionChange {
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
 * makes is published on the database's channel, and every bump another process publishes is
 * heard here at once (DataVersions.hear): a data change drops this process's cached stamp, so its
 * next request reads the new version (new answers, new ETags) instead of waiting out the clock's
 * one-second cache; a change of a key, grant, account or client drops what it names.
 *
 * Redis is a shortcut, not the source of truth: the version lives in the database and the
 * one-second re-read stays, so a message lost while Redis is down delays a change by at most a
 * second; on every (re)connection everything remembered is dropped, for what was missed meanwhile.
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
    if (!heard) versions.invalidate();
    else if (heard.from !== self) versions.hear(heard);
  });
  // While Redis is down the SUBSCRIBE waits in the queue (and start-up does not wait for it).
  const connected = await subscriber.connect().then(
    () => true,
    () => false,
  );
  const subscribed = subscriber.subscribe(channel).catch(() => undefined);
  if (connected) await subscribed;

  versions.announceWith({
    async announce(change) {
      const announcement: Announcement = { ...change, from: self };
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

/** An announcement, or undefined for a message this version cannot read (then everything is dropped). */
function parse(message: string): Announcement | undefined {
  try {
    const value = JSON.parse(message) as Partial<Record<keyof Announcement, unknown>> | null;
    const kind = VERSION_KINDS.find((known) => known === value?.kind);
    if (typeof value?.from !== 'string' || !kind) return undefined;
    const { targets, previous, version } = value;
    const targeted =
      Array.isArray(targets) &&
      targets.every((target) => typeof target === 'string') &&
      typeof previous === 'number' &&
      typeof version === 'number';
    return targeted ? { from: value.from, kind, targets: targets as string[], previous, version } : { from: value.from, kind };
  } catch {
    return undefined;
  }
}
