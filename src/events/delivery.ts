import { randomBytes } from 'node:crypto';
import { belongsToOperators } from '../auth/policy.js';
import type { Database } from '../data/database.js';
import { Lease } from '../data/platform/lease.js';
import type { Subscriber } from '../data/events/types.js';
import { events, presentEvent, type ChangeEvent } from '../data/events/outbox.js';
import { CursorExpiredError, readChanges } from '../data/events/feed.js';
import {
  TEST_EVENT_TYPE,
  wantsType,
  type Attempt,
  type DeliveryDoc,
  type WebhookActor,
  type WebhookDoc,
  type WebhookStore,
} from '../data/events/webhooks.js';
import { AppError } from '../errors/index.js';
import type { Logger } from '../logger.js';
import type { Mail } from '../oauth/mail.js';
import { failingMail } from './mail.js';
import type { LogoutDelivery } from './logout-delivery.js';
import { sendMessage } from './send.js';
import type { TargetPolicy } from './targets.js';

/*
 * The delivery of webhooks inside `campus serve` (docs/webhooks.md). Every
 * `POLL_MS` the worker looks for active webhooks that are due; for each, it takes the lease
 * `webhook:<id>` (src/data/platform/lease.ts: it expires when its holder stops renewing it, and is taken at
 * once from a process of this machine and container that is gone, so a `kill -9` loses nothing
 * and holds nothing), then reads the feed after the webhook's cursor exactly as GET /v1/changes would for
 * its owner's keys (readChanges, src/data/events/feed.ts, each event presented for the webhook by
 * presentEvent, src/data/events/outbox.ts), keeps the types the webhook asked for,
 * and sends them one at a time, in order. A 2xx moves the cursor past the event; anything else
 * records the attempt and waits per the retry schedule, the same event first again (at least
 * once, in order). When the schedule is spent the webhook is FAILING and its owner is mailed;
 * resuming it starts from the event it failed on. Several processes share the work: one lease
 * per webhook, and the cursor moves only from the value read (compare and set).
 */

/** How often the worker looks for due webhooks. */
export const POLL_MS = 500;
/** Webhooks one process delivers at once. */
const PARALLEL = 8;
/** Events read from the feed per step. */
const PAGE = 100;

export interface DeliveryDeps {
  readonly db: Database;
  readonly store: WebhookStore;
  readonly policy: TargetPolicy;
  /** Milliseconds to wait after the 1st, 2nd, ... failure of an event; past the last, the webhook is FAILING (WEBHOOK_RETRY_SCHEDULE, src/config/index.ts). */
  readonly retryScheduleMs: readonly number[];
  readonly logger: Logger;
  /** Mails the owner of a webhook marked FAILING. */
  readonly sendMail: (mail: Mail) => Promise<void>;
  /** Where the owner manages webhooks (the developer console). */
  readonly consoleUrl: string;
  /** Back-channel logout tokens, sent by this worker in rounds of their own beside the webhooks' (src/events/logout-delivery.ts). */
  readonly logouts?: LogoutDelivery;
  readonly now?: () => Date;
}

/** The body every delivery sends: the event exactly as the feed shows it to the webhook's subscriber. */
export function bodyOf(event: ChangeEvent): string {
  return JSON.stringify(event);
}

/** The `webhook-id` of an event: the same on every attempt and every webhook, so a receiver drops repeats. */
export function messageIdOf(eventId: string | number): string {
  return `evt_${eventId}`;
}

export class WebhookDelivery {
  private timer: NodeJS.Timeout | undefined;
  private readonly busy = new Map<string, Promise<void>>();
  private stopped = false;
  private ticking: Promise<void> | undefined;
  /** The back-channel logout round under way, beside the webhooks' (a slow app's server holds up only its own notices). */
  private logoutRound: Promise<void> | undefined;
  private readonly now: () => Date;

