/** Paths of the authorization server (DECISIONS.md) and of the userinfo server. */
export const OAUTH_PATHS = {
  authorize: '/v1/oauth/authorize',
  token: '/v1/oauth/token',
  jwks: '/v1/oauth/jwks',
  revoke: '/v1/oauth/revoke',
  introspect: '/v1/oauth/introspect',
  interaction: '/v1/oauth/interaction',
  discovery: '/.well-known/openid-configuration',
  authorizationServerMetadata: '/.well-known/oauth-authorization-server',
  userinfo: '/userinfo',
} as const;

/** The user's own record: the default scope, and the one userinfo requires. */
export const SELF_READ = 'self:read';
/** Adds an ID token to the token response. */
export const OPENID = 'openid';
/** Every scope a client may be allowed. */
export const OAUTH_SCOPES = [SELF_READ, OPENID] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

/** Lifetimes of the spec and DECISIONS.md, in seconds. */
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
  // The single-sign-on session at the authorization server (there is no logout page, and
  // school computers are shared, so it is short).
  session: 3600,
} as const;

/** The audience (resource indicator) of every access token: the userinfo endpoint. */
export function userinfoAudience(userinfoBaseUrl: string): string {
  return `${userinfoBaseUrl}${OAUTH_PATHS.userinfo}`;
}
