import { z } from 'zod';
import { EVENT_TYPES, scopesReceiving } from '../../data/events/types.js';
import { ConflictError, NotFoundError } from '../../errors/index.js';
import {
  MAX_WEBHOOKS_PER_ACCOUNT,
  parseEventTypes,
  type DeliveryDoc,
  type WebhookActor,
  type WebhookDoc,
} from '../../data/events/webhooks.js';
import { redeliver, sendTestEvent } from '../../events/delivery.js';
import { checkTargetUrl, MAX_URL_LENGTH, UnsafeTargetError } from '../../events/targets.js';
import { WEBHOOK_SEND_LIMIT } from '../../limits.js';
import { choices, csrfField, errorSummary, facts, field, table, when, type FieldError } from '../web/components.js';
import { list, text, ticked } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type { ConsoleDeps } from './deps.js';

/*
 * The developer console's webhooks (docs/webhooks.md): the list with the create form,
 * and a webhook's page with its deliveries (each with a redeliver button), a test event, pause or
 * resume, a new secret, deletion. Each action is also a `campus webhooks` command
 * (src/cli/commands/webhooks.ts); both call the same store and senders (src/data/events/webhooks.ts,
 * src/events/delivery.ts). An account sees only its own webhooks: another's is "not found".
 */

/** What the form ticks at first: every student event. */
const FIRST_CHOICES = EVENT_TYPES.filter((type) => type.startsWith('student.'));

const createForm = z.object({ url: text(), events: list() });
type CreateForm = z.infer<typeof createForm>;

const actorOf = (req: PageRequest): WebhookActor => ({ accountId: req.account?.accountId ?? 0 });

function policyOf(deps: ConsoleDeps) {
  return deps.webhooks.policy;
}

function listPage(req: PageRequest, deps: ConsoleDeps, webhooks: WebhookDoc[], values: CreateForm, errors: FieldError[] = []): Outcome {
  const { t } = req;
  const w = t.console.webhooks;
  return page(
    w.title,
    html`<p>${w.intro(MAX_WEBHOOKS_PER_ACCOUNT)}</p>
      <p class="hint">${w.signing}</p>
      ${table(t, {
        columns: [w.url, w.events, w.state, w.createdAt],
        rows: webhooks,
        empty: w.none,
        cells: (hook) => [
          { content: html`<a href="/console/webhooks/${hook._id}" class="url">${hook.url}</a>`, rowHeader: true },
          html`<code>${hook.eventTypes.join(', ')}</code>`,
          stateTag(req, hook),
          when(deps, t, hook.createdAt),
        ],
      })}
      <section class="card" aria-labelledby="create">
        <h2 id="create">${w.create} <span class="muted">${webhooks.length} / ${MAX_WEBHOOKS_PER_ACCOUNT}</span></h2>
        ${errorSummary(t, errors, ['url', 'events'])}
        <form method="post" action="/console/webhooks" novalidate>
          ${csrfField(req.csrf)}
          ${field({ name: 'url', label: w.url, type: 'url', value: values.url, hint: w.urlHint, required: true, maxlength: MAX_URL_LENGTH, errors })}
          ${choices({
            name: 'events',
            legend: w.events,
            type: 'checkbox',
            // Every type of the table (src/data/events/types.ts), with the scopes that receive it.
            options: EVENT_TYPES.map((value) => ({
              value,
              label: value,
              hint: `${w.eventHint(value)} · ${scopesReceiving(value).join(', ')}`,
            })),
            checked: values.events,
            errors,
          })}
          <div class="actions"><button type="submit">${w.createButton}</button></div>
        </form>
      </section>`,
    errors.length > 0 ? 422 : 200,
  );
}

function stateTag(req: PageRequest, hook: WebhookDoc): Html {
  return html`<span class="tag" data-state="${hook.state.toLowerCase()}">${req.t.console.webhooks.states[hook.state]}</span>`;
}

export const webhookList: Handler<ConsoleDeps> = async (req, deps) =>
  listPage(req, deps, await deps.webhooks.store.list(actorOf(req)), { url: '', events: FIRST_CHOICES });

export const createWebhook: Handler<ConsoleDeps> = async (req, deps) => {
  const w = req.t.console.webhooks;
  const values = createForm.parse(req.form);
  const errors: FieldError[] = [];
  let url = '';
  try {
    url = checkTargetUrl(values.url, policyOf(deps)).href;
  } catch (err) {
    if (!(err instanceof UnsafeTargetError)) throw err;
    errors.push({ field: 'url', message: w.badUrl(err.message.replace(/^url: /, '')) });
  }
  if (values.events.length === 0) errors.push({ field: 'events', message: w.noEvents });
  const mine = await deps.webhooks.store.list(actorOf(req));
  if (errors.length > 0) return listPage(req, deps, mine, values, errors);
  try {
    const created = await deps.webhooks.store.create({
      ownerAccountId: req.account?.accountId ?? 0,
      url,
      eventTypes: parseEventTypes(values.events),
    });
    req.ctx.state.log.info({ event: 'console.webhook_created', webhook: created.webhook.id }, 'webhook created in the console');
    return redirect(`/console/webhooks/${created.webhook.id}`, {
      kind: 'ok',
      text: w.created,
      secret: { label: w.secretLabel, value: created.secret },
    });
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    return listPage(req, deps, mine, values, [{ field: 'url', message: w.tooMany(MAX_WEBHOOKS_PER_ACCOUNT) }]);
  }
};

