import { z } from 'zod';
import { ApiKeyCommandError } from '../../data/keys/store.js';
import { csrfField, field, listPage, table, when, withQuery } from '../web/components.js';
import { oneOf, text } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import { page, redirect, type Handler, type PageRequest } from '../web/routes.js';
import { scopeTags } from '../console/keys.js';
import type { AdminDeps } from './deps.js';
import { backToList, queryInt } from './ui.js';

/** Keys per page of the list. */
const PAGE_SIZE = 50;
const LIST = '/admin/keys';
/** Owners a search by email looks at. */
const OWNER_MATCHES = 200;

const backForm = z.object({ back: text() });
const decisionForm = z.object({ decision: oneOf(['approve', 'refuse'] as const), back: text() });

/**
 * The requests for key scopes that wait for an admin: owner, purpose, the scopes asked
 * for, approve or refuse. Shown on /admin; empty when nothing waits.
 */
export async function pendingKeyRequests(req: PageRequest, deps: AdminDeps): Promise<Html> {
  const { t } = req;
  const k = t.admin.keys;
  const pending = await deps.apiKeys.listPending(deps.now());
  if (pending.length === 0) return html``;
  const ownerIds = [...new Set(pending.map((key) => key.ownerAccountId).filter((id): id is number => id !== null))];
  const owners = new Map((await deps.accountStore.findByIds(ownerIds)).map((a) => [a._id, a]));
  return html`<section aria-labelledby="pending-keys">
    <h2 id="pending-keys">${k.pendingTitle(pending.length)}</h2>
    ${table(t, {
      columns: [k.owner, k.purpose, k.pendingScopes, k.scopes, k.requestedAt, k.actions],
      rows: pending,
      cells: (key) => {
        const owner = key.ownerAccountId === null ? undefined : owners.get(key.ownerAccountId);
        return [
          {
            content: html`${owner?.email ?? k.cli}<br /><span class="muted"
                >${owner ? t.roles[owner.role] : ''} · <code>${key.prefix}…</code></span
              >`,
            rowHeader: true,
          },
          key.purpose ?? '—',
          html`<strong>${key.pendingScopes.join(', ')}</strong>`,
          key.scopes.join(', ') || '—',
          when(deps, t, key.createdAt),
          html`<form method="post" action="${LIST}/${key.id}/scopes" class="inline">
            ${csrfField(req.csrf)}
            <input type="hidden" name="back" value="/admin" />
            <button type="submit" name="decision" value="approve" aria-label="${k.approveLabel(key.prefix)}">${k.approve}</button>
            <button type="submit" name="decision" value="refuse" class="danger" aria-label="${k.refuseLabel(key.prefix)}">
              ${k.refuse}
            </button>
          </form>`,
        ];
      },
    })}
  </section>`;
}

/** POST /admin/keys/:id/scopes: approve or refuse a key's pending scopes; written to the access log. */
export const decideKeyScopes: Handler<AdminDeps> = async (req, deps) => {
  const k = req.t.admin.keys;
  const form = decisionForm.parse(req.form);
  const back = form.back === '/admin' ? '/admin' : backToList(LIST, form.back);
  const actor = req.account;
  if (!actor || !form.decision) return redirect(back, { kind: 'error', text: k.notPending });
  const approve = form.decision === 'approve';
  try {
    const decided = await deps.apiKeys.decide(req.param('id'), approve, actor.accountId, deps.now());
    const owner = decided.after.ownerAccountId === null ? null : await deps.accountStore.findById(decided.after.ownerAccountId);
    await deps.audit.record(
      { kind: 'ACCOUNT', id: actor.accountId, email: actor.email },
      {
        action: approve ? 'KEY_SCOPES_APPROVED' : 'KEY_SCOPES_REFUSED',
        target: { kind: 'API_KEY', id: decided.after.id, label: `${decided.after.prefix}… (${owner?.email ?? 'CLI'})` },
        detail: { scopes: decided.decided, purpose: decided.after.purpose, before: decided.before.scopes, after: decided.after.scopes },
      },
    );
    return redirect(back, { kind: 'ok', text: approve ? k.scopesApproved(decided.after.prefix) : k.scopesRefused(decided.after.prefix) });
  } catch (err) {
    if (!(err instanceof ApiKeyCommandError)) throw err;
    return redirect(back, { kind: 'error', text: k.notPending });
  }
};

