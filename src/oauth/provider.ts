import Provider, {
  errors,
  interactionPolicy,
  type Account,
  type Client,
  type Configuration,
  type Grant,
  type KoaContextWithOIDC,
  type AccessToken,
  type ClientCredentials,
  type ResourceServer,
  type Session,
  type ErrorOut,
} from 'oidc-provider';
import type { Config } from '../config/index.js';
import type { OAuthStore } from '../data/accounts/oauth-records.js';
import type { Logger } from '../logger.js';
import type { AccountService } from './accounts.js';
import { createAdapterFactory } from './adapter.js';
import { ALLOWED_SCOPES, FIRST_PARTY, REQUIRE_PKCE, SERVICE_NAME, type AppService } from './apps.js';
import {
  providerCookieNames,
  servesHttps,
  LIFETIMES,
  OAUTH_PATHS,
  OAUTH_SCOPES,
  OPENID,
  RESOURCE_SCOPES,
  userinfoAudience,
  WEB_CLIENT_ID,
} from './constants.js';
import type { OAuthKeys, SigningAlg } from './signing-keys.js';
import { ID_TOKEN_CLAIMS } from './login-scopes.js';
import type { LogoutNotices } from './backchannel-logout.js';
import { clientSecretMatches } from './secrets.js';
import { appAdmits } from '../auth/policy.js';
import { standingOf } from '../data/accounts/standing.js';
import {
  dataApiResource,
  isMachineGrant,
  machineResourceServer,
  machineTokenClaims,
  namesDataApi,
  type MachineIssuing,
} from './machine-tokens.js';
import { protectedResourceIds } from './protected-resources.js';

export interface ProviderDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly keys: OAuthKeys;
  readonly store: OAuthStore;
  readonly accounts: AccountService;
  readonly clients: AppService;
  /** The pages the provider shows itself (src/surfaces/web/provider-pages.ts: the web layer renders every page). */
  readonly pages: ProviderPages;
  /** Data updates the school asks of students at sign-in (src/data/school/update-requests.ts). */
  readonly dataUpdates: { pendingForAccount(accountId: number): Promise<unknown> };
  /** The standard claims of the ID token for the granted scopes (src/oauth/userinfo.ts, idTokenClaims); undefined: no such account. */
  readonly idTokenClaims: (accountId: number, scopes: readonly string[]) => Promise<Record<string, unknown> | undefined>;
  /** Tells apps with a back-channel logout address that a sign-in ended (src/oauth/backchannel-logout.ts). */
  readonly notices: Pick<LogoutNotices, 'tell'>;
}

/** The interaction prompt of a data update asked at sign-in (src/surfaces/web/login.ts shows its page). */
export const DATA_UPDATE_PROMPT = 'data_update';
/** The interaction prompt of an app that does not admit the signed-in account (src/surfaces/web/login.ts answers it 403). */
export const APP_ADMISSION_PROMPT = 'app_admission';

/** The pages of the end_session_endpoint and the errors that cannot go back to an app. */
export interface ProviderPages {
  logout(ctx: KoaContextWithOIDC, form: string): Promise<void>;
  signedOut(ctx: KoaContextWithOIDC): Promise<void>;
  error(ctx: KoaContextWithOIDC, out: ErrorOut): Promise<void>;
  /** Device sign-in (RFC 8628) at /device: the code's form (again with the refusal `err`), the app to confirm, the end. */
  deviceCode(ctx: KoaContextWithOIDC, out: ErrorOut | undefined, err: Error | undefined): Promise<void>;
  deviceConfirm(ctx: KoaContextWithOIDC, client: Client, deviceInfo: Record<string, unknown>, userCode: string): Promise<void>;
  deviceDone(ctx: KoaContextWithOIDC): Promise<void>;
}

/**
 * Builds the oidc-provider instance: routes of docs/decisions.md, JWT access tokens for the userinfo
 * server (a resource indicator that every grant defaults to), the lifetimes of the spec, PKCE,
 * refresh rotation, sessions that end with the browser unless remembered, RP-initiated logout,
 * and our account, client and page hooks.
 */
