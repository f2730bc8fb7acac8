import { randomBytes } from 'node:crypto';
import type { Collection } from 'mongodb';
import { BadRequestError, ConflictError, NotFoundError } from '../../errors/index.js';
import type { Database } from '../database.js';
import type { PolicySettings } from '../../auth/policy.js';
import { scopesReadByAccount } from '../keys/store.js';
import { deleteMatching } from '../platform/delete-matching.js';
import { EVENT_TYPES } from './types.js';
import { API_SCOPES, type ApiScope } from '../models/api-key.model.js';
import { events, lastSequence } from './outbox.js';

/*
 * Webhooks (docs/webhooks.md): where an account wants the change feed's events pushed,
 * and every attempt made to push them. The delivery itself (signing, sending, retrying, leases)
 * is src/events/delivery.ts; this file stores. A webhook's `cursor` is the last event of the
 * feed (src/data/events/outbox.ts) it is done with, delivered or not meant for it, so a receiver
 * that was down catches up from there, in order.
 */

/** Webhooks one account may hold (the operators' webhooks without an owner count as one account). */
export const MAX_WEBHOOKS_PER_ACCOUNT = 10;

/** The type of the event "send a test event" sends (never in the feed). */
export const TEST_EVENT_TYPE = 'webhook.test';

/** The purpose the secrets' sealer is made for (its keys are its own: src/surfaces/web/seal.ts). */
export const WEBHOOK_SECRET_PURPOSE = 'webhook-secret';

/** Seals the webhook secrets at rest (AES-256-GCM under the cookie keys: src/surfaces/web/seal.ts's CookieSealer). */
export interface SecretBox {
  seal(value: unknown): string;
  open(text: string | undefined): unknown;
}

export type WebhookState = 'ACTIVE' | 'PAUSED' | 'FAILING';

export interface WebhookDoc {
  _id: string;
  /** The account whose key scopes filter the events; null: an operator's webhook (`campus webhooks create` without --owner), every event. */
  ownerAccountId: number | null;
  url: string;
  /** Types or patterns (`student.*`, `*`). */
  eventTypes: string[];
  /** The `whsec_` secret, sealed. */
  secret: string;
  state: WebhookState;
  /** The last feed event this webhook is done with. */
  cursor: number;
  /** Failed attempts at the event after the cursor; the next waits per the retry schedule. */
  failures: number;
  nextAttemptAt: Date | null;
  /** When the current run of failures began. */
  failingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One attempt to deliver, as the console and `campus webhooks deliveries` show it. */
export interface Attempt {
  at: Date;
  /** The receiver's HTTP status; null when no answer came (refused, timed out, unsafe address). */
  status: number | null;
  durationMs: number;
  /** The first characters of the answer's body, or why there was none. */
  response: string;
  ok: boolean;
  /** Sent by a person (redeliver, test event) rather than by the delivery worker. */
  manual: boolean;
}

export type DeliveryState = 'PENDING' | 'DELIVERED' | 'FAILED';

/** One event for one webhook, with every attempt made to deliver it. */
export interface DeliveryDoc {
  /** `<webhook id>-<event id>`, or `<webhook id>-test-<random>` for a test event. */
  _id: string;
  webhookId: string;
  eventId: number | null;
  type: string;
  /** The `webhook-id` header: the same on every attempt, so receivers drop repeats. */
  messageId: string;
  state: DeliveryState;
  createdAt: Date;
  lastAttemptAt: Date;
  attempts: Attempt[];
}

/** A webhook as the console, GraphQL-free JSON endpoints and `campus webhooks list --json` show it (never its secret). */
export interface WebhookSummary {
  id: string;
  ownerAccountId: number | null;
  url: string;
  eventTypes: string[];
  state: WebhookState;
  cursor: string;
  failures: number;
  nextAttemptAt: Date | null;
  failingSince: Date | null;
  createdAt: Date;
}

/** Who acts: an account (only on its own webhooks) or an operator at the `campus` command (any). */
export type WebhookActor = { readonly accountId: number } | 'OPERATOR';

export function summarize(doc: WebhookDoc): WebhookSummary {
  return {
    id: doc._id,
    ownerAccountId: doc.ownerAccountId,
    url: doc.url,
    eventTypes: doc.eventTypes,
    state: doc.state,
    cursor: String(doc.cursor),
    failures: doc.failures,
    nextAttemptAt: doc.nextAttemptAt,
    failingSince: doc.failingSince,
    createdAt: doc.createdAt,
  };
}

/**
 * The groups a webhook may ask for: every prefix of a type of the table (src/data/events/types.ts)
 * followed by `.*` (`student.*`, `neis.*`, `neis.meals.*`).
 */
const EVENT_GROUPS: ReadonlySet<string> = new Set(
  EVENT_TYPES.flatMap((type) => {
    const parts = type.split('.');
    return parts.slice(1).map((_, i) => `${parts.slice(0, i + 1).join('.')}.*`);
  }),
);

/**
 * The event types a person wrote (comma- or space-separated): types of the table
 * (src/data/events/types.ts), groups such as `student.*`, or `*`. Throws a 400 naming the unknown ones.
 */
export function parseEventTypes(value: string | readonly string[]): string[] {
  const items = (typeof value === 'string' ? value.split(/[\s,]+/) : [...value]).map((s) => s.trim()).filter(Boolean);
  const known = new Set<string>(EVENT_TYPES);
  const unknown = items.filter((t) => t !== '*' && !known.has(t) && !EVENT_GROUPS.has(t));
  if (items.length === 0) throw new BadRequestError(`events: name one or more event types: ${EVENT_TYPES.join(', ')} (or student.*, *).`);
  if (unknown.length > 0)
    throw new BadRequestError(
      `events: unknown ${unknown.join(', ')}; use ${EVENT_TYPES.join(', ')}, a group such as student.* or neis.*, or *.`,
    );
  return [...new Set(items)];
}

/** Whether a webhook asking for `patterns` (as parseEventTypes takes them) wants an event of `type`. */
export function wantsType(patterns: readonly string[], type: string): boolean {
  return patterns.some((p) => p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))));
}