  constructor(private readonly deps: DeliveryDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  start(): void {
    void this.deps.store.ensureIndexes().catch(() => {});
    this.timer = setInterval(() => {
      this.ticking ??= this.tick().finally(() => (this.ticking = undefined));
      const logouts = this.deps.logouts;
      if (logouts) this.logoutRound ??= logouts.deliverDue().finally(() => (this.logoutRound = undefined));
    }, POLL_MS);
    this.timer.unref();
  }

  /** Stops looking; waits for the deliveries in flight (each at most DELIVERY_TIMEOUT_MS). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.all([this.ticking, this.logoutRound]);
    await Promise.all(this.busy.values());
  }

  private async tick(): Promise<void> {
    try {
      for (const webhook of await this.deps.store.due(this.now())) {
        if (this.stopped || this.busy.size >= PARALLEL) return;
        if (this.busy.has(webhook._id)) continue;
        const work = this.underLease(webhook._id).finally(() => this.busy.delete(webhook._id));
        this.busy.set(webhook._id, work);
      }
    } catch (err) {
      this.deps.logger.warn({ err: { message: (err as Error).message } }, 'webhooks: could not look for due webhooks');
    }
  }

  private async underLease(id: string): Promise<void> {
    // No wait: a webhook another process holds is that process's to deliver.
    const lease = await Lease.acquire(this.deps.db.client.db(), `webhook:${id}`, { waitMs: 0 }).catch(() => null);
    if (!lease) return;
    try {
      await this.drain(id);
    } catch (err) {
      this.deps.logger.warn({ webhook: id, err: { message: (err as Error).message } }, 'webhooks: delivery interrupted; retried shortly');
    } finally {
      await lease.release();
    }
  }

  /** Delivers the webhook's events after its cursor until it is caught up, fails, or is paused. */
  private async drain(id: string): Promise<void> {
    const { store } = this.deps;
    while (!this.stopped) {
      const webhook = await store.find(id);
      if (!webhook || webhook.state !== 'ACTIVE') return;
      if (webhook.nextAttemptAt && webhook.nextAttemptAt > this.now()) return;
      const subscriber = await subscriberOf(store, webhook);
      // An owner without a living key sees nothing in the feed: the events wait (30 days) for a key.
      if (subscriber.scopes.size === 0) return;
      const page = await readChanges(this.deps.db, { after: String(webhook.cursor), limit: PAGE, subscriber }).catch((err: unknown) => {
        if (err instanceof CursorExpiredError) return null;
        throw err;
      });
      if (page === null) {
        // Down longer than the feed keeps events: continue from the oldest kept (said in the log).
        const oldest = await events(this.deps.db)
          .find({}, { projection: { _id: 1 } })
          .sort({ _id: 1 })
          .limit(1)
          .next();
        this.deps.logger.warn({ webhook: id, cursor: webhook.cursor }, 'webhooks: events past the retention were never delivered');
        if (!(await store.advance(id, webhook.cursor, (oldest?._id ?? webhook.cursor + 1) - 1))) return;
        continue;
      }
      const next = Number(page.nextCursor);
      if (next === webhook.cursor) return;
      let cursor = webhook.cursor;
      for (const event of page.events) {
        if (!wantsType(webhook.eventTypes, event.type)) continue;
        const eventId = Number(event.id);
        // Done with everything before it (not wanted, or delivered).
        if (eventId - 1 > cursor) {
          if (!(await store.advance(id, cursor, eventId - 1))) return;
          cursor = eventId - 1;
        }
        if (!(await this.deliver({ ...webhook, cursor }, event))) return;
        if (!(await store.advance(id, cursor, eventId))) return;
        cursor = eventId;
        if (this.stopped) return;
      }
      if (next > cursor && !(await store.advance(id, cursor, next))) return;
    }
  }

  /** One attempt at the webhook's next event; on failure, the wait before the next or FAILING. */
  private async deliver(webhook: WebhookDoc, event: ChangeEvent): Promise<boolean> {
    const { store, retryScheduleMs } = this.deps;
    const attempt = await sendMessage(
      { url: webhook.url, secret: store.secretOf(webhook), id: messageIdOf(event.id), body: bodyOf(event) },
      this.deps.policy,
      false,
      this.now,
    );
    const failures = attempt.ok ? 0 : webhook.failures + 1;
    const failing = failures > retryScheduleMs.length;
    await store.recordAttempt(deliveryOf(webhook, event), attempt, attempt.ok ? 'DELIVERED' : failing ? 'FAILED' : 'PENDING');
    if (attempt.ok) return true;
    const failingSince = webhook.failingSince ?? attempt.at;
    const wait = retryScheduleMs[failures - 1];
    await store.recordFailure(webhook._id, {
      failures,
      failingSince,
      failing,
      nextAttemptAt: wait === undefined ? null : new Date(attempt.at.getTime() + wait),
    });
    this.deps.logger.warn(
      { webhook: webhook._id, event: event.id, status: attempt.status, failures, failing },
      failing ? 'webhooks: retries spent; the webhook is marked failing' : 'webhooks: delivery failed; retried later',
    );
    if (failing) await this.tellOwner(webhook, attempt, failingSince);
    return false;
  }

  private async tellOwner(webhook: WebhookDoc, attempt: Attempt, since: Date): Promise<void> {
    if (webhook.ownerAccountId === null) return;
    const owner = await this.deps.db.models.accounts.findOne({ _id: webhook.ownerAccountId }, { email: 1 }).lean();
    if (!owner) return;
    await this.deps
      .sendMail(
        failingMail(owner.email, {
          id: webhook._id,
          url: webhook.url,
          since,
          lastResponse: attempt.response,
          consoleUrl: this.deps.consoleUrl,
        }),
      )
      .catch((err: unknown) =>
        this.deps.logger.warn({ webhook: webhook._id, err: { message: (err as Error).message } }, 'webhooks: could not mail the owner'),
      );
  }
}

/**
 * Whom a webhook receives events as: its owner's keys' scopes (WebhookStore.scopesOf), and an
 * operator's when it has no owner (`campus webhooks create` without --owner).
 */
export async function subscriberOf(store: WebhookStore, webhook: WebhookDoc): Promise<Subscriber> {
  return { scopes: await store.scopesOf(webhook), operator: belongsToOperators(webhook) };
}

/** 410: the delivery's event cannot be sent again. */
export class GoneError extends AppError {
  constructor(message: string) {
    super('GONE', message);
  }
}

function deliveryOf(webhook: WebhookDoc, event: ChangeEvent): Pick<DeliveryDoc, '_id' | 'webhookId' | 'eventId' | 'type' | 'messageId'> {
  return {
    _id: `${webhook._id}-${event.id}`,
    webhookId: webhook._id,
    eventId: Number(event.id),
    type: event.type,
    messageId: messageIdOf(event.id),
  };
}

/** What a person's resend or test event needs. */
export interface ManualDeps {
  readonly store: WebhookStore;
  readonly db: Database;
  readonly policy: TargetPolicy;
  readonly now?: () => Date;
}

/**
 * Sends a delivery's event again now (the console's redeliver button, `campus webhooks
 * redeliver`), recorded as an attempt of that delivery. The webhook's own order is untouched: a
 * delivery still pending is retried by the worker as scheduled.
 */
export async function redeliver(
  deps: ManualDeps,
  deliveryId: string,
  actor: WebhookActor,
): Promise<{ delivery: DeliveryDoc; attempt: Attempt }> {
  const { delivery, webhook } = await deps.store.delivery(deliveryId, actor);
  const body = await bodyOfDelivery(deps, delivery, webhook);
  const attempt = await sendMessage(
    { url: webhook.url, secret: deps.store.secretOf(webhook), id: delivery.messageId, body },
    deps.policy,
    true,
    deps.now,
  );
  const state = attempt.ok ? 'DELIVERED' : delivery.state;
  await deps.store.recordAttempt(delivery, attempt, state);
  return { delivery: { ...delivery, state, attempts: [...delivery.attempts, attempt], lastAttemptAt: attempt.at }, attempt };
}

async function bodyOfDelivery(deps: ManualDeps, delivery: DeliveryDoc, webhook: WebhookDoc): Promise<string> {
  // A test event (its eventId is null; FerretDB may leave the field out).
  if (delivery.eventId == null) return testBody(delivery.messageId, deps.now?.() ?? new Date());
  const doc = await events(deps.db).findOne({ _id: delivery.eventId });
  if (!doc) throw new GoneError(`Event ${delivery.eventId} is no longer kept (the feed keeps 30 days); it cannot be sent again.`);
  const shown = presentEvent(doc, await subscriberOf(deps.store, webhook));
  if (!shown) throw new GoneError(`The owner's keys no longer allow ${doc.type} events; it is not sent again.`);
  return bodyOf(shown);
}

function testBody(id: string, at: Date): string {
  return JSON.stringify({
    id,
    type: TEST_EVENT_TYPE,
    time: at.toISOString(),
    actor: { kind: 'CLI', accountId: null },
    batchId: null,
    data: { message: '테스트 이벤트입니다. This is a test event.' },
  } satisfies ChangeEvent);
}

/** Sends a `webhook.test` event now (the console's button, `campus webhooks test`), recorded as a delivery of its own. */
export async function sendTestEvent(
  deps: ManualDeps,
  webhookId: string,
  actor: WebhookActor,
): Promise<{ delivery: DeliveryDoc; attempt: Attempt }> {
  const webhook = await deps.store.get(webhookId, actor);
  const random = randomBytes(6).toString('hex');
  const messageId = `test_${random}`;
  const at = deps.now?.() ?? new Date();
  const attempt = await sendMessage(
    { url: webhook.url, secret: deps.store.secretOf(webhook), id: messageId, body: testBody(messageId, at) },
    deps.policy,
    true,
    deps.now,
  );
  const delivery = { _id: `${webhook._id}-test-${random}`, webhookId: webhook._id, eventId: null, type: TEST_EVENT_TYPE, messageId };
  const state = attempt.ok ? 'DELIVERED' : 'FAILED';
  await deps.store.recordAttempt(delivery, attempt, state);
  return { delivery: { ...delivery, state, createdAt: attempt.at, lastAttemptAt: attempt.at, attempts: [attempt] }, attempt };
}