export function buildProvider(deps: ProviderDeps): Provider {
  const audience = userinfoAudience(deps.config.urls.userinfo);
  const provider = new Provider(deps.config.urls.auth, configuration(deps, audience));
  // X-Forwarded-* is trusted exactly when the host app trusts it (TRUSTED_PROXIES).
  provider.proxy = deps.config.trustedProxies.length > 0;
  compareHashedClientSecrets(provider);
  tellAppsThroughNotices(provider, deps.notices);
  return provider;
}

function configuration(deps: ProviderDeps, audience: string): Configuration {
  const { keys } = deps;
  const machine = machineIssuing(deps);
  return {
    adapter: createAdapterFactory(deps.store, deps.clients),
    jwks: { keys: keys.privateJwks.keys.map((k) => ({ ...k })) },
    cookies: {
      keys: [...keys.cookieKeys],
      names: { ...providerCookieNames(servesHttps(deps.config.urls.auth)) },
      // No maxAge: the session cookie ends with the browser unless the login was remembered,
      // and then oidc-provider gives it the session's expiry (see sessionTtl).
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    routes: {
      authorization: OAUTH_PATHS.authorize,
      token: OAUTH_PATHS.token,
      jwks: OAUTH_PATHS.jwks,
      revocation: OAUTH_PATHS.revoke,
      introspection: OAUTH_PATHS.introspect,
      end_session: OAUTH_PATHS.logout,
      device_authorization: OAUTH_PATHS.deviceAuthorization,
      code_verification: OAUTH_PATHS.device,
    },
    responseTypes: ['code'],
    scopes: [OPENID],
    // The standard scopes of the login-scope table (profile, email) and their claims, which the ID
    // token carries as well as userinfo, as libraries expect (the provider's own userinfo being off,
    // it puts them in the ID token: conformIdTokenClaims governs only that built-in one).
    claims: { ...ID_TOKEN_CLAIMS },
    // Hashed secrets rule out client_secret_jwt (it needs the secret itself).
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: keys.signingAlg,
    },
    extraClientMetadata: { properties: [FIRST_PARTY, ALLOWED_SCOPES, REQUIRE_PKCE, SERVICE_NAME], validator: validateExtraMetadata },
    // The spec lists redirect_uri as a parameter of authorize; it is never inferred.
    allowOmittingSingleRegisteredRedirectUri: false,
    // RFC 9700: PKCE for every client; only a confidential legacy app may be registered without.
    pkce: { required: (_ctx, client) => client.clientAuthMethod === 'none' || client[REQUIRE_PKCE] !== false },
    rotateRefreshToken: true,
    // Refresh tokens outlive the login session (30 days); they end by expiry or revocation, not
    // by logout (codes issued this way mark the session's grants to persist logout).
    expiresWithSession: async () => false,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      AccessToken: LIFETIMES.accessToken,
      ClientCredentials: LIFETIMES.accessToken,
      AuthorizationCode: LIFETIMES.authorizationCode,
      RefreshToken: LIFETIMES.refreshToken,
      Grant: LIFETIMES.grant,
      IdToken: LIFETIMES.idToken,
      Interaction: LIFETIMES.interaction,
      DeviceCode: LIFETIMES.deviceCode,
      Session: (_ctx, session) => sessionTtl(session, Math.floor(Date.now() / 1000)),
    },
    // The userinfo server checks that the grant behind an access token is still alive.
    extraTokenClaims: async (ctx, token) => ({
      ...accessTokenGrantClaim(token),
      ...signInClaims(ctx, token),
      ...(await machineTokenClaims(token, deps.clients)),
    }),
    findAccount: accountFinder(deps),
    loadExistingGrant: (ctx) => loadExistingGrant(ctx),
    clientBasedCORS: (_ctx, origin, client) => browserClientOrigin(client, origin),
    interactions: {
      url: async (_ctx, interaction) => `${OAUTH_PATHS.interaction}/${interaction.uid}`,
      policy: interactionPrompts(deps),
    },
    renderError: async (ctx, out) => deps.pages.error(ctx, out),
    // `lang` on the authorization request, beside OpenID Connect's ui_locales, picks the login pages' language.
    extraParams: ['lang'],
    discovery: { userinfo_endpoint: audience, protected_resources: protectedResourceIds(deps.config) },
    features: {
      devInteractions: { enabled: false },
      // Our userinfo server verifies JWTs itself; the built-in one takes only opaque tokens.
      userinfo: { enabled: false },
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // The end_session_endpoint: ends the login session at the authorization server (the apps'
      // grants stay); post_logout_redirect_uri must be registered by the client, exactly.
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: (ctx, form) => deps.pages.logout(ctx, form),
        postLogoutSuccessSource: (ctx) => deps.pages.signedOut(ctx),
      },
      // RFC 8628 device sign-in: a device shows a user code and /device, where a person types it
      // on a phone, then signs in and consents on our pages; every page is the web layer's
      // (src/surfaces/web/provider-pages.ts). Codes live LIFETIMES.deviceCode, are used once, and
      // guesses are limited (src/oauth/device-codes.ts).
      deviceFlow: {
        enabled: true,
        charset: 'base-20',
        mask: '****-****',
        userCodeInputSource: (ctx, _form, out, err) => deps.pages.deviceCode(ctx, out, err),
        userCodeConfirmSource: (ctx, _form, client, deviceInfo, userCode) => deps.pages.deviceConfirm(ctx, client, deviceInfo, userCode),
        successSource: (ctx) => deps.pages.deviceDone(ctx),
      },
      // OpenID Connect Back-Channel Logout: an app that registered an address gets a signed logout
      // token when a sign-in it holds ends; `sid` goes into its ID tokens (src/oauth/apps.ts). The
      // provider's own sending at the end_session endpoint becomes a notice (tellAppsThroughNotices).
      backchannelLogout: { enabled: true },
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      introspection: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      // Machine tokens for the data API (src/oauth/machine-tokens.ts): an app's server, no person.
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // A person's tokens are for userinfo; machine tokens for the data API.
        defaultResource: async (ctx) => (isMachineGrant(ctx) ? machine.resource : audience),
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, resource, client) =>
          namesDataApi(resource, machine.resource)
            ? machineResourceServer(ctx, client.clientId, machine)
            : resourceServer(ctx, resource, client, audience, keys.signingAlg),
      },
    },
  };
}