/** A new webhook secret as Standard Webhooks writes them: `whsec_` + base64 of 32 random bytes (as long as the HMAC's output). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function newWebhookId(): string {
  return `wh_${randomBytes(8).toString('hex')}`;
}

export class WebhookStore {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
    /** The privilege rules' settings: an owned webhook receives what its owner's keys read now (src/auth/policy.ts). */
    private readonly settings: PolicySettings,
    private readonly now: () => Date = () => new Date(),
  ) {}

  get webhooks(): Collection<WebhookDoc> {
    return webhooksOf(this.db);
  }

  get deliveries(): Collection<DeliveryDoc> {
    return deliveriesOf(this.db);
  }

  /** The indexes the worker and the console read by (idempotent). */
  async ensureIndexes(): Promise<void> {
    await this.webhooks.createIndex({ ownerAccountId: 1 });
    await this.deliveries.createIndex({ webhookId: 1, lastAttemptAt: -1 });
  }

  /**
   * A new webhook, receiving the events committed from now on; its secret (returned, shown once)
   * is stored sealed. `url` must already be checked (src/events/targets.ts checkTargetUrl).
   */
  async create(input: {
    ownerAccountId: number | null;
    url: string;
    eventTypes: string[];
  }): Promise<{ webhook: WebhookSummary; secret: string; doc: WebhookDoc }> {
    const held = await this.webhooks.countDocuments({ ownerAccountId: input.ownerAccountId });
    if (held >= MAX_WEBHOOKS_PER_ACCOUNT) {
      throw new ConflictError(`This account already has ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks, the most it may have; delete one first.`);
    }
    const secret = newWebhookSecret();
    const at = this.now();
    const doc: WebhookDoc = {
      _id: newWebhookId(),
      ownerAccountId: input.ownerAccountId,
      url: input.url,
      eventTypes: input.eventTypes,
      secret: this.box.seal(secret),
      state: 'ACTIVE',
      cursor: await lastSequence(this.db),
      failures: 0,
      nextAttemptAt: null,
      failingSince: null,
      createdAt: at,
      updatedAt: at,
    };
    await this.webhooks.insertOne(doc);
    return { webhook: summarize(doc), secret, doc };
  }

  /** The webhooks of one account (or all, for an operator), oldest first. */
  async list(actor: WebhookActor): Promise<WebhookDoc[]> {
    const filter = actor === 'OPERATOR' ? {} : { ownerAccountId: actor.accountId };
    return this.webhooks.find(filter).sort({ createdAt: 1, _id: 1 }).toArray();
  }

  /** One webhook the actor may manage; 404 otherwise (another account's reads as unknown). */
  async get(id: string, actor: WebhookActor): Promise<WebhookDoc> {
    const doc = await this.webhooks.findOne({ _id: id });
    if (!doc || (actor !== 'OPERATOR' && doc.ownerAccountId !== actor.accountId)) throw new NotFoundError(`No webhook ${id}.`);
    return doc;
  }

  /** Re-reads a webhook (the worker, between events). */
  find(id: string): Promise<WebhookDoc | null> {
    return this.webhooks.findOne({ _id: id });
  }

  async remove(id: string, actor: WebhookActor): Promise<WebhookDoc> {
    const doc = await this.get(id, actor);
    await this.webhooks.deleteOne({ _id: id });
    await deleteMatching(this.deliveries, { webhookId: id });
    return doc;
  }

  /** A new secret (returned, shown once); the old one stops signing at once. */
  async rotate(id: string, actor: WebhookActor): Promise<{ webhook: WebhookSummary; secret: string }> {
    const doc = await this.get(id, actor);
    const secret = newWebhookSecret();
    const updated = { ...doc, secret: this.box.seal(secret), updatedAt: this.now() };
    await this.webhooks.updateOne({ _id: id }, { $set: { secret: updated.secret, updatedAt: updated.updatedAt } });
    return { webhook: summarize(updated), secret };
  }

  /**
   * Pauses (nothing is sent; events wait in the feed) or resumes a webhook. Resuming a FAILING
   * webhook tries the event it failed on again at once, then the rest in order.
   */
  async setPaused(id: string, paused: boolean, actor: WebhookActor): Promise<WebhookSummary> {
    const doc = await this.get(id, actor);
    const set = paused
      ? { state: 'PAUSED' as const, updatedAt: this.now() }
      : { state: 'ACTIVE' as const, failures: 0, nextAttemptAt: null, failingSince: null, updatedAt: this.now() };
    await this.webhooks.updateOne({ _id: id }, { $set: set });
    return summarize({ ...doc, ...set });
  }

  /** The webhook's secret, opened. */
  secretOf(doc: WebhookDoc): string {
    const secret = this.box.open(doc.secret);
    if (typeof secret !== 'string') {
      throw new BadRequestError(`The secret of webhook ${doc._id} cannot be opened (the cookie keys changed); rotate it.`);
    }
    return secret;
  }

  /** The webhooks the worker should look at now: active, behind the feed's last event, and not waiting for a retry. */
  async due(now: Date): Promise<WebhookDoc[]> {
    const last = await lastSequence(this.db);
    return this.webhooks
      .find({ state: 'ACTIVE', cursor: { $lt: last }, $or: [{ nextAttemptAt: null }, { nextAttemptAt: { $lte: now } }] })
      .toArray();
  }

  /**
   * Moves the cursor from `from` to `to` and clears the failures: only if nobody moved it meanwhile
   * (false then: another process delivers this webhook, so this one stops).
   */
  async advance(id: string, from: number, to: number): Promise<boolean> {
    const { matchedCount } = await this.webhooks.updateOne(
      { _id: id, cursor: from },
      { $set: { cursor: to, failures: 0, nextAttemptAt: null, failingSince: null } },
    );
    return matchedCount === 1;
  }

  /** After a failed attempt: wait, or (the schedule spent) mark the webhook FAILING. */
  async recordFailure(
    id: string,
    update: { failures: number; nextAttemptAt: Date | null; failingSince: Date; failing: boolean },
  ): Promise<void> {
    await this.webhooks.updateOne(
      { _id: id },
      {
        $set: {
          failures: update.failures,
          nextAttemptAt: update.nextAttemptAt,
          failingSince: update.failingSince,
          ...(update.failing ? { state: 'FAILING' as const, updatedAt: this.now() } : {}),
        },
      },
    );
  }

  /** Adds an attempt to a delivery, creating the delivery at its first attempt. */
  async recordAttempt(
    delivery: Pick<DeliveryDoc, '_id' | 'webhookId' | 'eventId' | 'type' | 'messageId'>,
    attempt: Attempt,
    state: DeliveryState,
  ): Promise<void> {
    await this.deliveries.updateOne(
      { _id: delivery._id },
      {
        $setOnInsert: {
          webhookId: delivery.webhookId,
          eventId: delivery.eventId,
          type: delivery.type,
          messageId: delivery.messageId,
          createdAt: attempt.at,
        },
        $set: { state, lastAttemptAt: attempt.at },
        $push: { attempts: attempt },
      },
      { upsert: true },
    );
  }

  /** A webhook's deliveries, the latest attempted first. */
  async deliveriesOf(id: string, actor: WebhookActor, limit = 50): Promise<DeliveryDoc[]> {
    await this.get(id, actor);
    return this.deliveries.find({ webhookId: id }).sort({ lastAttemptAt: -1, _id: -1 }).limit(limit).toArray();
  }

  /** One delivery of a webhook the actor may manage. */
  async delivery(deliveryId: string, actor: WebhookActor): Promise<{ delivery: DeliveryDoc; webhook: WebhookDoc }> {
    const delivery = await this.deliveries.findOne({ _id: deliveryId });
    if (!delivery) throw new NotFoundError(`No delivery ${deliveryId}.`);
    const webhook = await this.get(delivery.webhookId, actor).catch(() => {
      throw new NotFoundError(`No delivery ${deliveryId}.`);
    });
    return { delivery, webhook };
  }

  /**
   * The scopes whose events the webhook receives, worked out at each delivery: what its owner's
   * active keys read now (what those keys would see in GET /v1/changes: src/auth/policy.ts, so a
   * lowered role stops its webhooks' student events at once); an operator's webhook, every scope.
   */
  async scopesOf(doc: WebhookDoc): Promise<Set<ApiScope>> {
    if (doc.ownerAccountId === null) return new Set(API_SCOPES);
    return new Set(await scopesReadByAccount(this.db, doc.ownerAccountId, this.settings, this.now()));
  }
}

