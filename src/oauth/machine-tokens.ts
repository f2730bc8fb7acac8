import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { errors, type AccessToken, type ClientCredentials, type KoaContextWithOIDC, type ResourceServer } from 'oidc-provider';
import { appScopes, type AccountStanding, type KeyScopes, type PolicySettings } from '../auth/policy.js';
import type { ApiKeyPrincipal } from '../auth/principal.js';
import type { ApiScope } from '../data/__generated__/enums.js';
import { API_SCOPES } from '../data/keys/store.js';
import { UnauthorizedError } from '../errors/index.js';
import { machineUsageId, type AppService, type MachineStanding } from './apps.js';
import { LIFETIMES } from './constants.js';
import type { OAuthKeys, SigningAlg } from './signing-keys.js';
import type { Config } from '../config/index.js';
import type { Database } from '../data/database.js';
import { findStanding } from '../data/accounts/standing.js';

/**
 * Machine tokens: an app's own server, with no person signed in, gets a short-lived token for the
 * data API from the token endpoint (`grant_type=client_credentials`, RFC 6749 4.4), a JWT whose
 * audience is the data API (RFC 8707 resource indicators), valid at most LIFETIMES.accessToken.
 * The data API reads it exactly as it reads an API key of the app's owner with the same scopes
 * (src/http/bearer.ts): the scopes are worked out at each use from what the app asked for, what
 * its owner's role grants now and what an admin decided (src/auth/policy.ts, appScopes), and a
 * disabled app, a revoked token or a disabled owner stop it at once, in every process: what the
 * token rests on is read through the remembered look-ups of apps and accounts, which a change
 * forgets everywhere (src/data/platform/versions.ts).
 */

/** The grant type of machine tokens. */
export const MACHINE_GRANT = 'client_credentials';

/** The data API's resource identifier (RFC 8707, RFC 9728): BASE_URL as a URL; every machine token's audience. */
export function dataApiResource(baseUrl: string): string {
  return new URL(baseUrl).href;
}

/** Whether a resource indicator names the data API (`http://host:8080` and `http://host:8080/` alike). */
export function namesDataApi(resource: string, dataResource: string): boolean {
  return URL.parse(resource)?.href === dataResource;
}

/** Whether the token request at hand is a machine token's. */
export function isMachineGrant(ctx: KoaContextWithOIDC): boolean {
  return ctx.oidc?.params?.['grant_type'] === MACHINE_GRANT;
}

/** What the token endpoint reads to issue a machine token. */
export interface MachineIssuing {
  readonly apps: Pick<AppService, 'machineStanding'>;
  readonly policy: PolicySettings;
  /** The owner's standing now (src/data/accounts/standing.ts, findStanding). */
  readonly standing: (accountId: number) => Promise<AccountStanding | null>;
  readonly resource: string;
  readonly alg: SigningAlg;
}

/**
 * The data API as the provider's resource server, asked for on every machine-token request
 * (resourceIndicators.getResourceServerInfo): only the client_credentials grant reaches it (a
 * person's tokens are for userinfo). It refuses, with the provider's own errors, a scope the app
 * was not registered for or one an admin (or its owner's role) refused, and an app whose owner is
 * disabled; a scope awaiting approval is issued, and the data API answers it 403 with the
 * approval message, as it does for a key. Without `scope`, the token gets every scope the app
 * may hold.
 */
