import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { sameSecret } from '../../compare.js';
import type { Config } from '../../config/index.js';
import type { AccountStore } from '../../data/accounts/store.js';
import type { LogoutNotices } from '../../oauth/backchannel-logout.js';
import type { OAuthStore } from '../../data/accounts/oauth-records.js';
import { AccessTokenRejected, type AccessTokenVerifier } from '../../oauth/access-token.js';
import type { AppService } from '../../oauth/apps.js';
import { PASSKEY_AMR } from '../../oauth/passkeys.js';
import { cookieName, providerCookieNames, OAUTH_PATHS, SELF_READ, WEB_CLIENT_ID } from '../../oauth/constants.js';
import { linkButton } from './components.js';
import { wayBack } from './errors.js';
import { html } from './html.js';
import { page, redirect, type Handler, type RouteTable } from './routes.js';
import type { CookieSealer } from './seal.js';
import { SESSION_LIFETIME_MS } from './session.js';
import { WEB_PATHS, type Web } from './web.js';

/**
 * Our own pages' sign-in (the consoles). They are a first-party client of our own authorization
 * server and sign people in the way any app does: the authorization-code flow with PKCE, the code
 * redeemed at the token endpoint, the access token verified. The pages' session is then a sealed
 * browser-session cookie that names the account and the grant of that sign-in, and lives as long
 * as the grant does: no second login system and no session store of our own.
 */

/** The first-party client of our pages (registered at start-up; PKCE, no secret). */
export { WEB_CLIENT_ID };
const SIGNIN_COOKIE = 'campus_web_signin';
const SIGNIN_LIFETIME_MS = 10 * 60 * 1000;

const pendingSignIn = z.object({ state: z.string(), verifier: z.string(), next: z.string(), expiresAt: z.number() });

export interface SignInDeps {
  readonly web: Web;
  readonly config: Config;
  readonly verifier: AccessTokenVerifier;
  readonly accounts: AccountStore;
  readonly grants: OAuthStore;
  /** Apps with a back-channel logout address are told when this sign-out ends the school sign-in. */
  readonly notices: LogoutNotices;
  /** Seals the sign-in in progress (state, PKCE verifier, where to go next). */
  readonly sealer: CookieSealer;
}

/** Registers (or updates) the first-party client of our pages. */
export async function registerWebClient(clients: AppService, config: Config): Promise<void> {
  await clients.put({
    id: WEB_CLIENT_ID,
    name: 'Campus Data Service',
    redirectUris: [`${config.urls.auth}${WEB_PATHS.callback}`],
    postLogoutRedirectUris: [`${config.urls.auth}${WEB_PATHS.signedOut}`],
    scopes: [SELF_READ],
    public: true,
    firstParty: true,
  });
}

/** GET /web/signin?next=/admin: starts the authorization-code flow with PKCE and a state. */
const signIn: Handler<SignInDeps> = async (req, deps) => {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const cookie = { state, verifier, next: safeNext(req.ctx.query['next']), expiresAt: deps.web.now().getTime() + SIGNIN_LIFETIME_MS };
  req.ctx.cookies.set(cookieName(SIGNIN_COOKIE, deps.web.secure), deps.sealer.seal(cookie), {
    httpOnly: true,
    sameSite: 'lax',
    secure: deps.web.secure,
    path: '/',
    overwrite: true,
  });
  const query = new URLSearchParams({
    client_id: WEB_CLIENT_ID,
    redirect_uri: `${deps.config.urls.auth}${WEB_PATHS.callback}`,
    response_type: 'code',
    scope: SELF_READ,
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ui_locales: req.lang,
  });
  // The admin console sends people back here for a fresh sign-in (./web.ts, freshSignIn): after
  // 15 minutes the password (and second factor) is asked again whatever "keep me signed in"
  // said (OpenID Connect max_age), and a sign-in without the second factor starts over.
  const reauth = req.query('reauth');
  // The pages know the age of the sign-in themselves (its auth_time, ./web.ts): OpenID Connect's
  // max_age would need the openid scope, which this client does not ask for, so the login form
  // is asked for outright (prompt=login).
  if (reauth === 'age' || reauth === 'login') query.set('prompt', 'login');
  return redirect(`${deps.config.urls.auth}${OAUTH_PATHS.authorize}?${query.toString()}`);
};