/**
 * Deletes an account's webhooks and their deliveries (the account is being deleted:
 * src/oauth/accounts.ts); returns how many webhooks. Their secrets need not be opened, so this
 * needs no WebhookStore.
 */
export async function deleteWebhooksOwnedBy(db: Database, accountId: number): Promise<number> {
  const webhooks = webhooksOf(db);
  const ids = (await webhooks.find({ ownerAccountId: accountId }, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id);
  if (ids.length === 0) return 0;
  await deleteMatching(deliveriesOf(db), { webhookId: { $in: ids } });
  return (await webhooks.deleteMany({ _id: { $in: ids } })).deletedCount;
}

/** Where delivery stands, for the status page (src/data/operations/status.ts). */
export interface DeliveryBacklog {
  /** Events the delivering webhooks have not yet passed (sent, or skipped as not theirs). */
  readonly backlog: number;
  /** The oldest of them: when it was written (null when none waits). */
  readonly oldestPendingAt: Date | null;
  /** Active webhooks waiting to retry a receiver that failed, and webhooks that gave up (FAILING): their receivers' trouble, not delivery's. */
  readonly retrying: number;
  readonly failing: number;
}

/**
 * The backlog of webhook delivery: the events waiting for active webhooks whose receivers answer
 * (a webhook retrying a failing receiver, and a paused one, wait for their receiver or owner, not
 * for delivery), and when the oldest of them was written.
 */
export async function deliveryBacklog(db: Database): Promise<DeliveryBacklog> {
  const hooks = await webhooksOf(db)
    .find({ state: { $in: ['ACTIVE', 'FAILING'] } }, { projection: { state: 1, cursor: 1, failures: 1 } })
    .toArray();
  const last = await lastSequence(db);
  const delivering = hooks.filter((hook) => hook.state === 'ACTIVE' && hook.failures === 0 && hook.cursor < last);
  const backlog = delivering.reduce((sum, hook) => sum + (last - hook.cursor), 0);
  const from = Math.min(...delivering.map((hook) => hook.cursor));
  const oldest =
    delivering.length > 0
      ? await events(db)
          .find({ _id: { $gt: from } })
          .sort({ _id: 1 })
          .limit(1)
          .next()
      : null;
  return {
    backlog,
    oldestPendingAt: oldest?.at ?? null,
    retrying: hooks.filter((hook) => hook.state === 'ACTIVE' && hook.failures > 0).length,
    failing: hooks.filter((hook) => hook.state === 'FAILING').length,
  };
}

function webhooksOf(db: Database): Collection<WebhookDoc> {
  return db.client.db().collection<WebhookDoc>('webhooks');
}

function deliveriesOf(db: Database): Collection<DeliveryDoc> {
  return db.client.db().collection<DeliveryDoc>('webhook_deliveries');
}
