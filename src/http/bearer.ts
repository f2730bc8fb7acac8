import type { ApiKeyPrincipal } from '../auth/principal.js';
import { type AppError, BadRequestError, UnauthorizedError } from '../errors/index.js';
import type { ApiKeyAuthenticator, CredentialReader } from './api-key.js';
import { UUID_PATTERN } from '../data/keys/store.js';
import type { AppContext } from './context.js';

/** What reads an app's machine token (src/oauth/machine-tokens.ts, MachineTokens). */
export interface BearerTokens {
  principal(token: string): Promise<ApiKeyPrincipal>;
}

/** `Authorization: Bearer <token>` (RFC 6750, 2.1: the b64token syntax). */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const NAMES_BEARER = /^bearer(?:\s|$)/i;

/**
 * The data API's credentials: an API key in X-API-KEY, or an app's machine token in
 * `Authorization: Bearer` (RFC 6750), which reads exactly as a key with the app's scopes
 * (src/oauth/machine-tokens.ts). A request sends one or the other (RFC 6750, 2: never two
 * methods), else 400. Every 401 names the data API's protected resource metadata (RFC 9728,
 * 5.1), so a client learns from any refusal where tokens come from; a refused token's 401 also
 * says `invalid_token` and why (RFC 6750, 3).
 */
export function keyOrBearer(keys: ApiKeyAuthenticator, tokens: BearerTokens, metadataUrl: string): CredentialReader {
  const challenge = `Bearer resource_metadata=${quoted(metadataUrl)}`;
  // Made once: a warm key's answer adds no allocation here (docs/benchmarks.md, "A warm answer's fixed cost").
  const keyRefused = challenged(() => challenge);
  const tokenRefused = challenged((err) => `${challenge}, error="invalid_token", error_description=${quoted(err.message)}`);
  return (ctx) => {
    if (!NAMES_BEARER.test(ctx.get('Authorization'))) {
      try {
        const found = keys.authenticate(ctx.get('X-API-KEY').trim());
        return found instanceof Promise ? found.catch(keyRefused) : found;
      } catch (err) {
        return keyRefused(err);
      }
    }
    if (ctx.get('X-API-KEY')) throw new BadRequestError('Send either X-API-KEY or Authorization: Bearer, not both.');
    try {
      return tokens.principal(bearerToken(ctx)).catch(tokenRefused);
    } catch (err) {
      return tokenRefused(err);
    }
  };
}

function bearerToken(ctx: AppContext): string {
  const token = BEARER.exec(ctx.get('Authorization'))?.[1];
  if (!token) throw new UnauthorizedError('Malformed bearer token: send Authorization: Bearer <machine token>.');
  // An API key sent as a bearer token is a key in the wrong header: said so, as a missing key.
  if (UUID_PATTERN.test(token))
    throw new UnauthorizedError(
      'Missing API key: send it in the X-API-KEY header (Authorization: Bearer takes the machine tokens of an app).',
    );
  return token;
}

/** Rethrows an error, a 401 with the WWW-Authenticate challenge `challenge` makes of it. */
function challenged(challenge: (err: AppError) => string): (err: unknown) => never {
  return (err) => {
    if (!(err instanceof UnauthorizedError)) throw err;
    throw new UnauthorizedError(err.message, { headers: { ...err.headers, 'WWW-Authenticate': challenge(err) } });
  };
}

/** A quoted-string parameter of WWW-Authenticate (RFC 9110, 5.6.4): backslashes and quotes escaped. */
export function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
