import { randomBytes } from 'node:crypto';
import type { Collection } from 'mongodb';
import type { Database } from '../database.js';
import { deleteMatching } from '../platform/delete-matching.js';
import type { Attempt } from './webhooks.js';

/*
 * OpenID Connect Back-Channel Logout notices (docs/oauth.md, "Back-channel logout"): one per app
 * to tell that a person's sign-in ended, with every attempt made to deliver it. Which apps are told
 * and why is src/oauth/backchannel-logout.ts; signing and sending is the webhook worker's
 * (src/events/logout-delivery.ts), with the same safe-target checks and retry schedule. The app's
 * owner sees them in the developer console.
 */

/** Why an app is told: the person signed out, ended one sign-in, was disabled, or disconnected the app. */
export const LOGOUT_CAUSES = ['signed_out', 'session_ended', 'account_disabled', 'app_revoked'] as const;
export type LogoutCause = (typeof LOGOUT_CAUSES)[number];

export type LogoutNoticeState = 'PENDING' | 'DELIVERED' | 'FAILED';

export interface LogoutNoticeDoc {
  /** `lo_<random>`: also the logout token's `jti`, the same at every attempt, so the app drops repeats. */
  _id: string;
  clientId: string;
  /** The app's back-channel logout address when the notice was made. */
  url: string;
  /** The account (`sub` of its ID tokens). */
  sub: string;
  /** The sign-in (`sid` of the app's ID tokens from it); null when the app is told about the account as a whole. */
  sid: string | null;
  cause: LogoutCause;
  state: LogoutNoticeState;
  /** Failed attempts so far; the next waits per the retry schedule. */
  failures: number;
  /** When the worker tries next; null once delivered or failed. */
  nextAttemptAt: Date | null;
  createdAt: Date;
  lastAttemptAt: Date | null;
  attempts: Attempt[];
}

/** One app to tell. */
export interface LogoutTarget {
  readonly clientId: string;
  readonly url: string;
  readonly sub: string;
  readonly sid: string | null;
}

/** Notices kept after their last attempt (the console lists the latest). */
export const LOGOUT_NOTICE_RETENTION_MS = 30 * 24 * 3600 * 1000;

export class LogoutNoticeStore {
  constructor(
    private readonly db: Database,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private get notices(): Collection<LogoutNoticeDoc> {
    return noticesOf(this.db);
  }

  /** The indexes the worker and the console read by (idempotent). */
  async ensureIndexes(): Promise<void> {
    await this.notices.createIndex({ state: 1, nextAttemptAt: 1 });
    await this.notices.createIndex({ clientId: 1, createdAt: -1 });
  }

  /** Notices to deliver at once; returns them. */
  async add(targets: readonly LogoutTarget[], cause: LogoutCause): Promise<LogoutNoticeDoc[]> {
    const at = this.now();
    const docs = targets.map((target): LogoutNoticeDoc => ({
      _id: `lo_${randomBytes(12).toString('hex')}`,
      ...target,
      cause,
      state: 'PENDING',
      failures: 0,
      nextAttemptAt: at,
      createdAt: at,
      lastAttemptAt: null,
      attempts: [],
    }));
    if (docs.length > 0) await this.notices.insertMany(docs);
    return docs;
  }

  /** The notices waiting for an attempt now, oldest first. */
  async due(now: Date, limit = 50): Promise<LogoutNoticeDoc[]> {
    return this.notices
      .find({ state: 'PENDING', nextAttemptAt: { $lte: now } })
      .sort({ nextAttemptAt: 1, _id: 1 })
      .limit(limit)
      .toArray();
  }

  find(id: string): Promise<LogoutNoticeDoc | null> {
    return this.notices.findOne({ _id: id });
  }

  /** Adds an attempt: delivered, to be tried again at `nextAttemptAt`, or failed for good. */
  async recordAttempt(id: string, attempt: Attempt, outcome: { state: LogoutNoticeState; failures: number; nextAttemptAt: Date | null }) {
    await this.notices.updateOne({ _id: id }, { $set: { ...outcome, lastAttemptAt: attempt.at }, $push: { attempts: attempt } });
  }

  /** An app's notices, the latest first (the developer console, `campus apps logouts`). */
  async listFor(clientId: string, limit = 50): Promise<LogoutNoticeDoc[]> {
    return this.notices.find({ clientId }).sort({ createdAt: -1, _id: -1 }).limit(limit).toArray();
  }

  /** Deletes notices done with (delivered or failed) before `before`; returns how many. */
  async sweep(before: Date): Promise<number> {
    return deleteMatching(this.notices, { state: { $in: ['DELIVERED', 'FAILED'] }, createdAt: { $lt: before } });
  }
}

/** Deletes an app's notices (the app is deleted: src/data/apps/store.ts). */
export async function deleteLogoutNoticesOf(db: Database, clientId: string): Promise<void> {
  await deleteMatching(noticesOf(db), { clientId });
}

function noticesOf(db: Database): Collection<LogoutNoticeDoc> {
  return db.client.db().collection<LogoutNoticeDoc>('logout_notices');
}
