import { MAX_ACTIVE_KEYS_PER_ACCOUNT } from '../../data/keys/store.js';
import { MAX_APPS_PER_ACCOUNT } from '../../oauth/apps.js';
import { connectedApps } from '../../oauth/connected-apps.js';
import { needsPasskey } from '../../auth/policy.js';
import { html } from '../web/html.js';
import { page, recordRoutes, type Handler, type RouteTable } from '../web/routes.js';
import { WEB_CLIENT_ID } from '../web/signin.js';
import type { Web } from '../web/web.js';
import {
  changePassword,
  confirmSecondFactor,
  deleteAccount,
  myAccount,
  needsFactor,
  signOutEverywhere,
  startSecondFactor,
} from './accounts.js';
import { appDetail, appList, createApp, deleteApp, newApp, revokeAppTokens, rotateAppSecret, updateApp } from './apps.js';
import { connectedList, disconnect } from './connected.js';
import type { ConsoleDeps } from './deps.js';
import { finishPasskey, newPasskey, removePasskey, startPasskey } from './passkeys.js';
import { myProfile, saveProfile } from './profile.js';
import { myProjects, newProposal, sendProposal } from './projects.js';
import { endOtherSignIns, endSignIn, signInList } from './sessions.js';
import { createKey, keyDetail, keyList, renewKey, revokeKey, rotateKey } from './keys.js';
import {
  createWebhook,
  deleteWebhook,
  pauseWebhook,
  redeliverWebhook,
  resumeWebhook,
  rotateWebhook,
  testWebhook,
  webhookDetail,
  webhookList,
} from './webhooks.js';
import { MAX_WEBHOOKS_PER_ACCOUNT } from '../../data/events/webhooks.js';

/** GET /console: a card per part, with its counts. */
const consoleHome: Handler<ConsoleDeps> = async (req, deps) => {
  const { t } = req;
  const accountId = req.account?.accountId ?? 0;
  const [keys, apps, connected, webhooks] = await Promise.all([
    deps.apiKeys.countActiveOwnedBy(accountId, deps.now()),
    deps.clients.listOwnedBy(accountId),
    connectedApps(deps.db, accountId, [WEB_CLIENT_ID]),
    deps.webhooks.store.list({ accountId }),
  ]);
  const card = (href: string, title: string, text: string) =>
    html`<li class="card">
      <h2><a href="${href}">${title}</a></h2>
      <p>${text}</p>
    </li>`;
  // A role that needs a second factor it has not enrolled (a promotion): what to do next, first.
  const role = req.account?.role;
  const factorNotice =
    role && needsFactor(req, deps)
      ? needsPasskey(role, deps.config.policy)
        ? html`<p class="notice" role="status">
            ${t.passkeys.neededForRole(t.roles[role])} <a href="/console/account#passkeys">${t.passkeys.setUp}</a>
          </p>`
        : html`<p class="notice" role="status">
            ${t.mfa.neededForRole(t.roles[role])} <a href="/console/account#second-factor">${t.mfa.adminSetUp}</a>
            ${t.passkeys.orPasskey}
          </p>`
      : '';
  return page(
    t.console.title,
    html`${factorNotice}
      <ul class="cards">
        ${card('/console/keys', t.console.nav.keys, t.console.home.keys(keys, MAX_ACTIVE_KEYS_PER_ACCOUNT))}
        ${card('/console/apps', t.console.nav.apps, t.console.home.apps(apps.length, MAX_APPS_PER_ACCOUNT))}
        ${card('/console/webhooks', t.console.nav.webhooks, t.console.webhooks.home(webhooks.length, MAX_WEBHOOKS_PER_ACCOUNT))}
        ${card('/console/connected', t.console.nav.connected, t.console.home.connected(connected.length))}
        ${card('/console/account', t.console.nav.account, t.console.home.account)}
        ${card(deps.web.links.docs, t.shell.docs, t.console.home.docs)}
      </ul>`,
  );
};

/**
 * The developer console at /console (any signed-in account): API keys, OAuth apps, connected
 * apps, my account. One route table: a page is a line here (a kind of record's pages one entry,
 * recordRoutes), a handler and its view in the part's file (./keys.ts, ./apps.ts, ./connected.ts,
 * ./account.ts), and its texts (docs/web.md).
 */
export function consoleRoutes(web: Web): RouteTable<ConsoleDeps> {
  return {
    access: 'account',
    csrf: web.sessionForms,
    section: { label: (t) => t.console.title, home: '/console' },
    prefix: '/console',
    routes: [
      { method: 'GET', path: '/console', handler: consoleHome },
      ...recordRoutes('/console/keys', {
        list: keyList,
        nav: (t) => t.console.nav.keys,
        create: createKey,
        detail: keyDetail,
        actions: { renew: renewKey, rotate: rotateKey, revoke: revokeKey },
      }),
      ...recordRoutes('/console/apps', {
        list: appList,
        nav: (t) => t.console.nav.apps,
        blank: newApp,
        create: createApp,
        detail: appDetail,
        update: updateApp,
        actions: { secret: rotateAppSecret, delete: deleteApp, 'tokens/revoke': revokeAppTokens },
      }),
      ...recordRoutes('/console/webhooks', {
        list: webhookList,
        nav: (t) => t.console.nav.webhooks,
        create: createWebhook,
        detail: webhookDetail,
        actions: {
          test: testWebhook,
          pause: pauseWebhook,
          resume: resumeWebhook,
          rotate: rotateWebhook,
          delete: deleteWebhook,
          'deliveries/:deliveryId/redeliver': redeliverWebhook,
        },
      }),
      { method: 'GET', path: '/console/connected', handler: connectedList, nav: (t) => t.console.nav.connected },
      { method: 'POST', path: '/console/connected/:clientId/revoke', handler: disconnect },
      { method: 'GET', path: '/console/account', handler: myAccount, nav: (t) => t.console.nav.account },
      { method: 'POST', path: '/console/account/password', handler: changePassword },
      { method: 'POST', path: '/console/account/sign-out-everywhere', handler: signOutEverywhere },
      { method: 'POST', path: '/console/account/delete', handler: deleteAccount },
      { method: 'POST', path: '/console/account/second-factor', handler: startSecondFactor },
      { method: 'POST', path: '/console/account/second-factor/confirm', handler: confirmSecondFactor },
      { method: 'GET', path: '/console/account/passkeys/new', handler: newPasskey },
      { method: 'POST', path: '/console/account/passkeys', handler: startPasskey },
      { method: 'POST', path: '/console/account/passkeys/verify', handler: finishPasskey },
      { method: 'POST', path: '/console/account/passkeys/:id/remove', handler: removePasskey },
      { method: 'GET', path: '/console/projects', handler: myProjects, nav: (t) => t.console.nav.projects },
      { method: 'GET', path: '/console/projects/new', handler: newProposal },
      { method: 'POST', path: '/console/projects/new', handler: sendProposal },
      { method: 'GET', path: '/console/projects/:id/propose', handler: newProposal },
      { method: 'POST', path: '/console/projects/:id/propose', handler: sendProposal },
      { method: 'GET', path: '/console/profile', handler: myProfile, nav: (t) => t.console.nav.profile },
      { method: 'POST', path: '/console/profile', handler: saveProfile },
      { method: 'GET', path: '/console/sessions', handler: signInList, nav: (t) => t.console.nav.sessions },
      { method: 'POST', path: '/console/sessions/end-others', handler: endOtherSignIns },
      { method: 'POST', path: '/console/sessions/:id/end', handler: endSignIn },
    ],
  };
}