/** GET /web/callback: checks the state, redeems the code, verifies the token, opens the session. */
const callback: Handler<SignInDeps> = async (req, deps) => {
  const { ctx, t } = req;
  const parsed = pendingSignIn.safeParse(deps.sealer.open(ctx.cookies.get(cookieName(SIGNIN_COOKIE, deps.web.secure))));
  ctx.cookies.set(cookieName(SIGNIN_COOKIE, deps.web.secure), '', {
    httpOnly: true,
    sameSite: 'lax',
    secure: deps.web.secure,
    path: '/',
    maxAge: 0,
    overwrite: true,
  });
  const failed = () =>
    page(
      t.signin.failedTitle,
      html`<p role="alert">${t.signin.failed}</p>
        <p>${linkButton(WEB_PATHS.signIn, t.signin.again)}</p>`,
      400,
    );
  const code = req.query('code');
  const pending = parsed.success ? parsed.data : undefined;
  if (!pending || pending.expiresAt < deps.web.now().getTime() || !code || !sameSecret(req.query('state'), pending.state)) return failed();
  const redirectUri = `${deps.config.urls.auth}${WEB_PATHS.callback}`;
  const token = await redeem(`${deps.config.urls.auth}${OAUTH_PATHS.token}`, { code, verifier: pending.verifier, redirectUri });
  if (!token) return failed();
  const verified = await deps.verifier.verify(token).catch((err: unknown) => {
    if (err instanceof AccessTokenRejected) return undefined;
    throw err;
  });
  const account = verified && /^\d+$/.test(verified.sub) ? await deps.accounts.findById(Number(verified.sub)) : null;
  if (!verified || !account) return failed();
  const authTime = verified.claims['auth_time'];
  const amr = verified.claims['amr'];
  deps.web.sessions.write(ctx, {
    accountId: account._id,
    grantId: verified.grantId,
    nonce: randomBytes(16).toString('base64url'),
    expiresAt: deps.web.now().getTime() + SESSION_LIFETIME_MS,
    ...(typeof authTime === 'number' ? { authTime: authTime * 1000 } : {}),
    mfa: Array.isArray(amr) && amr.includes('mfa'),
    passkey: Array.isArray(amr) && amr.includes(PASSKEY_AMR),
  });
  ctx.state.log.info({ event: 'web.signin', accountId: account._id }, 'signed in to the consoles');
  return redirect(pending.next);
};

/**
 * POST /web/signout: ends the grant (so every page of this sign-in is signed out) and, in the
 * same step, this browser's sign-in at the authorization server, with no second confirmation
 * page: on a shared computer the next person must not open /admin from a sign-in left behind
 * ("keep me signed in" included). The form is the confirmation (it carries the session's CSRF token).
 */
const signOut: Handler<SignInDeps> = async (req, deps) => {
  const { ctx } = req;
  const session = deps.web.session(ctx);
  if (session) await deps.grants.revokeGrant(session.grantId);
  deps.web.sessions.clear(ctx);
  // The provider's session cookie holds its id (the cookie's signature only guards against
  // forging one; deleting by a forged id deletes nothing that its sender could not already end).
  const providerSession = providerCookieNames(deps.web.secure).session;
  const loginSession = ctx.cookies.get(providerSession);
  const ended = loginSession ? await deps.grants.find('Session', loginSession) : undefined;
  if (ended) await deps.notices.sessionsEnded([ended], 'signed_out');
  if (loginSession) await deps.grants.destroy('Session', loginSession);
  for (const name of [providerSession, `${providerSession}.sig`]) {
    ctx.cookies.set(name, '', { httpOnly: true, sameSite: 'lax', secure: deps.web.secure, path: '/', maxAge: 0, overwrite: true });
  }
  ctx.state.log.info({ event: 'web.signout', accountId: session?.accountId }, 'signed out of the consoles and the school sign-in');
  return redirect(WEB_PATHS.signedOut);
};

const signedOut: Handler<SignInDeps> = async (req, deps) =>
  page(
    req.t.signin.signedOutTitle,
    html`<p role="status">${req.t.signin.signedOut}</p>
      ${wayBack(req.t, undefined, deps.web.links)}`,
  );

/** The consoles' sign-in and sign-out (the sign-out form is bound to the session it ends). */
export function signInRoutes(web: Web): RouteTable<SignInDeps> {
  return {
    access: 'anyone',
    csrf: web.sessionForms,
    narrow: true,
    routes: [
      { method: 'GET', path: WEB_PATHS.signIn, handler: signIn },
      { method: 'GET', path: WEB_PATHS.callback, handler: callback },
      { method: 'POST', path: WEB_PATHS.signOut, handler: signOut },
      { method: 'GET', path: WEB_PATHS.signedOut, handler: signedOut },
    ],
  };
}

/** Redeems an authorization code at our token endpoint (as any client would); the access token, or undefined. */
async function redeem(tokenUrl: string, input: { code: string; verifier: string; redirectUri: string }): Promise<string | undefined> {
  const res = await fetch(tokenUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: input.code,
      redirect_uri: input.redirectUri,
      client_id: WEB_CLIENT_ID,
      code_verifier: input.verifier,
    }),
  });
  if (!res.ok) return undefined;
  const body = (await res.json()) as { access_token?: unknown };
  return typeof body.access_token === 'string' ? body.access_token : undefined;
}

/** Only a path of ours: never another origin (`//host`) or a scheme. */
function safeNext(value: unknown): string {
  return typeof value === 'string' && /^\/(?![/\\])/.test(value) ? value : '/console';
}
