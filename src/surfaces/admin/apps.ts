import { z } from 'zod';
import { APP_STATES, AppValidationError, type AppState, type AppSummary } from '../../oauth/apps.js';
import { accessActor } from '../../oauth/accounts.js';
import { anyOption, csrfField, field, listPage, select, table, when, withQuery } from '../web/components.js';
import { oneOf, text } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import { page, redirect, type Handler, type PageRequest } from '../web/routes.js';
import type { AdminDeps } from './deps.js';
import { backToList } from './ui.js';
import { scopeStatesOf } from '../../data/keys/store.js';
import type { KeyScopes } from '../../auth/policy.js';
import { scopeTags } from '../console/keys.js';

const LIST = '/admin/apps';
const actionForm = z.object({ action: oneOf(['approve', 'refuse', 'disable', 'enable'] as const), back: text() });

/**
 * GET /admin/apps (docs/oauth.md, "The app registry"): every OAuth app with its owner (an account,
 * or the operator), type, scopes, redirect addresses, the number of people who allowed it, and its
 * state; approve a testing app, disable or enable any app but the consoles' own sign-in.
 */
export const appRegistry: Handler<AdminDeps> = async (req, deps) => {
  const { t } = req;
  const a = t.admin.apps;
  const q = req.query('q').trim().toLowerCase();
  const state = APP_STATES.find((s) => s === req.query('state'));
  const all = await deps.clients.list();
  const ownerIds = [...new Set(all.map((app) => app.ownerAccountId).filter((id): id is number => id !== null))];
  const owners = new Map((await deps.accountStore.findByIds(ownerIds)).map((o) => [o._id, o]));
  const apps = all.filter(
    (app) =>
      (!state || app.state === state) &&
      (!q ||
        app.name.toLowerCase().includes(q) ||
        (app.serviceName ?? '').toLowerCase().includes(q) ||
        app.id.includes(q) ||
        (app.ownerAccountId !== null && (owners.get(app.ownerAccountId)?.email ?? '').includes(q))),
  );
  const granted = await Promise.all(apps.map((app) => deps.clients.grantingAccounts(app.id)));
  // The data scopes of machine tokens, judged by their owners' key policy now: some may await approval.
  const dataScopes = await deps.clients.dataScopeStates(all);
  const testing = all.filter((app) => app.state === 'testing').length;
  const waitingData = all.filter((app) => (dataScopes.get(app.id)?.pending.length ?? 0) > 0).length;
  const here = withQuery(LIST, { q: req.query('q'), state });
  return page(
    a.title,
    listPage(t, {
      path: LIST,
      before: html`<p>${a.intro}</p>
        ${testing > 0 ? html`<p class="flash ok" role="status">${a.testingCount(testing)} <a href="${LIST}?state=testing">${a.showTesting}</a></p>` : ''}
        ${waitingData > 0 ? html`<p class="flash ok" role="status" data-count="apps-data-waiting">${a.dataWaitingCount(waitingData)}</p>` : ''}`,
      filters: [
        field({ name: 'q', label: a.search, value: req.query('q'), type: 'search' }),
        select({
          name: 'state',
          label: a.state,
          value: state,
          options: anyOption(
            t,
            APP_STATES.map((s) => ({ value: s, label: t.appStates[s] })),
          ),
        }),
      ],
      status: a.count(apps.length),
      table: table(t, {
        columns: [a.name, a.owner, a.type, a.scopes, a.redirects, a.granted, a.state, a.actions],
        rows: apps.map((app, i) => ({ app, granted: granted[i] ?? 0 })),
        empty: a.none,
        rowClass: ({ app }) => (app.state === 'active' ? '' : app.state),
        cells: ({ app, granted: count }) => {
          const owner = app.ownerAccountId === null ? undefined : owners.get(app.ownerAccountId);
          return [
            {
              content: html`${app.serviceName ?? app.name}${app.serviceName ? html`<br /><span class="muted">${app.name}</span>` : ''}<br /><code
                  class="muted break"
                  >${app.id}</code
                >`,
              rowHeader: true,
            },
            app.ownerAccountId === null
              ? html`${a.operator}${app.firstParty ? html`<br /><span class="tag">${a.firstParty}</span>` : ''}`
              : html`${owner?.email ?? a.deletedOwner}<br /><span class="muted">${owner ? t.roles[owner.role] : ''}</span>`,
            a.types[app.type],
            html`${app.scopes.map((s) => html`<code>${s}</code> `)}${dataScopeCell(req, dataScopes.get(app.id))}`,
            html`<ul class="plain">
              ${app.redirectUris.map((uri) => html`<li class="break">${uri}</li>`)}
            </ul>`,
            html`<span data-granted="${count}">${count}</span>`,
            html`<span class="tag" data-state="${app.state}">${t.appStates[app.state]}</span>${
                app.approvedAt ? html`<br /><span class="muted">${a.approvedAt} ${when(deps, t, app.approvedAt)}</span>` : ''
              }`,
            actions(req, app, here, dataScopes.get(app.id)?.pending.length ?? 0),
          ];
        },
      }),
      page: 0,
      totalPages: 1,
      params: { q: req.query('q'), state },
    }),
  );
};

