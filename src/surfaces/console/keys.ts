import { z } from 'zod';
import { keyPolicyRole, splitKeyRequest, type AccountStanding } from '../../auth/policy.js';
import type { RolePolicy } from '../../config/scope-policy.js';
import { addDays, todayIn } from '../../calendar.js';
import {
  API_SCOPES,
  ApiKeyCommandError,
  MAX_ACTIVE_KEYS_PER_ACCOUNT,
  MAX_KEY_LABEL_LENGTH,
  MAX_PURPOSE_LENGTH,
  MAX_ROTATION_GRACE_SECONDS,
  type ApiKeySummary,
} from '../../data/keys/store.js';
import { NotFoundError } from '../../errors/index.js';
import { actionCard, choices, csrfField, errorSummary, facts, field, type FieldError, table, when } from '../web/components.js';
import { list, parseForm, text } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import { fillDays, usageChart } from './chart.js';
import { keySnippets } from './first-hour.js';
import type { ConsoleDeps } from './deps.js';

/** Days the usage chart shows, today included. */
const CHART_DAYS = 30;
const MAX_GRACE_HOURS = MAX_ROTATION_GRACE_SECONDS / 3600;

const accountOf = (req: PageRequest) => req.account?.accountId ?? 0;

/** The create form: a label and at least one scope (the page's words for each refusal). */
const createForm = (t: PageRequest['t']) =>
  z.object({
    label: text().pipe(z.string().max(MAX_KEY_LABEL_LENGTH, t.console.keys.labelTooLong)),
    scopes: list().pipe(z.array(z.enum(API_SCOPES, { error: t.console.keys.noScope })).min(1, t.console.keys.noScope)),
    purpose: text().pipe(z.string().max(MAX_PURPOSE_LENGTH, t.console.keys.purposeTooLong)),
  });

/** A key's scopes (or an app's data scopes) with where each stands (approved, awaiting approval, refused). */
export function scopeTags(t: PageRequest['t'], key: Pick<ApiKeySummary, 'scopeStates'>): Html {
  return html`${Object.entries(key.scopeStates).map(
    ([scope, state]) =>
      html`<span class="tag" data-scope-state="${state}"
        >${scope}${state === 'approved' ? '' : ` · ${t.console.keys.scopeStates[state]}`}</span
      > `,
  )}`;
}

/** The rotate form: a grace period of whole hours. */
const rotateForm = (t: PageRequest['t']) =>
  z.object({
    graceHours: text().pipe(
      z
        .string()
        .regex(/^\d{1,2}$/, t.console.keys.badGrace)
        .transform(Number)
        .pipe(z.number().max(MAX_GRACE_HOURS, t.console.keys.badGrace)),
    ),
  });

/** GET /console/keys, and the create form again with its errors. */
async function listPage(
  req: PageRequest,
  deps: ConsoleDeps,
  values: { label: string; scopes: readonly string[]; purpose: string },
  errors: FieldError[] = [],
  status = 200,
): Promise<Outcome> {
  const { t } = req;
  const k = t.console.keys;
  const keys = await deps.apiKeys.listOwnedBy(accountOf(req), deps.now());
  const policy = rowOf(req, deps);
  return page(
    k.title,
    html`<p>${k.intro(MAX_ACTIVE_KEYS_PER_ACCOUNT)}</p>
      <section class="card" aria-labelledby="create-key">
        <h2 id="create-key">${k.create}</h2>
        ${errorSummary(t, errors)}
        <form method="post" action="/console/keys" novalidate>
          ${csrfField(req.csrf)}
          ${field({ name: 'label', label: k.label, value: values.label, hint: k.labelHint, maxlength: MAX_KEY_LABEL_LENGTH, errors })}
          ${choices({
            name: 'scopes',
            legend: k.scopes,
            type: 'checkbox',
            options: API_SCOPES.map((scope) => ({
              value: scope,
              label: scope,
              hint: `${t.console.scopes[scope]} · ${
                (policy.granted as readonly string[]).includes(scope)
                  ? k.policy.granted
                  : (policy.approval as readonly string[]).includes(scope)
                    ? k.policy.approval
                    : k.policy.none
              }`,
            })),
            checked: values.scopes,
            errors,
          })}
          ${field({ name: 'purpose', label: k.purpose, value: values.purpose, hint: k.purposeHint, maxlength: MAX_PURPOSE_LENGTH, errors })}
          <div class="actions"><button type="submit">${k.createButton}</button></div>
        </form>
      </section>
      ${table(t, {
        columns: [k.labelShort, k.prefix, k.scopes, k.state, k.lastUsed, k.expires],
        rows: keys,
        empty: k.none,
        rowClass: (key) => (key.state === 'active' ? '' : 'inactive'),
        cells: (key) => [
          { content: html`<a href="/console/keys/${key.id}">${key.label ?? k.unnamed}</a>`, rowHeader: true },
          html`<code>${key.prefix}…</code>`,
          scopeTags(t, key),
          k.states[key.state],
          when(deps, t, key.lastUsedAt),
          when(deps, t, key.expiresAt),
        ],
      })}`,
    status,
  );
}