export async function machineResourceServer(ctx: KoaContextWithOIDC, clientId: string, issuing: MachineIssuing): Promise<ResourceServer> {
  if (!isMachineGrant(ctx)) throw new errors.InvalidTarget('the data API takes machine tokens only (grant_type=client_credentials)');
  const app = await issuing.apps.machineStanding(clientId);
  if (!app?.issues) throw new errors.UnauthorizedClient('the app is not registered for client_credentials');
  const scopes = await scopesNow(app, issuing);
  // As for a disabled app: client authentication fails (401 invalid_client), the detail only in our log.
  if (scopes === 'owner-disabled') throw new errors.InvalidClientAuth('the account that holds the app is disabled');
  const open = [...scopes.effective, ...scopes.pending];
  const params = ctx.oidc.params ?? {};
  const requested = typeof params['scope'] === 'string' ? params['scope'].split(' ').filter(Boolean) : [];
  for (const scope of requested) {
    if (!(API_SCOPES as readonly string[]).includes(scope)) throw new errors.InvalidScope('requested scope is not supported', scope);
    if (!app.scopes.requested.includes(scope as ApiScope))
      throw new errors.InvalidScope('requested scope is not allowed for this client', scope);
    if (!open.includes(scope as ApiScope)) throw new errors.InvalidScope('requested scope was refused for this client', scope);
  }
  // The grant reads the requested scopes after this: none asked for means every scope the app may hold.
  if (requested.length === 0) params['scope'] = open.join(' ');
  return {
    scope: open.join(' '),
    audience: issuing.resource,
    accessTokenTTL: LIFETIMES.accessToken,
    accessTokenFormat: 'jwt' as const,
    jwt: { sign: { alg: issuing.alg } },
  };
}

/** The app's data scopes now, or 'owner-disabled' (then it reads nothing and gets no token). */
async function scopesNow(
  app: MachineStanding,
  reading: Pick<MachineIssuing, 'policy' | 'standing'>,
): Promise<KeyScopes | 'owner-disabled'> {
  const owner = app.ownerAccountId === null ? null : ((await reading.standing(app.ownerAccountId)) ?? goneOwner(app.ownerAccountId));
  if (owner?.disabled) return 'owner-disabled';
  return appScopes(app.scopes, owner, reading.policy);
}

/** An app whose owner account is gone reads nothing, as a disabled one. */
function goneOwner(id: number): AccountStanding {
  return { id, role: 'USER', disabled: true, secondFactor: false };
}

/**
 * The claim every machine token carries: the app's machine grant (`gid`), which revoking the
 * app's tokens (or a new secret) replaces, so every token issued before stops.
 */
export async function machineTokenClaims(
  token: AccessToken | ClientCredentials,
  apps: Pick<AppService, 'currentMachineGrant'>,
): Promise<Record<string, unknown> | undefined> {
  if (token.kind !== 'ClientCredentials' || !token.clientId) return undefined;
  const grantId = await apps.currentMachineGrant(token.clientId);
  if (!grantId) throw new errors.UnauthorizedClient('the app is not registered for client_credentials');
  return { gid: grantId };
}

/** A machine token whose signature, issuer, audience, type and expiry were checked. */
export interface SignedMachineToken {
  readonly clientId: string;
  readonly grantId: string;
  readonly scopes: readonly string[];
  readonly claims: JWTPayload;
}

export interface MachineTokenOptions {
  readonly issuer: string;
  readonly resource: string;
  readonly publicJwks: { readonly keys: JWK[] };
  readonly apps: Pick<AppService, 'machineStanding'>;
  readonly policy: PolicySettings;
  readonly standing: (accountId: number) => Promise<AccountStanding | null>;
  readonly now: () => Date;
}

/** Verified tokens remembered per process: a repeat caller costs no signature check. */
const MAX_REMEMBERED_TOKENS = 10000;

/**
 * Reads machine tokens for the data API (src/http/bearer.ts) and for revocation and
 * introspection at the authorization server (src/oauth/provider-middleware.ts).
 */
export class MachineTokens {
  private readonly keySet: ReturnType<typeof createLocalJWKSet>;
  /** Signatures already checked, by token; expiry is checked on every use. */
  private readonly signed = new LRUCache<string, SignedMachineToken>({ max: MAX_REMEMBERED_TOKENS });

  constructor(private readonly options: MachineTokenOptions) {
    this.keySet = createLocalJWKSet({ keys: options.publicJwks.keys });
  }

