import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Config } from '../config/index.js';
import type { Database } from '../data/database.js';
import { getOrCreateKeyMaterial } from '../data/accounts/oauth-records.js';
import { MisconfiguredError } from '../errors/index.js';

export type SigningAlg = 'RS256' | 'ES256';

/** The authorization server's key material: signing keys (with kid) and cookie keys. */
export interface OAuthKeys {
  /** Private signing keys, newest first (the first one signs). */
  readonly privateJwks: { readonly keys: JWK[] };
  /** The same keys without their private parts, for verifiers (userinfo) and /v1/oauth/jwks. */
  readonly publicJwks: { readonly keys: JWK[] };
  readonly signingAlg: SigningAlg;
  readonly cookieKeys: readonly string[];
}

/** A configuration problem with the key material; start-up stops with its message. */
export class OAuthKeyError extends MisconfiguredError {}

const PUBLIC_MEMBERS = ['kty', 'kid', 'alg', 'use', 'n', 'e', 'crv', 'x', 'y'] as const;

/**
 * Rotation without logging anyone out (docs/operations.md, "9. Key rotation"): in both variables the
 * first key signs and every key verifies.
 * - Signing keys: oidc-provider signs with the first key of the set that fits the algorithm
 *   (its KeyStore.selectForSign keeps the configured order among keys that all carry `alg` and
 *   `use`, which checkKey below gives every key), and the algorithm is the first key's
 *   (`signingAlg`); /v1/oauth/jwks and the userinfo verifier take every public key.
 * - Cookie keys: oidc-provider's Koa app signs cookies with the first key and accepts any.
 *
 * Keys come from OAUTH_JWKS / OAUTH_COOKIE_KEYS. Without them (development and tests only; the
 * configuration refuses production without them) they are generated once and kept in the
 * database, so restarts and the separately run userinfo server share them.
 */
export async function loadOAuthKeys(config: Config, db: Database): Promise<OAuthKeys> {
  const jwksText = config.oauth.jwks ?? (await getOrCreateKeyMaterial(db, 'signing-jwks', generateJwks));
  const cookieKeys =
    config.oauth.cookieKeys ?? (JSON.parse(await getOrCreateKeyMaterial(db, 'cookie-keys', generateCookieKeys)) as string[]);
  const privateKeys = parseJwks(jwksText);
  const first = privateKeys[0];
  if (!first) throw new OAuthKeyError('OAUTH_JWKS: the key set holds no keys.');
  return {
    privateJwks: { keys: privateKeys },
    publicJwks: { keys: privateKeys.map(publicPart) },
    signingAlg: algOf(first),
    cookieKeys,
  };
}

/** Validates a private JWKS: every key signs, has a kid, and is RSA (RS256) or P-256 (ES256). */
export function parseJwks(text: string): JWK[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new OAuthKeyError('OAUTH_JWKS: not valid JSON (expected {"keys":[...]}).');
  }
  const keys = typeof parsed === 'object' && parsed !== null && 'keys' in parsed ? parsed.keys : undefined;
  if (!Array.isArray(keys) || keys.length === 0) throw new OAuthKeyError('OAUTH_JWKS: expected {"keys":[...]} with at least one key.');
  const checked = keys.map((key: unknown, index) => checkKey(key, index));
  const kids = checked.map((key) => key.kid);
  const twice = kids.find((kid, index) => kids.indexOf(kid) !== index);
  if (twice !== undefined) throw new OAuthKeyError(`OAUTH_JWKS: kid ${twice} is used by two keys; every key needs its own kid.`);
  return checked;
}

function checkKey(value: unknown, index: number): JWK {
  if (typeof value !== 'object' || value === null) throw new OAuthKeyError(`OAUTH_JWKS: key ${index} is not an object.`);
  const key = value as JWK;
  if (typeof key.kid !== 'string' || key.kid.length === 0) throw new OAuthKeyError(`OAUTH_JWKS: key ${index} has no kid.`);
  if (typeof key.d !== 'string') throw new OAuthKeyError(`OAUTH_JWKS: key ${key.kid} is not a private key (no "d").`);
  const alg = algOf(key);
  if (key.alg !== undefined && key.alg !== alg)
    throw new OAuthKeyError(`OAUTH_JWKS: key ${key.kid} has alg ${key.alg}; use RS256 (RSA) or ES256 (P-256).`);
  return { ...key, alg, use: 'sig' };
}

function algOf(key: JWK): SigningAlg {
  if (key.kty === 'RSA') return 'RS256';
  if (key.kty === 'EC' && key.crv === 'P-256') return 'ES256';
  throw new OAuthKeyError(`OAUTH_JWKS: key ${key.kid ?? '?'} must be RSA (RS256) or EC P-256 (ES256).`);
}

function publicPart(key: JWK): JWK {
  const out: JWK = {};
  for (const member of PUBLIC_MEMBERS) {
    const value = key[member];
    if (typeof value === 'string') out[member] = value;
  }
  return out;
}

/** A fresh RS256 key set (RS256 is what most relying parties expect by default). */
export async function generateJwks(): Promise<string> {
  const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return JSON.stringify({ keys: [{ ...jwk, kid, alg: 'RS256', use: 'sig' }] });
}

/**
 * One cookie key: 32 random bytes (256 bits, the HMAC-SHA256 key size of the cookie signatures),
 * 43 characters, above the 32 the production configuration asks for.
 */
export function generateCookieKey(): string {
  return randomBytes(32).toString('base64url');
}

/** The development cookie keys kept in the database (a JSON array, like OAUTH_COOKIE_KEYS split). */
async function generateCookieKeys(): Promise<string> {
  return JSON.stringify([generateCookieKey()]);
}
