import Router from '@koa/router';
import compose from 'koa-compose';
import { MAX_ACTIVE_KEYS_PER_ACCOUNT } from '../../data/api-keys.js';
import type { AppMiddleware, RequestState } from '../../http/context.js';
import { html } from '../../http/web/html.js';
import { MAX_APPS_PER_ACCOUNT } from '../../oauth/clients.js';
import { connectedApps } from '../../oauth/connected-apps.js';
import type { AppDeps } from '../types.js';
import { WEB_CLIENT_ID, type WebKit } from '../web/index.js';
import { accountPages } from './account.js';
import { appPages } from './apps.js';
import { connectedPages } from './connected.js';
import { keyPages } from './keys.js';
import { consoleShell, pageRenderer } from './nav.js';
import { consoleServices } from './services.js';

/**
 * The developer console at /console (any signed-in account): API keys, OAuth apps, connected
 * apps, my account. Each part is a router of its own (./keys.ts, ./apps.ts, ./connected.ts,
 * ./account.ts); the services they share are built by src/surfaces/consoles.ts.
 */
export function createDeveloperConsole(_deps: AppDeps, kit: WebKit): AppMiddleware {
  const services = consoleServices(kit);
  const render = pageRenderer(kit, services, consoleShell);
  const router = new Router<RequestState>({ prefix: '/console' });
  router.get('/', kit.requireAccount(), async (ctx) => {
    const ko = kit.lang(ctx) === 'ko';
    const accountId = ctx.state.account?.accountId ?? 0;
    const [keys, apps, connected] = await Promise.all([
      services.apiKeys.countActiveOwnedBy(accountId, services.now()),
      services.clients.listOwnedBy(accountId),
      connectedApps(services.db, accountId, [WEB_CLIENT_ID]),
    ]);
    const card = (href: string, title: string, text: string) =>
      html`<li class="card">
        <h2><a href="${href}">${title}</a></h2>
        <p>${text}</p>
      </li>`;
    render(
      ctx,
      200,
      ko ? '개발자 콘솔' : 'Developer console',
      html`<ul class="cards">
        ${card('/console/keys', ko ? 'API 키' : 'API keys', ko ? `활성 키 ${keys} / ${MAX_ACTIVE_KEYS_PER_ACCOUNT}개` : `${keys} of ${MAX_ACTIVE_KEYS_PER_ACCOUNT} active keys`)}
        ${card('/console/apps', ko ? 'OAuth 앱' : 'OAuth apps', ko ? `등록한 앱 ${apps.length} / ${MAX_APPS_PER_ACCOUNT}개` : `${apps.length} of ${MAX_APPS_PER_ACCOUNT} apps`)}
        ${card('/console/connected', ko ? '연결된 앱' : 'Connected apps', ko ? `내 계정을 쓰는 앱 ${connected.length}개` : `${connected.length} apps use your account`)}
        ${card('/console/account', ko ? '내 계정' : 'My account', ko ? '비밀번호, 로그아웃, 계정 삭제' : 'Password, sign-out, deletion')}
      </ul>`,
    );
  });
  const routes = router.routes();
  return compose([
    (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next),
    keyPages(kit, services),
    appPages(kit, services),
    connectedPages(kit, services),
    accountPages(kit, services),
  ]);
}
