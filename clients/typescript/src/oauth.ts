import * as oidc from 'openid-client';
import type { UserinfoFields, UserinfoScopes, UserinfoStudent } from './__generated__/userinfo.js';

export type { UserinfoFields, UserinfoScopes, UserinfoStudent };

/**
 * "Log in with the school" for a server-side app, on openid-client (an OpenID Certified relying
 * party library): the authorization server is found through discovery
 * (`{issuer}/.well-known/openid-configuration`), every login uses PKCE (S256) and a state, and
 * the code exchange checks the state, the `iss` of the answer (RFC 9207) and, with `openid`, the
 * ID token.
 *
 *   const login = await createLoginUrl({ issuer, clientId, redirectUri, scope: 'openid self:read' });
 *   // keep login.state and login.codeVerifier in the user's session; redirect to login.url
 *   const tokens = await exchangeCode({ issuer, clientId, clientSecret, callbackUrl, state, codeVerifier });
 *   const me = await userinfo({ issuer, clientId, clientSecret, accessToken: tokens.access_token });
 */

export interface OAuthClientOptions {
  /** The authorization server's issuer (AUTH_URL of the service), e.g. `http://127.0.0.1:8080`. */
  readonly issuer: string;
  readonly clientId: string;
  /** The confidential client's secret; leave out for a public client. */
  readonly clientSecret?: string;
}

/**
 * What a login asks for unless told: `self:read`, the user's own record (what userinfo needs), as
 * the service itself defaults. Add `openid` for an ID token when the app may ask for it.
 */
export const DEFAULT_SCOPE = 'self:read';

const configurations = new Map<string, Promise<oidc.Configuration>>();

/**
 * The discovered configuration of an issuer and client, fetched once per process. Plain
 * `http://` issuers (a development server on 127.0.0.1) are allowed; production is https.
 */
export function discover(options: OAuthClientOptions): Promise<oidc.Configuration> {
  const key = JSON.stringify([options.issuer, options.clientId, options.clientSecret ?? null]);
  let found = configurations.get(key);
  if (!found) {
    const issuer = new URL(options.issuer);
    found = oidc
      .discovery(
        issuer,
        options.clientId,
        options.clientSecret,
        options.clientSecret === undefined ? oidc.None() : oidc.ClientSecretPost(options.clientSecret),
        issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined,
      )
      .catch((err: unknown) => {
        configurations.delete(key); // a server that was down may be up next time
        throw err;
      });
    configurations.set(key, found);
  }
  return found;
}

export interface LoginUrlOptions extends OAuthClientOptions {
  /** The app's callback, registered for the client exactly. */
  readonly redirectUri: string;
  /** Space-separated; `self:read` by default. */
  readonly scope?: string;
  /** `ko` or `en`: the language of the login page. */
  readonly uiLocales?: 'ko' | 'en';
}

export interface LoginUrl {
  /** Send the browser here. */
  readonly url: string;
  /** Keep with the user's session; `exchangeCode` checks the callback carries it. */
  readonly state: string;
  /** Keep with the user's session (never in the browser); `exchangeCode` sends it. */
  readonly codeVerifier: string;
}

/** The authorize URL of a new login, with a fresh PKCE pair and state. */
export async function createLoginUrl(options: LoginUrlOptions): Promise<LoginUrl> {
  const config = await discover(options);
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: options.redirectUri,
    scope: options.scope ?? DEFAULT_SCOPE,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    ...(options.uiLocales ? { ui_locales: options.uiLocales } : {}),
  });
  return { url: url.href, state, codeVerifier };
}

/** What the token endpoint answers: an access token (1 hour), a refresh token (30 days, rotated) and, with `openid`, an ID token. */
export type Tokens = oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;

export interface ExchangeCodeOptions extends OAuthClientOptions {
  /**
   * The whole address the browser came back to: the registered redirect URI with `code`,
   * `state` and `iss` (or `error`) in its query.
   */
  readonly callbackUrl: string | URL;
  /** From `createLoginUrl`, kept in the session. */
  readonly state: string;
  readonly codeVerifier: string;
}

/**
 * Exchanges the callback's code for tokens. Throws when the callback carries an error (the user
 * chose Deny: `access_denied`), another state, or a code the server refuses.
 */
export async function exchangeCode(options: ExchangeCodeOptions): Promise<Tokens> {
  const config = await discover(options);
  return oidc.authorizationCodeGrant(config, new URL(options.callbackUrl), {
    pkceCodeVerifier: options.codeVerifier,
    expectedState: options.state,
  });
}

/** A new access token and a new refresh token (keep it: the old one is retired, and reusing it revokes the login). */
export async function refresh(options: OAuthClientOptions & { readonly refreshToken: string }): Promise<Tokens> {
  return oidc.refreshTokenGrant(await discover(options), options.refreshToken);
}

/** A login scope the service knows (its discovery's `scopes_supported`). */
export type LoginScope = keyof UserinfoScopes;

/**
 * The answer of the userinfo server (docs/oauth.md): `sub` always, and each
 * other field when the login's scopes release it (`UserinfoScopes`; absent otherwise). Name the
 * scopes the login asked for to have their fields required: `Userinfo<'self:read'>`,
 * `Userinfo<'account:read' | 'club:read'>`. Generated from the service's login-scope table
 * (`UserinfoFields`), so a field the service adds appears here.
 */
