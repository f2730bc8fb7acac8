import type { Command } from 'commander';
import type { Config } from '../../config/index.js';
import { AccountStore } from '../../data/accounts/store.js';
import type { Database } from '../../data/database.js';
import { EVENT_TYPES } from '../../data/events/types.js';
import {
  parseEventTypes,
  summarize,
  WebhookStore,
  WEBHOOK_SECRET_PURPOSE,
  type Attempt,
  type DeliveryDoc,
  type WebhookDoc,
  type WebhookSummary,
} from '../../data/events/webhooks.js';
import { redeliver, sendTestEvent, type ManualDeps } from '../../events/delivery.js';
import { checkTargetUrl } from '../../events/targets.js';
import { loadOAuthKeys } from '../../oauth/signing-keys.js';
import { CookieSealer } from '../../surfaces/web/seal.js';
import { CliError, jsonCommand, type CommandContext } from '../runtime.js';

/** The store and what a manual send needs, as `campus serve` builds them (src/main.ts). */
async function webhookDeps(config: Config, db: Database): Promise<ManualDeps> {
  const keys = await loadOAuthKeys(config, db);
  return {
    db,
    store: new WebhookStore(db, new CookieSealer(keys.cookieKeys, WEBHOOK_SECRET_PURPOSE), config.policy),
    policy: { production: config.isProduction, allowPrivate: config.webhooks.allowPrivate },
  };
}

function describeWebhook(w: WebhookSummary, owner: string | null): string {
  const failing = w.state === 'FAILING' || w.failures > 0 ? ` (${w.failures} failed attempt(s) at the next event)` : '';
  return `${w.id}  ${w.state}${failing}  ${w.url}  events: ${w.eventTypes.join(',')}  owner: ${owner ?? 'operator'}  after event ${w.cursor}`;
}

function describeAttempt(a: Attempt): string {
  return `    ${a.at.toISOString()}  ${a.status ?? 'no answer'}  ${a.durationMs} ms${a.manual ? '  (by hand)' : ''}  ${a.response.replace(/\s+/g, ' ').slice(0, 120)}`;
}

function describeDelivery(d: DeliveryDoc): string {
  return [`${d._id}  ${d.type}  ${d.state}  ${d.attempts.length} attempt(s)`, ...d.attempts.map(describeAttempt)].join('\n');
}

/** Emails of the owners of these webhooks, by account id. */
async function ownerEmails(db: Database, docs: readonly WebhookDoc[]): Promise<Map<number, string>> {
  const accounts = new AccountStore(db);
  const emails = new Map<number, string>();
  for (const id of new Set(docs.flatMap((d) => (d.ownerAccountId === null ? [] : [d.ownerAccountId])))) {
    const account = await accounts.findById(id);
    if (account) emails.set(id, account.email);
  }
  return emails;
}

