import Router from '@koa/router';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { html } from '../../http/web/html.js';
import { OPENID, SELF_READ } from '../../oauth/constants.js';
import { connectedApps, disconnectApp } from '../../oauth/connected-apps.js';
import { WEB_CLIENT_ID, type WebKit } from '../web/index.js';
import { consoleShell, pageRenderer, redirectWithFlash, when } from './nav.js';
import type { ConsoleServices } from './services.js';
import { csrfField } from './ui.js';

const TEXT = {
  ko: {
    title: '연결된 앱',
    intro: '내 학교 계정으로 로그인하도록 허용한 앱입니다. 연결을 끊으면 그 앱의 토큰은 바로 멈추고, 다음에 쓰려면 다시 허용해야 합니다.',
    none: '연결된 앱이 없습니다.',
    app: '앱',
    scopes: '권한',
    grantedAt: '허용한 날',
    lastUsed: '마지막 사용',
    actions: '관리',
    revoke: '연결 끊기',
    revokeLabel: (name: string) => `${name} 연결 끊기`,
    revoked: (name: string) => `${name} 앱의 연결을 끊었습니다.`,
    notConnected: '그 앱은 연결되어 있지 않습니다.',
    scopeText: { [SELF_READ]: '내 학생 정보 읽기', [OPENID]: '로그인 확인' } as Record<string, string>,
  },
  en: {
    title: 'Connected apps',
    intro:
      'The apps you allowed to sign you in with your school account. Disconnecting one stops its tokens at once; to use it again, you allow it again.',
    none: 'No connected apps.',
    app: 'App',
    scopes: 'Access',
    grantedAt: 'Allowed',
    lastUsed: 'Last used',
    actions: 'Manage',
    revoke: 'Disconnect',
    revokeLabel: (name: string) => `Disconnect ${name}`,
    revoked: (name: string) => `${name} has been disconnected.`,
    notConnected: 'That app is not connected.',
    scopeText: { [SELF_READ]: 'read your student record', [OPENID]: 'confirm who you are' } as Record<string, string>,
  },
} as const;

/** The apps holding a grant to the signed-in account, and disconnecting one (revoking its grants). */
export function connectedPages(kit: WebKit, services: ConsoleServices): AppMiddleware {
  const router = new Router<RequestState>({ prefix: '/console/connected' });
  const render = pageRenderer(kit, services, consoleShell);
  const signedIn = kit.requireAccount();
  const accountId = (ctx: AppContext) => ctx.state.account?.accountId ?? 0;

  router.get('/', signedIn, async (ctx) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    // Our own consoles sign in as an app too; their sign-ins are under "My account".
    const apps = await connectedApps(services.db, accountId(ctx), [WEB_CLIENT_ID]);
    render(
      ctx,
      200,
      t.title,
      html`<p>${t.intro}</p>
        ${
          apps.length === 0
            ? html`<p>${t.none}</p>`
            : html`<div class="table-wrap">
                <table class="stack">
                  <thead>
                    <tr>
                      <th scope="col">${t.app}</th>
                      <th scope="col">${t.scopes}</th>
                      <th scope="col">${t.grantedAt}</th>
                      <th scope="col">${t.lastUsed}</th>
                      <th scope="col">${t.actions}</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${apps.map(
                      (app) =>
                        html`<tr>
                          <td data-label="${t.app}">
                            ${app.serviceName ?? app.name}${app.serviceName ? html`<br /><span class="muted">${app.name}</span>` : ''}
                          </td>
                          <td data-label="${t.scopes}">
                            ${app.scopes.map((s) => html`<span class="tag" title="${s}">${t.scopeText[s] ?? s}</span> `)}
                          </td>
                          <td data-label="${t.grantedAt}">${when(services, lang, app.grantedAt)}</td>
                          <td data-label="${t.lastUsed}">${when(services, lang, app.lastUsedAt)}</td>
                          <td>
                            <form method="post" action="/console/connected/${encodeURIComponent(app.clientId)}/revoke">
                              ${csrfField(kit.csrf(ctx))}
                              <button type="submit" class="danger" aria-label="${t.revokeLabel(app.serviceName ?? app.name)}">
                                ${t.revoke}
                              </button>
                            </form>
                          </td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </div>`
        }`,
    );
  });

  router.post('/:clientId/revoke', signedIn, kit.form, async (ctx) => {
    const t = TEXT[kit.lang(ctx)];
    const clientId = String(ctx.params['clientId'] ?? '');
    const apps = await connectedApps(services.db, accountId(ctx), [WEB_CLIENT_ID]);
    const app = apps.find((a) => a.clientId === clientId);
    if (!app) return redirectWithFlash(ctx, services, '/console/connected', { kind: 'error', text: t.notConnected });
    const revoked = await disconnectApp(services.db, accountId(ctx), clientId);
    ctx.state.log.info({ event: 'console.app_disconnected', clientId, grants: revoked }, 'connected app disconnected');
    redirectWithFlash(ctx, services, '/console/connected', { kind: 'ok', text: t.revoked(app.serviceName ?? app.name) });
  });

  const routes = router.routes();
  return (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next);
}