/** The data scopes of an app's machine tokens, each with where it stands (none: nothing). */
function dataScopeCell(req: PageRequest, scopes: KeyScopes | undefined): Html | string {
  if (!scopes || scopes.effective.length + scopes.pending.length + scopes.refused.length === 0) return '';
  return html`<br /><span class="muted">${req.t.admin.apps.dataScopes}</span> ${scopeTags(req.t, { scopeStates: scopeStatesOf(scopes) })}`;
}

/**
 * An app's buttons: approve a testing app or the data scopes its machine tokens wait for (refuse
 * those); disable an enabled app, enable a disabled one (not the consoles' own sign-in).
 */
function actions(req: PageRequest, app: AppSummary, back: string, pendingData: number): Html {
  const a = req.t.admin.apps;
  const button = (action: 'approve' | 'refuse' | 'disable' | 'enable', label: string, aria: string, className = '') =>
    html`<form method="post" action="${LIST}/${encodeURIComponent(app.id)}" class="inline">
      ${csrfField(req.csrf)}
      <input type="hidden" name="back" value="${back}" />
      <button type="submit" name="action" value="${action}" class="${className}" aria-label="${aria}">${label}</button>
    </form>`;
  const name = app.serviceName ?? app.name;
  if (app.id === 'campus-web') return html`<span class="muted">${a.ownSignIn}</span>`;
  return html`${app.state === 'testing' || pendingData > 0 ? button('approve', a.approve, a.approveLabel(name)) : ''}
  ${pendingData > 0 ? button('refuse', a.refuse, a.refuseLabel(name), 'secondary') : ''}
  ${app.state === 'disabled' ? button('enable', a.enable, a.enableLabel(name), 'secondary') : button('disable', a.disable, a.disableLabel(name), 'danger')}`;
}

/** POST /admin/apps/:id: approve, disable or enable; each is in the access log (AppService). */
export const changeApp: Handler<AdminDeps> = async (req, deps) => {
  const a = req.t.admin.apps;
  const form = actionForm.parse(req.form);
  const back = backToList(LIST, form.back);
  const actor = req.account;
  if (!actor || !form.action) return redirect(back, { kind: 'error', text: a.unknown });
  const who = accessActor(actor);
  try {
    const id = req.param('id');
    const done =
      form.action === 'approve'
        ? await deps.clients.approve(id, who, deps.now())
        : form.action === 'refuse'
          ? await deps.clients.decideDataScopes(id, false, who, deps.now())
          : form.action === 'disable'
            ? await deps.clients.disable(id, who, deps.now())
            : await deps.clients.enable(id, who, deps.now());
    const name = done.after.serviceName ?? done.after.name;
    return redirect(back, { kind: 'ok', text: a.done[form.action](name, stateWord(req, done.after.state)) });
  } catch (err) {
    if (!(err instanceof AppValidationError)) throw err;
    return redirect(back, { kind: 'error', text: a.unknown });
  }
};

function stateWord(req: PageRequest, state: AppState): string {
  return req.t.appStates[state];
}
