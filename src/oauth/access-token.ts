import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWK, type JWTPayload } from 'jose';
import type { OAuthStore } from '../data/accounts/oauth-records.js';
import type { Config } from '../config/index.js';
import { userinfoAudience } from './constants.js';
import type { OAuthKeys } from './signing-keys.js';

/** A verified access token: whose it is, which client holds it, what it allows. */
export interface VerifiedAccessToken {
  readonly sub: string;
  readonly clientId: string;
  readonly scopes: ReadonlySet<string>;
  readonly grantId: string;
  readonly claims: JWTPayload;
}

/** Why a token was refused; the description is safe to send (it never echoes the token). */
export class AccessTokenRejected extends Error {
  override name = 'AccessTokenRejected';
}

export interface AccessTokenVerifierOptions {
  readonly issuer: string;
  readonly audience: string;
  readonly publicJwks: { readonly keys: JWK[] };
  readonly store: OAuthStore;
  readonly now: () => Date;
}

/**
 * Verifies the JWT access tokens of the token endpoint: signature by one of the provider's keys
 * (by kid), type at+jwt, issuer, audience, expiry on the injected clock; then that the grant
 * behind it is still alive, so a revoked grant ends its access tokens at once.
 *
 * The store remembers live grants until a change names the grant, its account or its client, as
 * every revocation does (src/data/accounts/oauth-records.ts) in this process or another
 * (src/data/platform/version-bus.ts, src/data/platform/versions.ts): a token's
 * holder is then checked without a database read, and a revocation still counts at once.
 */
export class AccessTokenVerifier {
  private readonly keySet: ReturnType<typeof createLocalJWKSet>;

  constructor(private readonly options: AccessTokenVerifierOptions) {
    this.keySet = createLocalJWKSet({ keys: options.publicJwks.keys });
  }

  /** Returns the token's facts, or throws AccessTokenRejected. */
  async verify(token: string): Promise<VerifiedAccessToken> {
    const claims = await this.verifySignedClaims(token);
    const sub = claims.sub;
    const clientId = claims['client_id'];
    const grantId = claims['gid'];
    if (typeof sub !== 'string' || typeof clientId !== 'string' || typeof grantId !== 'string') {
      throw new AccessTokenRejected('the access token is invalid');
    }
    const grant = (await this.options.store.find('Grant', grantId))?.payload;
    if (!grant || grant['accountId'] !== sub || grant['clientId'] !== clientId) {
      throw new AccessTokenRejected('the access token was revoked');
    }
    const scope = typeof claims['scope'] === 'string' ? claims['scope'] : '';
    return { sub, clientId, grantId, claims, scopes: new Set(scope.split(' ').filter(Boolean)) };
  }

  private async verifySignedClaims(token: string): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(token, this.keySet, {
        issuer: this.options.issuer,
        audience: this.options.audience,
        typ: 'at+jwt',
        algorithms: ['RS256', 'ES256'],
        currentDate: this.options.now(),
        requiredClaims: ['exp', 'iat', 'jti', 'sub'],
      });
      return payload;
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw new AccessTokenRejected('the access token expired');
      throw new AccessTokenRejected('the access token is invalid');
    }
  }
}

/** True when a string has the shape of a JWS (three base64url parts); nothing is verified. */
export function looksLikeJwt(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(value);
}

/** The verifier both servers use: the provider's public keys, the OAuth store, the app's clock. */
export function verifierFor(config: Config, keys: OAuthKeys, store: OAuthStore, now: () => Date): AccessTokenVerifier {
  return new AccessTokenVerifier({
    issuer: config.urls.auth,
    audience: userinfoAudience(config.urls.userinfo),
    publicJwks: keys.publicJwks,
    store,
    now,
  });
}