export const keyList: Handler<ConsoleDeps> = async (req, deps) => listPage(req, deps, { label: '', scopes: [], purpose: '' });

export const createKey: Handler<ConsoleDeps> = async (req, deps) => {
  const { t } = req;
  const form = parseForm(createForm(t), req.form);
  const values = {
    label: typeof req.form['label'] === 'string' ? req.form['label'].trim() : '',
    scopes: [req.form['scopes'] ?? []].flat(),
    purpose: typeof req.form['purpose'] === 'string' ? req.form['purpose'].trim().slice(0, MAX_PURPOSE_LENGTH) : '',
  };
  if (!form.ok) return listPage(req, deps, values, form.errors, 422);
  // The scope policy under the signed-in account's standing now (src/auth/policy.ts): refusals at their fields.
  const standing = standingOfViewer(req);
  const split = splitKeyRequest(standing, form.value.scopes, deps.config.policy);
  if (split.refused.length > 0)
    return listPage(req, deps, values, [{ field: 'scopes', message: t.console.keys.notAllowed(split.refused.join(', ')) }], 422);
  const pending = split.pending;
  if (pending.length > 0 && !form.value.purpose)
    return listPage(req, deps, values, [{ field: 'purpose', message: t.console.keys.purposeNeeded(pending.join(', ')) }], 422);
  try {
    const issued = await deps.apiKeys.request(
      standing,
      { scopes: form.value.scopes, label: form.value.label || null, purpose: form.value.purpose || null },
      deps.now(),
    );
    req.ctx.state.log.info({ event: 'console.key_created', keyId: issued.summary.id }, 'API key created in the console');
    return redirect(`/console/keys/${issued.summary.id}`, {
      kind: 'ok',
      text: pending.length > 0 ? t.console.keys.createdPending(pending.join(', ')) : t.console.keys.created,
      secret: { label: t.console.keys.newKey, value: issued.key },
      // The first hour: a request to paste right away, with the key (shown once, like the key).
      // A scope already granted first, so the curl answers now rather than after an approval.
      snippets: keySnippets(t, deps.config, issued.key, [...form.value.scopes.filter((s) => !pending.includes(s)), ...pending]),
    });
  } catch (err) {
    if (!(err instanceof ApiKeyCommandError)) throw err;
    return listPage(req, deps, values, [{ field: 'label', message: t.console.keys.tooMany(MAX_ACTIVE_KEYS_PER_ACCOUNT) }], 422);
  }
};

/** The signed-in account's key of the address; another's key is "not found" too. */
async function ownKey(req: PageRequest, deps: ConsoleDeps): Promise<ApiKeySummary> {
  const key = await deps.apiKeys.get(req.param('id'), { ownerAccountId: accountOf(req) }, deps.now());
  if (!key) throw new NotFoundError('No such API key.');
  return key;
}

