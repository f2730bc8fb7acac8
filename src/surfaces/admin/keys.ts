import Router from '@koa/router';
import { STAFF_ROLES } from '../../auth/principal.js';
import { AccountStore } from '../../data/accounts.js';
import { ApiKeyCommandError } from '../../data/api-keys.js';
import type { AppMiddleware, RequestState } from '../../http/context.js';
import { html } from '../../http/web/html.js';
import { pageRenderer, redirectWithFlash, when } from '../console/nav.js';
import { consoleServices } from '../console/services.js';
import { csrfField } from '../console/ui.js';
import type { AppDeps } from '../types.js';
import type { WebKit } from '../web/index.js';
import { adminShell } from './nav.js';
import { backToList, inputField, listPage, listTable, queryInt, queryText, withQuery } from './ui.js';

/** Keys per page of the list. */
const PAGE_SIZE = 50;
const LIST = '/admin/keys';

const TEXT = {
  ko: {
    title: 'API 키',
    intro:
      '모든 사용자의 API 키입니다. 폐기하면 바로 멈추고, 연장하면 같은 값을 30일 더 쓸 수 있습니다. 값은 어디에도 저장되지 않아 볼 수 없습니다.',
    search: '키 앞부분·이름·소유자 이메일 찾기',
    prefix: '키 앞부분',
    label: '이름',
    owner: '소유자',
    cli: 'CLI (운영자)',
    deleted: '(삭제된 계정)',
    scopes: '권한',
    state: '상태',
    lastUsed: '마지막 사용',
    expires: '만료',
    actions: '관리',
    states: { active: '사용 중', expired: '만료됨', revoked: '폐기됨' },
    renew: '30일 연장',
    revoke: '폐기',
    renewLabel: (prefix: string) => `${prefix}… 30일 연장`,
    revokeLabel: (prefix: string) => `${prefix}… 폐기`,
    renewed: (prefix: string) => `${prefix}… 키를 연장했습니다.`,
    revoked: (prefix: string) => `${prefix}… 키를 폐기했습니다.`,
    refused: '폐기된 키는 연장할 수 없습니다.',
    unknown: '그 키가 없습니다.',
    never: '없음',
  },
  en: {
    title: 'API keys',
    intro:
      'Every user’s API keys. Revoking stops a key at once; extending keeps the same value working for 30 more days. Values are stored nowhere and cannot be shown.',
    search: 'Find by prefix, label or owner email',
    prefix: 'Prefix',
    label: 'Label',
    owner: 'Owner',
    cli: 'CLI (operators)',
    deleted: '(deleted account)',
    scopes: 'Scopes',
    state: 'State',
    lastUsed: 'Last used',
    expires: 'Expires',
    actions: 'Manage',
    states: { active: 'active', expired: 'expired', revoked: 'revoked' },
    renew: 'Extend 30 days',
    revoke: 'Revoke',
    renewLabel: (prefix: string) => `Extend ${prefix}… by 30 days`,
    revokeLabel: (prefix: string) => `Revoke ${prefix}…`,
    renewed: (prefix: string) => `Key ${prefix}… has been extended.`,
    revoked: (prefix: string) => `Key ${prefix}… has been revoked.`,
    refused: 'A revoked key cannot be extended.',
    unknown: 'There is no such key.',
    never: 'never',
  },
} as const;

