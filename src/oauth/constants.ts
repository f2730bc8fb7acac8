/** Paths of the authorization server (docs/decisions.md) and of the userinfo server. */
export const OAUTH_PATHS = {
  authorize: '/v1/oauth/authorize',
  token: '/v1/oauth/token',
  jwks: '/v1/oauth/jwks',
  revoke: '/v1/oauth/revoke',
  introspect: '/v1/oauth/introspect',
  interaction: '/v1/oauth/interaction',
  /** OpenID Connect RP-initiated logout (end_session_endpoint); `/confirm` and `/success` below it. */
  logout: '/v1/oauth/logout',
  discovery: '/.well-known/openid-configuration',
  authorizationServerMetadata: '/.well-known/oauth-authorization-server',
  userinfo: '/userinfo',
  /** RFC 8628: a device asks for a user code here (device_authorization_endpoint)... */
  deviceAuthorization: '/v1/oauth/device/auth',
  /** ...and shows this short address, where a person types the code (verification_uri; `/<uid>` resumes after the login). */
  device: '/device',
} as const;

export {
  ACCOUNT_READ,
  CLUB_READ,
  OAUTH_SCOPES,
  OPENID,
  PROJECT_READ,
  RESOURCE_SCOPES,
  SELF_READ,
  STUDENT_READ,
  type OAuthScope,
} from './login-scopes.js';

/** Lifetimes of the spec and docs/decisions.md, in seconds. */
export const LIFETIMES = {
  accessToken: 3600,
  idToken: 3600,
  refreshToken: 30 * 24 * 3600,
  // A login's grant: every rotation issues a refresh token valid for another 30 days, up to this
  // cap (oidc-provider's own default limit for rotating refresh tokens); then the user logs in again.
  grant: 365 * 24 * 3600,
  authorizationCode: 5 * 60,
  // A login page left open this long must be restarted from the client.
  interaction: 30 * 60,
  // The single-sign-on session at the authorization server. Its cookie ends with the browser;
  // on the server the session ends after this long without use (school computers are shared
  // and not always closed, so it is short).
  session: 3600,
  // "Keep me signed in": the cookie and the session last at most this long after the login.
  rememberedSession: 14 * 24 * 3600,
  // A used refresh token presented again this soon after its use, while its successor is still
  // unused, is a retry of a refresh whose answer was lost: answered with a new pair, not treated
  // as reuse (src/data/accounts/oauth-records.ts, rotate; docs/oauth.md, "6. Refresh").
  refreshRetryGrace: 60,
  // A device's user code (and its device code): typed on a phone within minutes of being shown (RFC 8628 suggests about this).
  deviceCode: 10 * 60,
} as const;

/** The first-party client of our own pages (the consoles' sign-in, src/surfaces/web/signin.ts). */
export const WEB_CLIENT_ID = 'campus-web';

/** Cookie names of the authorization server, as plain HTTP (local development) has them; see providerCookieNames. */
export const COOKIE_NAMES = { session: 'campus_session', interaction: 'campus_interaction', resume: 'campus_resume' } as const;

/** Whether the pages are served over https (AUTH_URL): then every cookie is Secure and its name carries a prefix. */
export const servesHttps = (authUrl: string): boolean => authUrl.startsWith('https://');

/**
 * A cookie's name under https (docs/limits-and-security.md, "Cookies"): `__Host-` makes browsers
 * accept the cookie only when it is Secure, has Path=/ and no Domain (RFC 6265bis, "Cookie Name
 * Prefixes"), so neither a plain-HTTP page nor another host of the school's domain can set or
 * shadow it. Over plain HTTP (local development) the name stays as it is. Every cookie of our own
 * pages uses this.
 */
export function cookieName(name: string, secure: boolean): string {
  return secure ? `__Host-${name}` : name;
}

/**
 * The authorization server's cookie names. Its session cookie carries `__Host-`. oidc-provider
 * scopes its interaction and resume cookies to one sign-in's own path (/v1/oauth/interaction/<uid> and
 * /v1/oauth/authorize/<uid>, node_modules/oidc-provider/lib/actions/authorization/interactions.js),
 * so that sign-ins in several tabs keep theirs apart, and `__Host-` forbids any path but /: those
 * two carry `__Secure-` (the browser takes them only as Secure, from https).
 */
export function providerCookieNames(secure: boolean): { readonly session: string; readonly interaction: string; readonly resume: string } {
  if (!secure) return COOKIE_NAMES;
  return {
    session: cookieName(COOKIE_NAMES.session, true),
    interaction: `__Secure-${COOKIE_NAMES.interaction}`,
    resume: `__Secure-${COOKIE_NAMES.resume}`,
  };
}

/** The field of a stored login session that holds its browser and last use (src/oauth/adapter.ts, withDevice). */
export const SESSION_DEVICE = 'campusDevice';

/** The audience (resource indicator) of every access token: the userinfo endpoint. */
export function userinfoAudience(userinfoBaseUrl: string): string {
  return `${userinfoBaseUrl}${OAUTH_PATHS.userinfo}`;
}

/** The self-service JSON endpoints (with the authorization server) and their pages. */
export const ACCOUNT_PATHS = {
  emailVerifications: '/v1/accounts/email-verifications',
  accounts: '/v1/accounts',
  passwordResets: '/v1/accounts/password-resets',
  password: '/v1/accounts/password',
  signUpPage: '/account/signup',
  resetPage: '/account/password-reset',
  deletedPage: '/account/deleted',
  outbox: '/dev/outbox',
} as const;