/** The admin console's API keys of every user (ADMIN and ROOT): search, extend, revoke. */
export const keyList: Handler<AdminDeps> = async (req, deps) => {
  const { t } = req;
  const k = t.admin.keys;
  const q = req.query('q');
  const pageNumber = queryInt(req, 'page', 0, 10_000) ?? 0;
  const owners = q ? (await deps.accountStore.search({ text: q, skip: 0, limit: OWNER_MATCHES })).accounts.map((a) => a._id) : [];
  const found = await deps.apiKeys.search({ text: q, ownerAccountIds: owners, skip: pageNumber * PAGE_SIZE, limit: PAGE_SIZE }, deps.now());
  const ownerIds = [...new Set(found.keys.map((key) => key.ownerAccountId).filter((id): id is number => id !== null))];
  const emails = new Map((await deps.accountStore.findByIds(ownerIds)).map((a) => [a._id, a.email]));
  const here = withQuery(LIST, { q, page: pageNumber || null });
  return page(
    k.title,
    listPage(t, {
      path: LIST,
      before: html`<p>${k.intro}</p>`,
      filters: [field({ name: 'q', label: k.search, value: q, type: 'search' })],
      table: table(t, {
        columns: [k.prefix, k.label, k.owner, k.scopes, k.state, k.lastUsed, k.expires, k.actions],
        rows: found.keys,
        rowClass: (key) => (key.state === 'active' ? '' : 'inactive'),
        cells: (key) => [
          { content: html`<code>${key.prefix}…</code>`, rowHeader: true },
          key.label ?? '—',
          key.ownerAccountId === null ? k.cli : (emails.get(key.ownerAccountId) ?? k.deleted),
          scopeTags(t, key),
          k.states[key.state],
          when(deps, t, key.lastUsedAt),
          when(deps, t, key.expiresAt),
          key.state === 'revoked'
            ? '—'
            : html`<form method="post" action="${LIST}/${key.id}/renew" class="inline">
                  ${csrfField(req.csrf)}
                  <input type="hidden" name="back" value="${here}" />
                  <button type="submit" class="secondary" aria-label="${k.renewLabel(key.prefix)}">${k.renew}</button>
                </form>
                <form method="post" action="${LIST}/${key.id}/revoke" class="inline">
                  ${csrfField(req.csrf)}
                  <input type="hidden" name="back" value="${here}" />
                  <button type="submit" class="danger" aria-label="${k.revokeLabel(key.prefix)}">${k.revoke}</button>
                </form>`,
        ],
      }),
      page: pageNumber,
      totalPages: Math.ceil(found.total / PAGE_SIZE),
      params: { q },
    }),
  );
};

export const renewKey: Handler<AdminDeps> = async (req, deps) => {
  const k = req.t.admin.keys;
  const back = backToList(LIST, backForm.parse(req.form).back);
  const key = await deps.apiKeys.get(req.param('id'), {}, deps.now());
  if (!key) return redirect(back, { kind: 'error', text: k.unknown });
  try {
    await deps.apiKeys.renew(key.id, undefined, deps.now());
  } catch (err) {
    if (!(err instanceof ApiKeyCommandError)) throw err;
    return redirect(back, { kind: 'error', text: k.refused });
  }
  // No audit log of key changes exists yet (src/data/school/audit.ts is the school data's): the change is logged.
  req.ctx.state.log.info({ event: 'admin.key_renewed', actorId: req.account?.accountId, keyId: key.id }, 'API key extended by an admin');
  return redirect(back, { kind: 'ok', text: k.renewed(key.prefix) });
};

export const revokeKey: Handler<AdminDeps> = async (req, deps) => {
  const k = req.t.admin.keys;
  const back = backToList(LIST, backForm.parse(req.form).back);
  const key = await deps.apiKeys.get(req.param('id'), {}, deps.now());
  if (!key) return redirect(back, { kind: 'error', text: k.unknown });
  await deps.apiKeys.revoke(key.id, deps.now());
  req.ctx.state.log.info({ event: 'admin.key_revoked', actorId: req.account?.accountId, keyId: key.id }, 'API key revoked by an admin');
  return redirect(back, { kind: 'ok', text: k.revoked(key.prefix) });
};