/**
 * The userinfo server is the only resource server: JWT access tokens, 1 hour, with the login
 * scopes of src/oauth/login-scopes.ts that the client is allowed (every one but `openid`).
 * The provider asks for it on every authorization and token request, with the requested scope
 * at hand, which makes it the place to refuse scopes that are unknown or not allowed for the
 * client (invalid_scope, sent back to the client like any other authorization error).
 */
function resourceServer(ctx: KoaContextWithOIDC, resource: string, client: Client, audience: string, alg: SigningAlg): ResourceServer {
  if (resource !== audience) throw new errors.InvalidTarget();
  if (isMachineGrant(ctx)) throw new errors.InvalidTarget('userinfo takes the tokens of a person; machine tokens are for the data API');
  const allowed = allowedScopes(client);
  const requested = ctx.oidc?.params?.['scope'];
  for (const scope of typeof requested === 'string' ? requested.split(' ').filter(Boolean) : []) {
    if (!(OAUTH_SCOPES as readonly string[]).includes(scope)) throw new errors.InvalidScope('requested scope is not supported', scope);
    if (!allowed.has(scope)) throw new errors.InvalidScope('requested scope is not allowed for this client', scope);
  }
  return {
    scope: RESOURCE_SCOPES.filter((s) => allowed.has(s)).join(' '),
    audience,
    accessTokenTTL: LIFETIMES.accessToken,
    accessTokenFormat: 'jwt' as const,
    jwt: { sign: { alg } },
  };
}

/** What issuing a machine token reads: the app's registration, its owner's standing, the scope policy. */
function machineIssuing(deps: ProviderDeps): MachineIssuing {
  return {
    apps: deps.clients,
    policy: deps.config.policy,
    standing: async (id) => {
      const known = await deps.accounts.known(id);
      return known ? standingOf(known.doc, known) : null;
    },
    resource: dataApiResource(deps.config.urls.base),
    alg: deps.keys.signingAlg,
  };
}

