import type { ApiScope } from '../../data/__generated__/enums.js';
import type { Config } from '../../config/index.js';
import type { ClientSummary } from '../../oauth/clients.js';
import type { Texts } from '../web/texts/index.js';

export { DEV_CALLBACK_PATH } from '../web/dev-callback.js';

/**
 * The developer's first hour (issue 27): what to paste right after making a key or an app, so a
 * new key answers a real request in the next minute and a new app runs the login example.
 */

/** An endpoint a key with this scope may call, with a small page of it. */
const FIRST_CALL: Record<ApiScope, { path: string; query: string; client: string }> = {
  STUDENT_READ: { path: '/v1/students', query: '?size=5', client: "'/v1/students', { params: { query: { size: 5 } } }" },
  CLUB_READ: { path: '/v1/clubs', query: '?size=5', client: "'/v1/clubs', { params: { query: { size: 5 } } }" },
  PROJECT_READ: { path: '/v1/projects', query: '?size=5', client: "'/v1/projects', { params: { query: { size: 5 } } }" },
  NEIS_READ: { path: '/v1/neis/meals', query: '', client: "'/v1/neis/meals'" },
};

/** A curl and a client call with the key just made (shown once, with the key). */
export function keySnippets(t: Texts, config: Config, key: string, scopes: readonly ApiScope[]): { label: string; code: string }[] {
  const call = FIRST_CALL[scopes[0] ?? 'NEIS_READ'];
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
export function exampleCommand(t: Texts, config: Config, app: ClientSummary, secret: string | null): string {
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

/** Shown once after registering: the discovery address, the client id and the example's command with the secret. */
export function appSnippets(t: Texts, config: Config, app: ClientSummary, secret: string | null): { label: string; code: string }[] {
  return [
    { label: t.firstHour.discovery, code: discoveryUrl(config) },
    { label: t.firstHour.clientId, code: app.id },
    { label: t.firstHour.example, code: exampleCommand(t, config, app, secret) },
  ];
}
