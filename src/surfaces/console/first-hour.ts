import type { ApiScope } from '../../data/__generated__/enums.js';
import type { Config } from '../../config/index.js';
import type { AppSummary } from '../../oauth/apps.js';
import { ENDPOINTS } from '../../rest/endpoints.js';
import type { Texts } from '../web/texts/index.js';

export { DEV_CALLBACK_PATH } from '../web/dev-callback.js';

/**
 * The developer's first hour: what to paste right after making a key or an app, so a
 * new key answers a real request in the next minute and a new app runs the login example.
 */

/**
 * The endpoint a key with this scope calls first: the first row of the endpoint table with that
 * scope (src/rest/endpoints.ts), with a small page of it when it is paged.
 */
function firstCall(scope: ApiScope): { path: string; query: string; client: string } {
  const endpoint = ENDPOINTS.find((row) => row.scope === scope);
  if (!endpoint) throw new Error(`no endpoint takes ${scope}`);
  const paged = 'size' in endpoint.query.shape;
  return paged
    ? { path: endpoint.path, query: '?size=5', client: `'${endpoint.path}', { params: { query: { size: 5 } } }` }
    : { path: endpoint.path, query: '', client: `'${endpoint.path}'` };
}

/** A curl and a client call with the key just made (shown once, with the key). */
export function keySnippets(t: Texts, config: Config, key: string, scopes: readonly ApiScope[]): { label: string; code: string }[] {
  const call = firstCall(scopes[0] ?? 'NEIS_READ');
  const base = config.urls.base;
  return [
    { label: t.firstHour.curl, code: `curl -s '${base}${call.path}${call.query}' -H 'X-API-KEY: ${key}'` },
    {
      label: t.firstHour.client,
      code: [
        "import { createClient } from '@campus/client';",
        '',
        `const campus = createClient({ baseUrl: '${base}', apiKey: '${key}' });`,
        `const { data, error } = await campus.GET(${call.client});`,
        'console.log(error ?? data.data);',
      ].join('\n'),
    },
  ];
}

/** The issuer's discovery document. */
export function discoveryUrl(config: Config): string {
  return `${config.urls.auth}/.well-known/openid-configuration`;
}

/**
 * How to start examples/login-with-school as this app: its issuer, client id, secret (the new
 * one right after registering; a placeholder later) and first redirect address.
 */
export function exampleCommand(t: Texts, config: Config, app: AppSummary, secret: string | null): string {
  if (!app.grants.includes('authorization_code')) return machineExampleCommand(t, config, app, secret);
  const redirectUri = app.redirectUris[0] ?? 'http://127.0.0.1:3000/callback';
  let port = '3000';
  try {
    port = new URL(redirectUri).port || port;
  } catch {
    // a registered address always parses; keep the example's default
  }
  return [
    'cd examples/login-with-school',
    `CAMPUS_ISSUER='${config.urls.auth}' \\`,
    `CLIENT_ID='${app.id}' \\`,
    ...(app.type === 'confidential' ? [`CLIENT_SECRET='${secret ?? t.firstHour.secretPlaceholder}' \\`] : []),
    `REDIRECT_URI='${redirectUri}' \\`,
    `PORT=${port} npm start`,
  ].join('\n');
}

/**
 * How to start examples/nightly-sync as an app of machine tokens only: an app server reading
 * the data API with its id and secret, no person signed in.
 */
function machineExampleCommand(t: Texts, config: Config, app: AppSummary, secret: string | null): string {
  return [
    'cd examples/nightly-sync',
    `CAMPUS_ISSUER='${config.urls.auth}' \\`,
    ...(config.urls.base === config.urls.auth ? [] : [`CAMPUS_URL='${config.urls.base}' \\`]),
    `CLIENT_ID='${app.id}' \\`,
    `CLIENT_SECRET='${secret ?? t.firstHour.secretPlaceholder}' \\`,
    'npm start',
  ].join('\n');
}

/** The example an app starts as: the login example, or for machine tokens only the app-server example. */
export function exampleLabel(t: Texts, app: AppSummary): string {
  return app.grants.includes('authorization_code') ? t.firstHour.example : t.firstHour.machineExample;
}

/** Shown once after registering: the discovery address, the client id and the example's command with the secret. */
export function appSnippets(t: Texts, config: Config, app: AppSummary, secret: string | null): { label: string; code: string }[] {
  return [
    { label: t.firstHour.discovery, code: discoveryUrl(config) },
    { label: t.firstHour.clientId, code: app.id },
    { label: exampleLabel(t, app), code: exampleCommand(t, config, app, secret) },
  ];
}