/**
 * oidc-provider's prompts (login, then consent) with ours between them: an app that does not
 * admit the signed-in account, then a data update the school asks of the signed-in student
 * (src/data/school/update-requests.ts). A prompt's checks run on every authorization request, a session that would skip
 * the login page included, so single sign-on and an earlier consent cannot pass them. Not
 * requestable: an app cannot ask for them with `prompt=`.
 */
function interactionPrompts(deps: ProviderDeps): ReturnType<typeof interactionPolicy.base> {
  const { Prompt, Check, base } = interactionPolicy;
  const prompts = base();
  // A testing app admits only its owner, at every authorization (src/auth/policy.ts appAdmits):
  // someone who consented while it was active stops here once it is back in testing. Never
  // satisfied by the person; with prompt=none the app gets access_denied.
  const appAdmission = new Prompt(
    { name: APP_ADMISSION_PROMPT, requestable: false },
    new Check('app_not_admitting', 'the app admits only its owner until the school approves it', 'access_denied', async (ctx) => {
      const accountId = ctx.oidc.session?.accountId;
      const clientId = ctx.oidc.client?.clientId;
      if (!accountId || !/^\d+$/.test(accountId) || !clientId) return Check.NO_NEED_TO_PROMPT;
      const app = await deps.clients.standing(clientId);
      return app && !appAdmits(app, Number(accountId)) ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT;
    }),
  );
  // Satisfied once the student's answer is stored (the request no longer names them) or the request is withdrawn.
  const dataUpdate = new Prompt(
    { name: DATA_UPDATE_PROMPT, requestable: false },
    new Check('data_update_requested', 'the school asks the student to check their details', async (ctx) => {
      const accountId = ctx.oidc.session?.accountId;
      if (!accountId || !/^\d+$/.test(accountId)) return Check.NO_NEED_TO_PROMPT;
      return (await deps.dataUpdates.pendingForAccount(Number(accountId))) ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT;
    }),
  );
  prompts.add(dataUpdate, 1);
  prompts.add(appAdmission, 1);
  return prompts;
}

/**
 * Seconds a login session lives from now. A remembered login ("keep me signed in") lasts until
 * 14 days after the login, and oidc-provider gives its cookie that expiry; any other session
 * (transient: its cookie ends with the browser) ends on the server an hour after its last use.
 */
export function sessionTtl(session: Pick<Session, 'accountId' | 'transient' | 'loginTs'>, nowSeconds: number): number {
  if (!session.accountId || session.transient || session.loginTs === undefined) return LIFETIMES.session;
  return Math.max(1, session.loginTs + LIFETIMES.rememberedSession - nowSeconds);
}

function accessTokenGrantClaim(token: AccessToken | ClientCredentials): Record<string, unknown> | undefined {
  return token.kind === 'AccessToken' && token.grantId ? { gid: token.grantId } : undefined;
}

/**
 * For our own pages' client: when and how the person signed in (RFC 9068 `auth_time` and
 * `amr`), from the authorization code being redeemed, so the admin console can ask for a fresh
 * sign-in (15 minutes) and for a second factor (src/surfaces/web/web.ts).
 */
function signInClaims(ctx: KoaContextWithOIDC, token: AccessToken | ClientCredentials): Record<string, unknown> | undefined {
  if (token.kind !== 'AccessToken' || token.clientId !== WEB_CLIENT_ID) return undefined;
  const code = ctx.oidc?.entities.AuthorizationCode;
  if (!code) return undefined;
  return { auth_time: code.authTime, amr: code.amr ?? [] };
}

/** Accounts whose existence is remembered per process. */
/**
 * The provider's account look-up (every code and refresh grant makes one), remembered until a
 * change names the account (src/data/accounts/store.ts, known), so a refresh reads no account. A
 * disabled account is no account to the provider: its refresh tokens and codes are refused, and
 * a session of it asks for a login again, which the login page refuses.
 */
function accountFinder(deps: ProviderDeps): (ctx: unknown, sub: string) => Promise<Account | undefined> {
  return async (_ctx, sub) => {
    const account = /^\d+$/.test(sub) ? await deps.accounts.known(Number(sub)) : null;
    if (!account || account.doc.disabledAt) return undefined;
    return {
      accountId: sub,
      claims: async (_use, scope) => ({ ...(await deps.idTokenClaims(Number(sub), scope.split(' '))), sub }),
    };
  };
}