export function registerWebhooks(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description("manage webhooks: signed pushes of the change feed's events (docs/webhooks.md); `campus serve` delivers them");

  jsonCommand(
    webhooks
      .command('create')
      .description('create a webhook; its secret (whsec_...) is printed once and cannot be shown again')
      .requiredOption('--url <url>', 'where to POST the events (https:// in production)')
      .requiredOption('--events <types>', `comma-separated: ${EVENT_TYPES.join(', ')}; or a group (student.*, neis.*) or *`)
      .option(
        '--owner <email>',
        "the account it belongs to: it receives what that account's API keys may read (default: the operators', every event)",
      ),
    {
      json: 'the result',
      writes: true,
      run: async ({ config, db }, options: { url: string; events: string; owner?: string }) => {
        const eventTypes = parseEventTypes(options.events);
        const url = checkTargetUrl(options.url, { production: config.isProduction, allowPrivate: config.webhooks.allowPrivate }).href;
        const database = await db();
        let ownerAccountId: number | null = null;
        if (options.owner !== undefined) {
          const account = await new AccountStore(database).findByEmail(options.owner);
          if (!account) throw new CliError(`No account ${options.owner}.`);
          ownerAccountId = account._id;
        }
        const { store } = await webhookDeps(config, database);
        const created = await store.create({ ownerAccountId, url, eventTypes });
        return { ...created.webhook, secret: created.secret };
      },
      human: (created, options) =>
        [
          `Webhook ${created.id} created.`,
          `Secret (shown once, store it now): ${created.secret}`,
          describeWebhook(created, options.owner ?? null),
        ].join('\n'),
    },
  );

  jsonCommand(
    webhooks
      .command('list')
      .description('list every webhook: state, address, events, owner, and where it is in the feed; secrets are never shown'),
    {
      json: 'the webhooks',
      run: async ({ config, db }) => {
        const database = await db();
        const { store } = await webhookDeps(config, database);
        const docs = await store.list('OPERATOR');
        const emails = await ownerEmails(database, docs);
        return docs.map((d) => ({
          ...summarize(d),
          ownerEmail: d.ownerAccountId === null ? null : (emails.get(d.ownerAccountId) ?? null),
        }));
      },
      human: (listed) => (listed.length === 0 ? 'No webhooks.' : listed.map((w) => describeWebhook(w, w.ownerEmail)).join('\n')),
    },
  );

  jsonCommand(webhooks.command('delete <id>').description('delete a webhook and its delivery log; nothing more is sent to it'), {
    json: 'the deleted webhook',
    writes: true,
    run: async (ctx, _options, [id]: [string]) => (await storeOf(ctx)).remove(id, 'OPERATOR'),
    human: (removed) => `Deleted webhook ${removed._id} (${removed.url}).`,
    data: summarize,
  });

  jsonCommand(
    webhooks
      .command('deliveries <id>')
      .description(
        "a webhook's deliveries, the latest first, each with every attempt (time, status, duration, the answer's first characters)",
      )
      .option('--limit <n>', 'how many deliveries', '50'),
    {
      json: 'the deliveries',
      run: async (ctx, options: { limit: string }, [id]: [string]) => {
        const limit = Number(options.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new CliError('--limit: an integer from 1 to 1000.');
        return { id, list: await (await storeOf(ctx)).deliveriesOf(id, 'OPERATOR', limit) };
      },
      human: ({ id, list }) => (list.length === 0 ? `No deliveries for webhook ${id} yet.` : list.map(describeDelivery).join('\n')),
      data: ({ list }) => list.map(deliveryJson),
    },
  );

  // Each exits 1 when the receiver does not answer 2xx.
  const sends = {
    redeliver: {
      usage: 'redeliver <delivery-id>',
      description: "send a delivery's event again now (recorded as one more attempt); exits 1 when the receiver does not answer 2xx",
      send: redeliver,
    },
    test: {
      usage: 'test <id>',
      description:
        'send a webhook.test event now, signed like every event (recorded as a delivery); exits 1 when the receiver does not answer 2xx',
      send: sendTestEvent,
    },
  };
  for (const { usage, description, send } of Object.values(sends)) {
    jsonCommand(webhooks.command(usage).description(description), {
      json: 'the delivery',
      writes: true,
      run: async ({ config, db }, _options, [id]: [string]) => {
        const sent = await send(await webhookDeps(config, await db()), id, 'OPERATOR');
        if (!sent.attempt.ok) process.exitCode = 1;
        return sent;
      },
      human: (sent) =>
        [`${sent.attempt.ok ? 'Delivered' : 'Not delivered'}: ${sent.delivery._id}`, describeAttempt(sent.attempt)].join('\n'),
      data: (sent) => deliveryJson(sent.delivery),
    });
  }

  jsonCommand(webhooks.command('rotate <id>').description('give a webhook a new secret, printed once; the old one stops signing at once'), {
    json: 'the result',
    writes: true,
    run: async (ctx, _options, [id]: [string]) => {
      const rotated = await (await storeOf(ctx)).rotate(id, 'OPERATOR');
      return { ...rotated.webhook, secret: rotated.secret };
    },
    human: (rotated) => `New secret of ${rotated.id} (shown once, store it now): ${rotated.secret}`,
  });

  const actions = {
    pause: 'stop sending to a webhook; its events wait in the feed (kept 30 days)',
    resume: 'send again to a paused or failing webhook, from the event it stopped at, in order',
  };
  for (const action of ['pause', 'resume'] as const) {
    jsonCommand(webhooks.command(`${action} <id>`).description(actions[action]), {
      json: 'the webhook',
      writes: true,
      run: async (ctx, _options, [id]: [string]) => (await storeOf(ctx)).setPaused(id, action === 'pause', 'OPERATOR'),
      human: (changed) => `Webhook ${changed.id} is ${changed.state}.`,
    });
  }
}

/** The webhook store of a command. */
async function storeOf({ config, db }: CommandContext): Promise<WebhookStore> {
  return (await webhookDeps(config, await db())).store;
}

function deliveryJson(d: DeliveryDoc): Omit<DeliveryDoc, '_id'> & { id: string } {
  const { _id, ...rest } = d;
  return { id: _id, ...rest };
}
