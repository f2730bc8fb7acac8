import { constants } from 'node:fs';
import { access, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { nextDailyRun, todayIn } from '../../calendar.js';
import type { Logger } from '../../logger.js';
import { writeBackup } from './backup.js';
import type { Database } from '../database.js';
import { isDuplicateKey } from '../platform/errors.js';
import { MisconfiguredError } from '../../errors/index.js';

/** setTimeout's longest delay; a longer wait is split. */
const MAX_TIMER_MS = 2_147_483_647;
const FILE = /^campus-(\d{8}-\d{6})\.jsonl\.gz$/;
const MARKER_PREFIX = 'scheduled-backup:';
/** The day markers in `meta` are kept this long (they only need to outlive the day). */
const MARKER_KEEP_MS = 30 * 24 * 3600 * 1000;

export interface BackupScheduleOptions {
  readonly db: Database;
  readonly logger: Logger;
  /** Where archives go; the newest `keep` are kept. */
  readonly dir: string;
  /** HH:MM, in `timeZone`. */
  readonly time: string;
  readonly timeZone: string;
  readonly keep: number;
  /** BACKUP_KEY: the archives' manifests are signed with it. */
  readonly key?: string | undefined;
  readonly now?: () => Date;
}

/**
 * The optional daily backup of `campus serve` (BACKUP_DIR, BACKUP_TIME, BACKUP_KEEP). When several
 * instances share the database, the first to claim the day's run (a unique document in `meta`)
 * writes it and the others skip.
 */
export class BackupScheduler {
  private timer: NodeJS.Timeout | undefined;
  private nextAt: Date | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly options: BackupScheduleOptions) {}

  /**
   * Checks that the directory can be written (created 0700 if missing), so a wrong BACKUP_DIR
   * stops the start-up with one line instead of failing at night; then schedules the first run.
   */
  async start(): Promise<void> {
    const { dir } = this.options;
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await access(dir, constants.W_OK);
    } catch (err) {
      throw new MisconfiguredError(`BACKUP_DIR: cannot write to ${dir} (${(err as Error).message}).`, err);
    }
    this.schedule();
  }

  /** When the next backup is due (it is logged; /v1/health says nothing about operations). */
  nextRunAt(): Date | undefined {
    return this.nextAt;
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Takes one backup now if no instance took today's, then removes all but the newest `keep`. */
  async runOnce(): Promise<string | undefined> {
    const { db, dir, logger, timeZone } = this.options;
    const now = this.now();
    if (!(await claimDay(db, todayIn(timeZone, now), now))) {
      logger.info("scheduled backup skipped: another instance took today's");
      return undefined;
    }
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, `campus-${stamp(now)}.jsonl.gz`);
    const summary = await writeBackup(db, file, () => {}, { key: this.options.key });
    logger.info({ file, documents: summary.documents }, 'scheduled backup written');
    await prune(dir, this.options.keep, logger);
    await forgetOldMarkers(db, now);
    return file;
  }

  private schedule(): void {
    const now = this.now();
    const at = nextDailyRun(now, this.options.time, this.options.timeZone);
    if (this.nextAt?.getTime() !== at.getTime()) {
      this.options.logger.info({ nextRunAt: at.toISOString(), dir: this.options.dir, keep: this.options.keep }, 'next scheduled backup');
    }
    this.nextAt = at;
    const wait = Math.min(at.getTime() - now.getTime(), MAX_TIMER_MS);
    this.timer = setTimeout(
      () => {
        if (this.now().getTime() < at.getTime()) return this.schedule();
        this.running = this.runOnce()
          .then(() => undefined)
          .catch((err: Error) => this.options.logger.error({ err: { message: err.message } }, 'scheduled backup failed'))
          .finally(() => {
            this.running = undefined;
            if (this.timer) this.schedule();
          });
      },
      Math.max(0, wait),
    );
    this.timer.unref();
  }

  private now(): Date {
    return (this.options.now ?? (() => new Date()))();
  }
}

/** One instance per day: inserting the day's marker succeeds once on every MongoDB-compatible server. */
async function claimDay(db: Database, day: string, now: Date): Promise<boolean> {
  try {
    await db.client
      .db()
      .collection('meta')
      .insertOne({ _id: `${MARKER_PREFIX}${day}`, at: now } as never);
    return true;
  } catch (err) {
    if (isDuplicateKey(err)) return false;
    throw err;
  }
}

async function forgetOldMarkers(db: Database, now: Date): Promise<void> {
  await db.client
    .db()
    .collection('meta')
    .deleteMany({ _id: { $regex: `^${MARKER_PREFIX}` }, at: { $lt: new Date(now.getTime() - MARKER_KEEP_MS) } } as never);
}

/** Deletes scheduled archives beyond the newest `keep` (their names sort by time). */
async function prune(dir: string, keep: number, logger: Logger): Promise<void> {
  const archives = (await readdir(dir)).filter((name) => FILE.test(name)).sort();
  for (const name of archives.slice(0, Math.max(0, archives.length - keep))) {
    await rm(join(dir, name), { force: true });
    logger.info({ file: join(dir, name) }, 'old scheduled backup removed');
  }
}

/** UTC time stamp for file names: 20261123-020000. */
function stamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}
