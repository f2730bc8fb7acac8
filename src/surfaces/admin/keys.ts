import { z } from 'zod';
import { ApiKeyCommandError } from '../../data/api-keys.js';
import { csrfField, field, listPage, table, when, withQuery } from '../web/components.js';
import { text } from '../web/forms.js';
import { html } from '../web/html.js';
import { page, redirect, type Handler } from '../web/routes.js';
import type { AdminDeps } from './deps.js';
import { backToList, queryInt } from './ui.js';

/** Keys per page of the list. */
const PAGE_SIZE = 50;
const LIST = '/admin/keys';
/** Owners a search by email looks at. */
const OWNER_MATCHES = 200;

const backForm = z.object({ back: text() });

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
          key.scopes.join(', '),
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