async function detailPage(
  req: PageRequest,
  deps: ConsoleDeps,
  key: ApiKeySummary,
  errors: FieldError[] = [],
  grace = '1',
): Promise<Outcome> {
  const { t } = req;
  const k = t.console.keys;
  const today = todayIn(deps.config.schoolTimeZone, deps.now());
  const days = Array.from({ length: CHART_DAYS }, (_, i) => addDays(today, i - CHART_DAYS + 1));
  const usage = await deps.apiKeys.usage(key.id, days[0] ?? today, today);
  const base = `/console/keys/${key.id}`;
  const actions: Html =
    key.state === 'revoked'
      ? html`<p class="hint">${k.inactive}</p>`
      : html`${errorSummary(t, errors)}
        ${actionCard({ id: 'renew', title: k.renew, hint: k.renewHint, action: `${base}/renew`, csrf: req.csrf, kind: 'secondary' })}
        ${actionCard({
          id: 'rotate',
          title: k.rotate,
          hint: k.rotateHint,
          action: `${base}/rotate`,
          csrf: req.csrf,
          kind: 'primary',
          fields: field({
            name: 'graceHours',
            label: k.grace,
            type: 'number',
            value: grace,
            min: 0,
            max: MAX_GRACE_HOURS,
            required: true,
            inputmode: 'numeric',
            hint: k.graceHint,
            errors,
          }),
        })}
        ${actionCard({ id: 'revoke', title: k.revoke, hint: k.revokeHint, action: `${base}/revoke`, csrf: req.csrf, kind: 'danger' })}`;
  return page(
    k.keyTitle(key.label ?? k.unnamed),
    html`<p><a href="/console/keys">← ${k.back}</a></p>
      <div class="card">
        ${facts([
          [k.prefix, html`<code>${key.prefix}…</code>`],
          [k.scopes, scopeTags(t, key)],
          ...(key.purpose ? ([[k.purpose, key.purpose]] as [string, string][]) : []),
          [k.state, k.states[key.state]],
          [k.createdAt, when(deps, t, key.createdAt)],
          [k.expires, when(deps, t, key.expiresAt)],
          [k.lastUsed, when(deps, t, key.lastUsedAt)],
        ])}
        ${key.previous ? html`<p class="hint">${k.graceUntil(key.previous.prefix, when(deps, t, key.previous.expiresAt))}</p>` : ''}
      </div>
      <h2>${k.usage}</h2>
      ${usageChart(t, fillDays(days, usage))} ${actions}`,
    errors.length > 0 ? 422 : 200,
  );
}

export const keyDetail: Handler<ConsoleDeps> = async (req, deps) => detailPage(req, deps, await ownKey(req, deps));

export const renewKey: Handler<ConsoleDeps> = async (req, deps) => {
  const key = await ownKey(req, deps);
  const k = req.t.console.keys;
  try {
    await deps.apiKeys.renew(key.id, undefined, deps.now(), { ownerAccountId: accountOf(req) });
  } catch (err) {
    if (!(err instanceof ApiKeyCommandError)) throw err;
    return redirect(`/console/keys/${key.id}`, { kind: 'error', text: k.inactive });
  }
  return redirect(`/console/keys/${key.id}`, { kind: 'ok', text: k.renewed });
};

export const rotateKey: Handler<ConsoleDeps> = async (req, deps) => {
  const key = await ownKey(req, deps);
  const { t } = req;
  const k = t.console.keys;
  const form = parseForm(rotateForm(t), req.form);
  if (!form.ok) return detailPage(req, deps, key, form.errors, typeof req.form['graceHours'] === 'string' ? req.form['graceHours'] : '');
  const hours = form.value.graceHours;
  try {
    const rotated = await deps.apiKeys.rotate(key.id, deps.now(), { ownerAccountId: accountOf(req), graceSeconds: hours * 3600 });
    req.ctx.state.log.info({ event: 'console.key_rotated', keyId: key.id, graceHours: hours }, 'API key rotated in the console');
    return redirect(`/console/keys/${key.id}`, { kind: 'ok', text: k.rotated, secret: { label: k.rotatedKey, value: rotated.key } });
  } catch (err) {
    if (!(err instanceof ApiKeyCommandError)) throw err;
    return redirect(`/console/keys/${key.id}`, { kind: 'error', text: k.inactive });
  }
};

export const revokeKey: Handler<ConsoleDeps> = async (req, deps) => {
  const key = await ownKey(req, deps);
  await deps.apiKeys.revoke(key.id, deps.now(), { ownerAccountId: accountOf(req) });
  req.ctx.state.log.info({ event: 'console.key_revoked', keyId: key.id }, 'API key revoked in the console');
  return redirect(`/console/keys/${key.id}`, { kind: 'ok', text: req.t.console.keys.revoked });
};

/** The signed-in account's standing, as the privilege rules read it (the console's tables always have one). */
function standingOfViewer(req: PageRequest): AccountStanding {
  if (!req.account) throw new Error('the console needs a signed-in account');
  return req.account.standing;
}

/** The row of the scope table the viewer's keys (and apps) are judged by now (a staff role without its factor: USER's). */
export function rowOf(req: PageRequest, deps: ConsoleDeps): RolePolicy {
  return deps.config.policy.scopePolicy[keyPolicyRole(standingOfViewer(req), deps.config.policy)];
}