/** The admin console's API keys of every user (ADMIN and ROOT): search, extend, revoke. */
export function adminKeyPages(deps: AppDeps, kit: WebKit): AppMiddleware {
  const services = consoleServices(kit);
  const render = pageRenderer(kit, services, adminShell);
  const staff = kit.requireAccount(STAFF_ROLES);
  const accounts = new AccountStore(deps.db);
  const router = new Router<RequestState>({ prefix: '/admin/keys' });

  router.get('/', staff, async (ctx) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const q = queryText(ctx, 'q');
    const page = queryInt(ctx, 'page', 0, 10_000) ?? 0;
    const owners = q ? (await accounts.search({ text: q, skip: 0, limit: 200 })).accounts.map((a) => a._id) : [];
    const found = await services.apiKeys.search(
      { text: q, ownerAccountIds: owners, skip: page * PAGE_SIZE, limit: PAGE_SIZE },
      services.now(),
    );
    const ownerIds = [...new Set(found.keys.map((k) => k.ownerAccountId).filter((id): id is number => id !== null))];
    const emails = new Map((await accounts.findByIds(ownerIds)).map((a) => [a._id, a.email]));
    const here = withQuery(LIST, { q, page: page || null });
    render(
      ctx,
      200,
      t.title,
      listPage(lang, {
        path: LIST,
        before: html`<p>${t.intro}</p>`,
        filters: [inputField({ name: 'q', label: t.search, value: q, errors: new Map(), type: 'search' })],
        table: listTable(
          lang,
          null,
          [t.prefix, t.label, t.owner, t.scopes, t.state, t.lastUsed, t.expires, t.actions],
          found.keys,
          (k) =>
            html`<tr class="${k.state === 'active' ? '' : 'inactive'}">
              <td><code>${k.prefix}…</code></td>
              <td>${k.label ?? '—'}</td>
              <td>${k.ownerAccountId === null ? t.cli : (emails.get(k.ownerAccountId) ?? t.deleted)}</td>
              <td>${k.scopes.join(', ')}</td>
              <td>${t.states[k.state]}</td>
              <td>${when(services, lang, k.lastUsedAt)}</td>
              <td>${when(services, lang, k.expiresAt)}</td>
              <td>
                ${
                  k.state === 'revoked'
                    ? '—'
                    : html`<form method="post" action="/admin/keys/${k.id}/renew" class="inline">
                          ${csrfField(kit.csrf(ctx))}
                          <input type="hidden" name="back" value="${here}" />
                          <button type="submit" class="secondary" aria-label="${t.renewLabel(k.prefix)}">${t.renew}</button>
                        </form>
                        <form method="post" action="/admin/keys/${k.id}/revoke" class="inline">
                          ${csrfField(kit.csrf(ctx))}
                          <input type="hidden" name="back" value="${here}" />
                          <button type="submit" class="danger" aria-label="${t.revokeLabel(k.prefix)}">${t.revoke}</button>
                        </form>`
                }
              </td>
            </tr>`,
        ),
        page,
        totalPages: Math.ceil(found.total / PAGE_SIZE),
        params: { q },
      }),
    );
  });

  router.post('/:id/renew', staff, kit.form, async (ctx) => {
    const t = TEXT[kit.lang(ctx)];
    const back = backToList(LIST, kit.fields(ctx)['back']);
    const id = String(ctx.params['id'] ?? '');
    const key = await services.apiKeys.get(id, {}, services.now());
    if (!key) return redirectWithFlash(ctx, services, back, { kind: 'error', text: t.unknown });
    try {
      await services.apiKeys.renew(key.id, undefined, services.now());
    } catch (err) {
      if (!(err instanceof ApiKeyCommandError)) throw err;
      return redirectWithFlash(ctx, services, back, { kind: 'error', text: t.refused });
    }
    // No audit log of key changes exists yet (src/data/audit.ts): the change is logged.
    ctx.state.log.info(
      { event: 'admin.key_renewed', actorId: ctx.state.account?.accountId, keyId: key.id },
      'API key extended by an admin',
    );
    redirectWithFlash(ctx, services, back, { kind: 'ok', text: t.renewed(key.prefix) });
  });

  router.post('/:id/revoke', staff, kit.form, async (ctx) => {
    const t = TEXT[kit.lang(ctx)];
    const back = backToList(LIST, kit.fields(ctx)['back']);
    const key = await services.apiKeys.get(String(ctx.params['id'] ?? ''), {}, services.now());
    if (!key) return redirectWithFlash(ctx, services, back, { kind: 'error', text: t.unknown });
    await services.apiKeys.revoke(key.id, services.now());
    ctx.state.log.info({ event: 'admin.key_revoked', actorId: ctx.state.account?.accountId, keyId: key.id }, 'API key revoked by an admin');
    redirectWithFlash(ctx, services, back, { kind: 'ok', text: t.revoked(key.prefix) });
  });

  const routes = router.routes();
  return (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next);
}
