import type { Database } from '../data/database.js';
import { LOGOUT_NOTICE_RETENTION_MS, type LogoutNoticeDoc, type LogoutNoticeStore } from '../data/events/logout-notices.js';
import { Lease } from '../data/platform/lease.js';
import type { Logger } from '../logger.js';
import { sendRequest } from './send.js';
import type { TargetPolicy } from './targets.js';

/*
 * Back-channel logout tokens (src/oauth/backchannel-logout.ts) are sent by the webhook worker of
 * every `campus serve` (src/events/delivery.ts calls deliverDue at each of its rounds): each due
 * notice under a lease of its own (`logout:<id>`, as a webhook's), to the app's address under the
 * webhooks' safe-target checks (src/events/targets.ts), as `application/x-www-form-urlencoded`
 * `logout_token=...` (OpenID Connect Back-Channel Logout 1.0, section 2.5). A 2xx delivers it;
 * anything else is recorded and retried on the webhooks' schedule (WEBHOOK_RETRY_SCHEDULE), and
 * past its end the notice is FAILED. The token is signed at each attempt (its `jti` stays).
 */

/** How often the notices done with are swept (kept LOGOUT_NOTICE_RETENTION_MS). */
const SWEEP_EVERY_MS = 60 * 60 * 1000;

export interface LogoutDeliveryDeps {
  readonly db: Database;
  readonly store: LogoutNoticeStore;
  readonly policy: TargetPolicy;
  readonly retryScheduleMs: readonly number[];
  readonly logger: Logger;
  /** The signed logout token of a notice at a moment (src/oauth/backchannel-logout.ts, logoutToken). */
  readonly sign: (notice: LogoutNoticeDoc, at: Date) => Promise<string>;
  readonly now?: () => Date;
}

export class LogoutDelivery {
  private readonly now: () => Date;
  private lastSweep = 0;

  constructor(private readonly deps: LogoutDeliveryDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** Sends every notice due now (one round of the worker); never throws. */
  async deliverDue(): Promise<void> {
    try {
      await this.sweepNow();
      const due = await this.deps.store.due(this.now());
      await Promise.all(due.map((notice) => this.underLease(notice._id)));
    } catch (err) {
      this.deps.logger.warn({ err: { message: (err as Error).message } }, 'back-channel logout: could not look for due notices');
    }
  }

  private async sweepNow(): Promise<void> {
    const now = this.now().getTime();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    await this.deps.store.sweep(new Date(now - LOGOUT_NOTICE_RETENTION_MS));
  }

  private async underLease(id: string): Promise<void> {
    // No wait: a notice another process holds is that process's to send.
    const lease = await Lease.acquire(this.deps.db.client.db(), `logout:${id}`, { waitMs: 0 }).catch(() => null);
    if (!lease) return;
    try {
      // Read again under the lease: another process may have sent it meanwhile.
      const notice = await this.deps.store.find(id);
      if (notice?.state === 'PENDING' && notice.nextAttemptAt && notice.nextAttemptAt <= this.now()) await this.deliver(notice);
    } finally {
      await lease.release();
    }
  }

  /** One attempt: delivered, or the wait before the next, or FAILED when the schedule is spent. */
  private async deliver(notice: LogoutNoticeDoc): Promise<void> {
    const at = this.now();
    const body = new URLSearchParams({ logout_token: await this.deps.sign(notice, at) }).toString();
    const attempt = await sendRequest(
      {
        url: notice.url,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'campus-data-service-logout' },
        body,
      },
      this.deps.policy,
      false,
      at,
    );
    const failures = attempt.ok ? notice.failures : notice.failures + 1;
    const wait = this.deps.retryScheduleMs[failures - 1];
    const outcome = attempt.ok
      ? { state: 'DELIVERED' as const, failures, nextAttemptAt: null }
      : wait === undefined
        ? { state: 'FAILED' as const, failures, nextAttemptAt: null }
        : { state: 'PENDING' as const, failures, nextAttemptAt: new Date(at.getTime() + wait) };
    await this.deps.store.recordAttempt(notice._id, attempt, outcome);
    if (!attempt.ok) {
      this.deps.logger.warn(
        { notice: notice._id, clientId: notice.clientId, status: attempt.status, failures, state: outcome.state },
        outcome.state === 'FAILED'
          ? 'back-channel logout: retries spent; the notice failed'
          : 'back-channel logout: delivery failed; retried later',
      );
    }
  }
}
