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
  // as reuse (src/data/oauth-store.ts, rotate; README "Refresh tokens").
  refreshRetryGrace: 60,
} as const;

/** Cookie names of the authorization server. */
/** The first-party client of our own pages (the consoles' sign-in, src/surfaces/web/signin.ts). */
export const WEB_CLIENT_ID = 'campus-web';

export const COOKIE_NAMES = { session: 'campus_session', interaction: 'campus_interaction', resume: 'campus_resume' } as const;

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
