import { facts, snippet } from './components.js';
import { html } from './html.js';
import { page, type Handler, type RouteTable } from './routes.js';
import type { Web } from './web.js';

/**
 * GET /dev/callback, outside production only (src/surfaces/auth.ts mounts it when NODE_ENV is
 * not production): a redirect address a developer may register before their app has one. It
 * shows the authorization code, state and issuer the browser brought back, and the token request
 * to make with them, so the first login works before the first line of the app is written.
 * In production the path is not there at all (the app's 404 page).
 */

/** Where it lives; the developer console's app page suggests it. */
export const DEV_CALLBACK_PATH = '/dev/callback';

/** What the authorization server puts in a redirect: opaque tokens, the error codes of RFC 6749 and the issuer. */
const TOKEN = /^[\w.~-]{1,200}$/;
const STATE = /^[\x21-\x7e]{1,200}$/;

const callback: Handler<Web> = async (req, web) => {
  const { t } = req;
  const d = t.devCallback;
  const auth = web.config.urls.auth;
  const redirectUri = `${auth}${DEV_CALLBACK_PATH}`;
  const code = req.query('code');
  const state = req.query('state');
  const iss = req.query('iss');
  const error = req.query('error');
  const malformed = (['code', 'state', 'error'] as const).find((name) => {
    const value = { code, state, error }[name];
    return value !== '' && !(name === 'state' ? STATE : TOKEN).test(value);
  });
  if (malformed) return page(d.title, html`<p class="flash error" role="alert">${d.invalid(malformed)}</p>`, 400);
  const register = facts([[d.registerThis, html`<code>${redirectUri}</code>`]]);
  if (error) {
    return page(
      d.errorTitle,
      html`<p class="flash error" role="alert">${d.error(error)}</p>
        ${req.query('error_description') ? html`<p>${req.query('error_description')}</p>` : ''} ${register}`,
    );
  }
  if (!code)
    return page(
      d.title,
      html`<p class="lead">${d.intro}</p>
        <p>${d.nothing}</p>
        ${register}`,
    );
  const body = JSON.stringify({
    grant_type: 'authorization_code',
    code,
    client_id: 'CLIENT_ID',
    client_secret: 'CLIENT_SECRET',
    redirect_uri: redirectUri,
    code_verifier: 'CODE_VERIFIER',
  });
  const request = `curl -s '${auth}/v1/oauth/token' \\\n  -H 'Content-Type: application/json' \\\n  -d '${body}'`;
  return page(
    d.title,
    html`<p class="lead">${d.intro}</p>
      ${facts([
        [d.code, html`<code id="code">${code}</code>`],
        [d.state, state ? html`<code>${state}</code>` : t.kit.none],
        [d.issuer, iss ? html`<code>${iss}</code>` : t.kit.none],
      ])}
      <p class="hint">${d.codeHint}</p>
      <section aria-labelledby="token-request">
        <h2 id="token-request">${d.tokenRequest}</h2>
        <p class="hint">${d.tokenHint}</p>
        ${snippet(t, 'token-request-command', 'curl', request)}
      </section>
      ${register}`,
  );
};

/** The page's table: anyone may open it (the code is useless without the app's verifier and secret). */
export function devCallbackRoutes(web: Web): RouteTable<Web> {
  return { access: 'anyone', csrf: web.anonymousForms, routes: [{ method: 'GET', path: DEV_CALLBACK_PATH, handler: callback }] };
}