/** The signed-in account's webhook of the address. */
async function ownWebhook(req: PageRequest, deps: ConsoleDeps): Promise<WebhookDoc> {
  return deps.webhooks.store.get(req.param('id'), actorOf(req)).catch(() => {
    throw new NotFoundError('No such webhook.');
  });
}

function deliveriesTable(req: PageRequest, deps: ConsoleDeps, hook: WebhookDoc, deliveries: DeliveryDoc[]): Html {
  const { t } = req;
  const w = t.console.webhooks;
  return table(t, {
    columns: [w.event, w.type, w.deliveryState, w.attempts, w.lastAttempt, ''],
    rows: deliveries,
    empty: w.noDeliveries,
    cells: (d) => {
      const last = d.attempts.at(-1);
      return [
        { content: html`<code>${d.messageId}</code>`, rowHeader: true },
        html`<code>${d.type}</code>`,
        html`<span class="tag" data-state="${d.state.toLowerCase()}">${w.deliveryStates[d.state]}</span>`,
        html`<ol class="attempts">
          ${d.attempts.map(
            (a) =>
              html`<li>
                <strong>${a.status ?? w.noAnswer}</strong> · ${a.durationMs} ms ·
                ${when(deps, t, a.at)}${a.manual ? html` · ${w.byHand}` : ''}
                ${a.response ? html`<br /><span class="muted excerpt">${a.response.slice(0, 200)}</span>` : ''}
              </li>`,
          )}
        </ol>`,
        last ? when(deps, t, last.at) : '—',
        html`<form method="post" action="/console/webhooks/${hook._id}/deliveries/${d._id}/redeliver">
          ${csrfField(req.csrf)}
          <button type="submit" class="secondary" aria-label="${w.redeliverLabel(d.messageId)}">${w.redeliver}</button>
        </form>`,
      ];
    },
  });
}

/** A webhook's page; with `refused`, a send refused for the account's rate (429), said at the top. */
async function detailPage(
  req: PageRequest,
  deps: ConsoleDeps,
  hook: WebhookDoc,
  errors: FieldError[] = [],
  refused?: string,
): Promise<Outcome> {
  const { t } = req;
  const w = t.console.webhooks;
  const deliveries = await deps.webhooks.store.deliveriesOf(hook._id, actorOf(req));
  const base = `/console/webhooks/${hook._id}`;
  const post = (action: string, label: string, kind = 'secondary') =>
    html`<form method="post" action="${base}/${action}">
      ${csrfField(req.csrf)}
      <button type="submit" class="${kind}">${label}</button>
    </form>`;
  return page(
    hook.url,
    html`${refused ? html`<p class="flash error" role="alert">${refused}</p>` : ''}
      <p><a href="/console/webhooks">← ${w.back}</a></p>
      <div class="card">
        ${facts([
          [w.id, html`<code id="webhook-id">${hook._id}</code>`],
          [w.url, html`<code class="url">${hook.url}</code>`],
          [w.events, html`<code>${hook.eventTypes.join(', ')}</code>`],
          [w.state, stateTag(req, hook)],
          [w.failuresLabel, w.failures(hook.failures, hook.nextAttemptAt ? when(deps, t, hook.nextAttemptAt) : null)],
          [w.position, hook.cursor],
          [w.createdAt, when(deps, t, hook.createdAt)],
        ])}
        ${hook.state === 'FAILING' ? html`<p class="hint">${w.failingHint}</p>` : ''}
        <div class="actions">
          ${post('test', w.test, 'primary')} ${hook.state === 'ACTIVE' ? post('pause', w.pause) : post('resume', w.resume)}
        </div>
        <p class="hint">${w.testHint} ${w.pauseHint}</p>
      </div>
      <section class="card" aria-labelledby="deliveries">
        <h2 id="deliveries">${w.deliveries}</h2>
        <p class="hint">${w.deliveriesHint}</p>
        ${deliveriesTable(req, deps, hook, deliveries)}
      </section>
      <section class="card" aria-labelledby="rotate">
        <h2 id="rotate">${w.rotate}</h2>
        <p class="hint">${w.rotateHint}</p>
        ${post('rotate', w.rotate)}
      </section>
      <section class="card" aria-labelledby="delete">
        <h2 id="delete">${w.delete}</h2>
        <p class="hint">${w.deleteHint}</p>
        <form method="post" action="${base}/delete" novalidate>
          ${csrfField(req.csrf)}
          ${choices({ name: 'confirm', legend: w.delete, type: 'checkbox', options: [{ value: 'yes', label: w.deleteConfirm }], checked: [], errors })}
          <div class="actions"><button type="submit" class="danger">${w.delete}</button></div>
        </form>
      </section>`,
    refused ? 429 : errors.length > 0 ? 422 : 200,
  );
}