export type Userinfo<S extends LoginScope = never> = Pick<UserinfoFields, 'sub' | UserinfoScopes[S]> & Partial<UserinfoFields>;

/**
 * Who signed in. `expectedSubject` (the ID token's `sub`, when the login asked for `openid`) is
 * checked against the answer; without it the check is skipped, which is safe for a token this
 * server took from the token endpoint itself. `S`: the scopes the login asked for (see Userinfo).
 */
export async function userinfo<S extends LoginScope = never>(
  options: OAuthClientOptions & { readonly accessToken: string; readonly expectedSubject?: string },
): Promise<Userinfo<S>> {
  const config = await discover(options);
  // An empty subject (no ID token) is no subject to check, not one that must match.
  const answer = await oidc.fetchUserInfo(config, options.accessToken, options.expectedSubject || oidc.skipSubjectCheck);
  // The server's answer, typed by its login-scope table (src/oauth/login-scopes.ts).
  return answer as unknown as Userinfo<S>;
}

/** Revokes a token (RFC 7009); revoking the refresh token ends the whole login grant of this app. */
export async function revoke(options: OAuthClientOptions & { readonly token: string }): Promise<void> {
  await oidc.tokenRevocation(await discover(options), options.token);
}

export interface LogoutUrlOptions extends OAuthClientOptions {
  /** Registered for the client (`campus clients update --post-logout-redirect-uri`), matched exactly. */
  readonly postLogoutRedirectUri?: string;
  readonly state?: string;
  /** The ID token of the login, when it asked for `openid`. */
  readonly idTokenHint?: string;
  readonly uiLocales?: 'ko' | 'en';
}

/** The RP-initiated logout address (OpenID Connect): the user confirms there, then comes back to `postLogoutRedirectUri`. */
export async function createLogoutUrl(options: LogoutUrlOptions): Promise<string> {
  const config = await discover(options);
  return oidc.buildEndSessionUrl(config, {
    ...(options.postLogoutRedirectUri ? { post_logout_redirect_uri: options.postLogoutRedirectUri } : {}),
    ...(options.state ? { state: options.state } : {}),
    ...(options.idTokenHint ? { id_token_hint: options.idTokenHint } : {}),
    ...(options.uiLocales ? { ui_locales: options.uiLocales } : {}),
  }).href;
}

export interface ClientCredentialsOptions extends OAuthClientOptions {
  /** A confidential app's secret: machine tokens are for an app's own server. */
  readonly clientSecret: string;
  /** The data scopes to ask for, space-separated (e.g. `CLUB_READ NEIS_READ`); leave out for every scope the app may hold. */
  readonly scope?: string;
  /** Renew this many seconds before the token expires (default 60), so no request carries a token about to expire. */
  readonly renewBeforeSeconds?: number;
  /** The clock, in milliseconds (tests move it); `Date.now` by default. */
  readonly now?: () => number;
}

/** Where a client gets the bearer token of each request (`createClient({ tokens })`). */
export interface TokenSource {
  /** A token valid now: the one held, or a new one when it is about to expire. */
  token(): Promise<string>;
  /** Forgets the held token, so the next `token()` asks for a new one (after a 401: revoked, or the app's scopes changed). */
  renew(): void;
}

/** What the token endpoint answered for a machine token, and until when it is used. */
interface HeldToken {
  readonly value: string;
  /** When to ask for the next one (ms): `renewBeforeSeconds` before it expires. */
  readonly renewAt: number;
}

/**
 * Machine tokens for an app's own server (no person signed in): the OAuth client credentials
 * grant (RFC 6749, 4.4) at the issuer's token endpoint, with the app's id and secret, for a
 * token of the data API valid one hour. The token is kept and renewed before it expires;
 * callers at the same moment share one request.
 *
 *   const machine = clientCredentials({ issuer, clientId, clientSecret, scope: 'CLUB_READ' });
 *   const campus = createClient({ baseUrl, tokens: machine });
 *   const { data } = await campus.GET('/v1/clubs');
 */
export function clientCredentials(options: ClientCredentialsOptions): TokenSource {
  const now = options.now ?? Date.now;
  const renewBefore = (options.renewBeforeSeconds ?? 60) * 1000;
  let held: HeldToken | undefined;
  let asking: Promise<HeldToken> | undefined;
  const ask = async (): Promise<HeldToken> => {
    const config = await discover(options);
    const answer = await oidc.clientCredentialsGrant(config, options.scope ? { scope: options.scope } : {});
    const lifetime = (answer.expires_in ?? 0) * 1000;
    // A lifetime shorter than the margin is used for half of it rather than not at all.
    return { value: answer.access_token, renewAt: now() + Math.max(lifetime - renewBefore, lifetime / 2) };
  };
  return {
    async token() {
      if (held && now() < held.renewAt) return held.value;
      asking ??= ask().finally(() => {
        asking = undefined;
      });
      held = await asking;
      return held.value;
    },
    renew() {
      held = undefined;
    },
  };
}