  /**
   * The principal of a machine token: read by the data API as a key with the app's scopes of now
   * (those the token was issued for), budgeted and counted per app (`app:<client id>`). Throws
   * 401 with the reason: invalid, expired, revoked, the app disabled or gone, its owner disabled.
   */
  async principal(token: string): Promise<ApiKeyPrincipal> {
    const signed = await this.verifySigned(token);
    const app = await this.options.apps.machineStanding(signed.clientId);
    if (!app) throw new UnauthorizedError('Invalid bearer token: its app no longer exists.');
    if (app.disabled)
      throw new UnauthorizedError("Disabled app: the app of this machine token is disabled; ask the school's administrators.");
    if (!app.issues || app.grantId === null || app.grantId !== signed.grantId)
      throw new UnauthorizedError("Revoked bearer token: the app's machine tokens were revoked; ask the token endpoint for a new one.");
    const scopes = await scopesNow(app, this.options);
    if (scopes === 'owner-disabled')
      throw new UnauthorizedError("Disabled app: the account that holds the app is disabled; ask the school's administrators.");
    const held = new Set(signed.scopes);
    return {
      kind: 'apiKey',
      id: machineUsageId(signed.clientId),
      machineApp: signed.clientId,
      scopes: new Set(scopes.effective.filter((s) => held.has(s))),
      pendingScopes: new Set(scopes.pending.filter((s) => held.has(s))),
      rateLimit: null,
      ownerAccountId: app.ownerAccountId,
    };
  }

  /** The token's signed facts, or 401 (invalid or expired). */
  async verifySigned(token: string): Promise<SignedMachineToken> {
    const now = this.options.now();
    const remembered = this.signed.get(token);
    const signed = remembered ?? (await this.checkSignature(token, now));
    const exp = signed.claims.exp ?? 0;
    if (exp * 1000 <= now.getTime()) {
      this.signed.delete(token);
      throw new UnauthorizedError(
        `Expired bearer token: it expired at ${new Date(exp * 1000).toISOString()}; ask the token endpoint for a new one.`,
      );
    }
    if (!remembered) this.signed.set(token, signed);
    return signed;
  }

  private async checkSignature(token: string, now: Date): Promise<SignedMachineToken> {
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, this.keySet, {
        issuer: this.options.issuer,
        audience: this.options.resource,
        typ: 'at+jwt',
        algorithms: ['RS256', 'ES256'],
        currentDate: now,
        requiredClaims: ['exp', 'iat', 'jti', 'sub'],
      }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) {
        const exp = typeof err.payload.exp === 'number' ? new Date(err.payload.exp * 1000).toISOString() : 'an earlier time';
        throw new UnauthorizedError(`Expired bearer token: it expired at ${exp}; ask the token endpoint for a new one.`);
      }
      throw new UnauthorizedError('Invalid bearer token: it is not a machine token of this service.');
    }
    const clientId = claims['client_id'];
    const grantId = claims['gid'];
    // A machine token is the app's own: its subject is the app (a person's token names the person).
    if (typeof clientId !== 'string' || typeof grantId !== 'string' || claims.sub !== clientId)
      throw new UnauthorizedError('Invalid bearer token: it is not a machine token of this service.');
    const scope = typeof claims['scope'] === 'string' ? claims['scope'] : '';
    return { clientId, grantId, scopes: scope.split(' ').filter(Boolean), claims };
  }
}

/** The reader of machine tokens both servers use: the provider's public keys, the app registry, the owners' standing, the app's clock. */
export function machineTokensFor(
  config: Config,
  keys: Pick<OAuthKeys, 'publicJwks'>,
  apps: Pick<AppService, 'machineStanding'>,
  db: Database,
  now: () => Date,
): MachineTokens {
  return new MachineTokens({
    issuer: config.urls.auth,
    resource: dataApiResource(config.urls.base),
    publicJwks: keys.publicJwks,
    apps,
    policy: config.policy,
    standing: (id) => findStanding(db, id),
    now,
  });
}
