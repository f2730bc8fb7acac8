import { connectedApps, disconnectApp } from '../../oauth/connected-apps.js';
import { csrfField, table, when } from '../web/components.js';
import { html } from '../web/html.js';
import { page, redirect, type Handler, type PageRequest } from '../web/routes.js';
import { WEB_CLIENT_ID } from '../web/signin.js';
import type { ConsoleDeps } from './deps.js';

const accountOf = (req: PageRequest) => req.account?.accountId ?? 0;

/** The apps holding a grant to the signed-in account (our own consoles' sign-ins are under "My account"). */
export const connectedList: Handler<ConsoleDeps> = async (req, deps) => {
  const { t } = req;
  const c = t.console.connected;
  const apps = await connectedApps(deps.db, accountOf(req), [WEB_CLIENT_ID]);
  return page(
    c.title,
    html`<p>${c.intro}</p>
      ${table(t, {
        columns: [c.app, c.scopes, c.grantedAt, c.lastUsed, c.actions],
        rows: apps,
        empty: c.none,
        cells: (app) => [
          {
            content: html`${app.serviceName ?? app.name}${app.serviceName ? html`<br /><span class="muted">${app.name}</span>` : ''}`,
            rowHeader: true,
          },
          html`${app.scopes.map((s) => html`<span class="tag" title="${s}">${c.scopeText[s] ?? s}</span> `)}`,
          when(deps, t, app.grantedAt),
          when(deps, t, app.lastUsedAt),
          html`<form method="post" action="/console/connected/${encodeURIComponent(app.clientId)}/revoke">
            ${csrfField(req.csrf)}
            <button type="submit" class="danger" aria-label="${c.revokeLabel(app.serviceName ?? app.name)}">${c.revoke}</button>
          </form>`,
        ],
      })}`,
  );
};

/** Disconnects an app: revokes every grant it holds to the account. */
export const disconnect: Handler<ConsoleDeps> = async (req, deps) => {
  const c = req.t.console.connected;
  const clientId = req.param('clientId');
  const apps = await connectedApps(deps.db, accountOf(req), [WEB_CLIENT_ID]);
  const app = apps.find((a) => a.clientId === clientId);
  if (!app) return redirect('/console/connected', { kind: 'error', text: c.notConnected });
  const revoked = await disconnectApp(deps.db, accountOf(req), clientId);
  req.ctx.state.log.info({ event: 'console.app_disconnected', clientId, grants: revoked }, 'connected app disconnected');
  return redirect('/console/connected', { kind: 'ok', text: c.revoked(app.serviceName ?? app.name) });
};