/**
 * The provider's default, plus: a first-party client's grant is created (or widened) with
 * exactly the requested scopes, so the consent prompt finds nothing missing and is skipped. An
 * existing grant that already holds them is not saved again (a saved grant is news to every
 * process that remembers it, src/data/accounts/oauth-records.ts).
 */
async function loadExistingGrant(ctx: KoaContextWithOIDC): Promise<Grant | undefined> {
  const oidc = ctx.oidc;
  const client = oidc?.client;
  if (!oidc || !client) return undefined;
  const grantId = oidc.result?.consent?.grantId ?? oidc.session?.grantIdFor(client.clientId);
  const existing = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
  const accountId = oidc.session?.accountId;
  if (client[FIRST_PARTY] !== true || !accountId) return existing;
  const grant = existing ?? new oidc.provider.Grant({ accountId, clientId: client.clientId });
  const before = existing ? JSON.stringify([grant.openid, grant.resources]) : undefined;
  const requested = oidc.requestParamScopes;
  const openid = [...oidc.requestParamOIDCScopes];
  if (openid.length > 0) grant.addOIDCScope(openid.join(' '));
  for (const [indicator, server] of Object.entries(oidc.resourceServers ?? {})) {
    const scopes = [...requested].filter((s) => server.scopes.has(s));
    if (scopes.length > 0) grant.addResourceScope(indicator, scopes.join(' '));
  }
  if (JSON.stringify([grant.openid, grant.resources]) !== before) await grant.save();
  return grant;
}

/** Browsers may call the token endpoint only for public clients, from a redirect address's origin. */
function browserClientOrigin(client: Client, origin: string): boolean {
  if (client.clientAuthMethod !== 'none' || origin === 'null') return false;
  return (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin);
}

function allowedScopes(client: Client): Set<string> {
  const value = client[ALLOWED_SCOPES];
  return new Set(Array.isArray(value) ? value.filter((s): s is string => typeof s === 'string') : []);
}

function validateExtraMetadata(_ctx: unknown, key: string, value: unknown): void {
  if (key === FIRST_PARTY && value !== undefined && typeof value !== 'boolean') {
    throw new errors.InvalidClientMetadata(`${FIRST_PARTY} must be a boolean`);
  }
  if (key === ALLOWED_SCOPES && value !== undefined && !(Array.isArray(value) && value.every((s) => typeof s === 'string'))) {
    throw new errors.InvalidClientMetadata(`${ALLOWED_SCOPES} must be an array of strings`);
  }
  if (key === REQUIRE_PKCE && value !== undefined && typeof value !== 'boolean') {
    throw new errors.InvalidClientMetadata(`${REQUIRE_PKCE} must be a boolean`);
  }
  if (key === SERVICE_NAME && value !== undefined && typeof value !== 'string') {
    throw new errors.InvalidClientMetadata(`${SERVICE_NAME} must be a string`);
  }
}

/**
 * The end_session endpoint tells each app of the ending session that registered a back-channel
 * logout address through `Client.prototype.backchannelLogout`, which would POST the logout token
 * there and then, inside the person's request, once. It makes a notice instead, which the webhook
 * worker signs, sends to a safe target and retries like every other (src/oauth/backchannel-logout.ts).
 */
function tellAppsThroughNotices(provider: Provider, notices: ProviderDeps['notices']): void {
  provider.Client.prototype.backchannelLogout = async function notice(this: Client, sub: string, sid: string): Promise<void> {
    await notices.tell([{ clientId: this.clientId, sub, sid }], 'signed_out');
  };
}

/**
 * Secrets are stored as SHA-256 hashes. oidc-provider compares the presented secret with the
 * stored value through `Client.prototype.compareClientSecret`, the hook its maintainer points
 * to for hashed secrets (panva/node-oidc-provider#631); this replaces it with a hash check.
 */
function compareHashedClientSecrets(provider: Provider): void {
  provider.Client.prototype.compareClientSecret = function compareHashed(this: Client, actual: string): boolean {
    return clientSecretMatches(actual, this.clientSecret);
  };
}