export const webhookDetail: Handler<ConsoleDeps> = async (req, deps) => detailPage(req, deps, await ownWebhook(req, deps));

/**
 * Spends one of the account's webhook sends (a test event or a redelivery, WEBHOOK_SEND_LIMIT
 * together): undefined when the send may go, else the webhook's page again, 429 with Retry-After.
 */
async function refusedSend(req: PageRequest, deps: ConsoleDeps, hook: WebhookDoc): Promise<Outcome | undefined> {
  const wait = await deps.rates.webhookSends.spend(req.account?.accountId ?? 0);
  if (wait === undefined) return undefined;
  req.ctx.set('Retry-After', String(wait));
  req.ctx.state.log.warn({ event: 'console.webhook_send_limited', webhook: hook._id }, 'webhook send refused: too many sends');
  const { points, durationSeconds } = WEBHOOK_SEND_LIMIT;
  return detailPage(req, deps, hook, [], req.t.console.webhooks.sendsTooOften(points, durationSeconds, wait));
}

export const testWebhook: Handler<ConsoleDeps> = async (req, deps) => {
  const hook = await ownWebhook(req, deps);
  const w = req.t.console.webhooks;
  const refused = await refusedSend(req, deps, hook);
  if (refused) return refused;
  const { attempt } = await sendTestEvent(deps.webhooks, hook._id, actorOf(req));
  return redirect(
    `/console/webhooks/${hook._id}`,
    attempt.ok
      ? { kind: 'ok', text: w.sent }
      : { kind: 'error', text: w.notSent(`${attempt.status ?? w.noAnswer} ${attempt.response}`.trim()) },
  );
};

export const redeliverWebhook: Handler<ConsoleDeps> = async (req, deps) => {
  const hook = await ownWebhook(req, deps);
  const w = req.t.console.webhooks;
  const deliveryId = req.param('deliveryId');
  if (!deliveryId.startsWith(`${hook._id}-`)) throw new NotFoundError('No such delivery.');
  const refused = await refusedSend(req, deps, hook);
  if (refused) return refused;
  const { attempt } = await redeliver(deps.webhooks, deliveryId, actorOf(req));
  return redirect(
    `/console/webhooks/${hook._id}`,
    attempt.ok
      ? { kind: 'ok', text: w.sent }
      : { kind: 'error', text: w.notSent(`${attempt.status ?? w.noAnswer} ${attempt.response}`.trim()) },
  );
};

export const pauseWebhook: Handler<ConsoleDeps> = async (req, deps) => setPaused(req, deps, true);
export const resumeWebhook: Handler<ConsoleDeps> = async (req, deps) => setPaused(req, deps, false);

async function setPaused(req: PageRequest, deps: ConsoleDeps, paused: boolean): Promise<Outcome> {
  const hook = await ownWebhook(req, deps);
  const w = req.t.console.webhooks;
  await deps.webhooks.store.setPaused(hook._id, paused, actorOf(req));
  return redirect(`/console/webhooks/${hook._id}`, { kind: 'ok', text: paused ? w.paused : w.resumed });
}

export const rotateWebhook: Handler<ConsoleDeps> = async (req, deps) => {
  const hook = await ownWebhook(req, deps);
  const w = req.t.console.webhooks;
  const rotated = await deps.webhooks.store.rotate(hook._id, actorOf(req));
  req.ctx.state.log.info({ event: 'console.webhook_secret_rotated', webhook: hook._id }, 'webhook secret rotated in the console');
  return redirect(`/console/webhooks/${hook._id}`, { kind: 'ok', text: w.rotated, secret: { label: w.newSecret, value: rotated.secret } });
};

export const deleteWebhook: Handler<ConsoleDeps> = async (req, deps) => {
  const hook = await ownWebhook(req, deps);
  const w = req.t.console.webhooks;
  if (!z.object({ confirm: ticked() }).parse(req.form).confirm)
    return detailPage(req, deps, hook, [{ field: 'confirm', message: w.confirmNeeded }]);
  await deps.webhooks.store.remove(hook._id, actorOf(req));
  req.ctx.state.log.info({ event: 'console.webhook_deleted', webhook: hook._id }, 'webhook deleted in the console');
  return redirect('/console/webhooks', { kind: 'ok', text: w.deleted });
};
