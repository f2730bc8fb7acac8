import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type Provider from 'oidc-provider';
import type Koa from 'koa';
import type { Middleware } from 'koa';
import type { KoaContextWithOIDC, errors } from 'oidc-provider';
import type { OAuthStore } from '../data/accounts/oauth-records.js';
import type { Logger } from '../logger.js';
import { AccessTokenRejected, looksLikeJwt, type AccessTokenVerifier, type VerifiedAccessToken } from './access-token.js';
import { COOKIE_NAMES, OAUTH_PATHS, OAUTH_SCOPES, SELF_READ } from './constants.js';
import { API_SCOPES } from '../data/keys/store.js';
import type { MachineTokens, SignedMachineToken } from './machine-tokens.js';

/** Middleware of the provider's own Koa app (its context carries `oidc`). */
type ProviderMiddleware = Middleware<KoaContextWithOIDC['state'], KoaContextWithOIDC>;

/** The endpoints that authenticate clients and take a POST body. */
const CLIENT_ENDPOINTS = new Set<string>([OAUTH_PATHS.token, OAUTH_PATHS.revoke, OAUTH_PATHS.introspect]);
/** oidc-provider's own body limit. */
const BODY_LIMIT = 56 * 1024;

export interface ProviderMiddlewareDeps {
  readonly verifier: AccessTokenVerifier;
  readonly store: OAuthStore;
  readonly logger: Logger;
  /** Machine tokens (src/oauth/machine-tokens.ts): read, and revoked all at once per app. */
  readonly machine: { readonly tokens: MachineTokens; revokeAll(clientId: string): Promise<unknown> };
}

/**
 * Middleware that runs inside the provider's own Koa app, before (and, after `next`, around)
 * its routes: the JSON bodies of the spec, the default scope, the RFC 8414 metadata path, and
 * revocation/introspection of our JWT access tokens (which the provider refuses as structured).
 */
export function installProviderMiddleware(provider: Provider, deps: ProviderMiddlewareDeps): void {
  provider.use(acceptJsonBodies);
  provider.use(defaultScope);
  provider.use(metadataAliases);
  provider.use(structuredAccessTokens(deps.verifier, deps.store, deps.machine));
  provider.use(describeGrantErrors);
  provider.use(sessionCookieMaxAge);
  logProviderEvents(provider, deps.logger);
}

/** The session cookie and its signature cookie (`.sig`), under https with its prefix (providerCookieNames). */
const SESSION_COOKIE = new RegExp(`^(?:__Host-)?${COOKIE_NAMES.session}(?:\\.sig)?=`);

/**
 * A remembered login's session cookie gets an Expires date from oidc-provider (a transient
 * one gets none and ends with the browser). Max-Age with the same lifetime is added: browsers
 * prefer it to Expires (RFC 6265, 5.3) and it does not depend on the browser's clock.
 */
const sessionCookieMaxAge: ProviderMiddleware = async (ctx, next) => {
  await next();
  const cookies = ctx.response.headers['set-cookie'];
  if (!Array.isArray(cookies) || !cookies.some((cookie) => SESSION_COOKIE.test(cookie))) return;
  const now = Date.now();
  ctx.set(
    'Set-Cookie',
    cookies.map((cookie) => (SESSION_COOKIE.test(cookie) ? withMaxAge(cookie, now) : cookie)),
  );
};

function withMaxAge(cookie: string, now: number): string {
  if (/;\s*max-age=/i.test(cookie)) return cookie;
  const expires = Date.parse(/;\s*expires=([^;]+)/i.exec(cookie)?.[1] ?? '');
  // No Expires: a browser-session cookie. Expires in the past: a deletion, left as it is.
  if (!Number.isFinite(expires) || expires <= now) return cookie;
  return `${cookie}; max-age=${Math.max(1, Math.round((expires - now) / 1000))}`;
}

/** Where the 'grant.error' listener leaves the error's detail for describeGrantErrors. */
const GRANT_ERROR_DETAIL = 'grantErrorDetail';

/**
 * oidc-provider answers every invalid_grant with "grant request is invalid" and keeps the reason
 * ("authorization code already consumed", "refresh token is expired", "authorization code
 * redirect_uri mismatch", a PKCE mismatch...) in the error's detail. Client developers need the
 * reason, and it holds no secret, so it becomes the description.
 */
const describeGrantErrors: ProviderMiddleware = async (ctx, next) => {
  await next();
  const detail: unknown = ctx.state[GRANT_ERROR_DETAIL];
  if (typeof detail === 'string' && isRecord(ctx.body) && ctx.body['error'] === 'invalid_grant') {
    ctx.body = { ...ctx.body, error_description: detail };
  }
};

/** A body the provider cannot take; answered 400 invalid_request with this message. */
class BodyError extends Error {}

/**
 * oidc-provider parses only form bodies; the spec sends JSON. A JSON body is read here, and a
 * JSON object becomes the equivalent form (a `scope` array becomes a space-separated string),
 * which the provider reads as the request's body (replayedRequest); a form body reaches it as the
 * client sent it. The provider then applies its usual checks and errors to the same parameters.
 * When they name no client, the provider says "no client authentication mechanism provided";
 * the spec wants the missing parameter named, which is said once the provider has read them.
 */
const acceptJsonBodies: ProviderMiddleware = async (ctx, next) => {
  if (ctx.method !== 'POST' || !CLIENT_ENDPOINTS.has(ctx.path)) return next();
  // Other content types are left to the provider, which refuses them with 400.
  if (typeof ctx.is('application/json') === 'string') {
    try {
      ctx.req = replayedRequest(ctx.req, jsonToForm(await readBody(ctx.req)));
    } catch (err) {
      if (err instanceof BodyError) return oauthError(ctx, 400, 'invalid_request', err.message);
      throw err;
    }
  } else if (typeof ctx.is('application/x-www-form-urlencoded') !== 'string') {
    return next();
  }
  await next();
  if (namesNoClient(ctx)) oauthError(ctx, 400, 'invalid_request', "missing required parameter 'client_id'");
};

/**
 * The provider refused a request whose parameters it read (ctx.oidc.params) and that names no
 * client: no client_id and no Authorization header (client_secret_basic), the only ways our
 * clients authenticate (src/oauth/provider.ts, clientAuthMethods).
 */
function namesNoClient(ctx: KoaContextWithOIDC): boolean {
  const params = ctx.oidc?.params;
  if (ctx.status !== 400 || !params || params['client_id'] !== undefined || ctx.get('authorization')) return false;
  return isRecord(ctx.body) && ctx.body['error'] === 'invalid_request';
}

/**
 * The request with `form` as its body, as a stream the provider reads like the client's. (It
 * would also take the form from `req.body`, but warns once per process that a body parser in
 * front of it "is not recommended".) The headers are the request's own, changed to describe
 * the form: Koa's `ctx.request` keeps reading them from the original request.
 */
function replayedRequest(req: IncomingMessage, form: string): IncomingMessage {
  const body = Buffer.from(form, 'utf8');
  req.headers['content-type'] = 'application/x-www-form-urlencoded';
  req.headers['content-length'] = String(body.length);
  delete req.headers['transfer-encoding'];
  const { headers, method, url, httpVersion, socket } = req;
  return Object.assign(Readable.from([body]), {
    headers,
    method,
    url,
    httpVersion,
    socket,
    connection: socket,
  }) as unknown as IncomingMessage;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > BODY_LIMIT) throw new BodyError('failed to parse the request body (too large)');
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function jsonToForm(raw: string): string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new BodyError('failed to parse the request body');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BodyError('the request body must be a JSON object');
  }
  const form = new URLSearchParams();
  for (const [name, field] of Object.entries(value)) {
    if (field === null || field === undefined) continue;
    if (typeof field === 'string') form.append(name, field);
    else if (name === 'scope' && Array.isArray(field) && field.every((s) => typeof s === 'string')) form.append(name, field.join(' '));
    else throw new BodyError(`invalid parameter '${name}': must be a string${name === 'scope' ? ' or an array of strings' : ''}`);
  }
  return form.toString();
}

/** The spec's authorize request has no scope parameter; docs/decisions.md makes `self:read` the default. */
const defaultScope: ProviderMiddleware = async (ctx, next) => {
  if (ctx.method === 'GET' && ctx.path === OAUTH_PATHS.authorize && ctx.query['scope'] === undefined) {
    const query = new URLSearchParams(ctx.querystring);
    query.set('scope', SELF_READ);
    ctx.querystring = query.toString();
  }
  return next();
};

/**
 * /.well-known/oauth-authorization-server (RFC 8414) serves the same metadata as the OpenID
 * discovery document; both list every scope: the login scopes (the resource scope `self:read`
 * included), then the data scopes of machine tokens.
 */
const metadataAliases: ProviderMiddleware = async (ctx, next) => {
  if (ctx.path === OAUTH_PATHS.authorizationServerMetadata) ctx.path = OAUTH_PATHS.discovery;
  await next();
  if (ctx.path === OAUTH_PATHS.discovery && ctx.status === 200 && isRecord(ctx.body)) {
    ctx.body = { ...ctx.body, scopes_supported: [...OAUTH_SCOPES, ...API_SCOPES], ...suppliedClaims(ctx.body) };
  }
};

/**
 * oidc-provider lists `sid` among the claims it supports whatever its features; an ID token
 * carries it only for an app that asked for sessions in a logout it is told of (front- or
 * back-channel). Without such a logout, `sid` is never supplied, and is not advertised.
 */
function suppliedClaims(body: Record<string, unknown>): { claims_supported?: unknown[] } {
  const claims = body['claims_supported'];
  if (!Array.isArray(claims)) return {};
  const sessions = body['backchannel_logout_session_supported'] === true || body['frontchannel_logout_session_supported'] === true;
  return { claims_supported: sessions ? claims : claims.filter((claim) => claim !== 'sid') };
}

/**
 * The provider refuses JWT access tokens at revocation and introspection ("structured tokens").
 * After it has authenticated the client, such a token is handled here: revoking a person's token
 * revokes its grant, revoking a machine token revokes every machine token of the app (a JWT
 * cannot be revoked alone; RFC 7009 allows revoking the related tokens too), and introspection
 * answers from the verified claims (a machine token is active while the data API would take it).
 * Only the client the token was issued to may do either; anyone else learns nothing (`active:
 * false`, or a silent 200).
 */
function structuredAccessTokens(
  verifier: AccessTokenVerifier,
  store: OAuthStore,
  machine: ProviderMiddlewareDeps['machine'],
): ProviderMiddleware {
  return async (ctx, next) => {
    await next();
    const oidc = ctx.oidc;
    if (!oidc || (oidc.route !== 'revocation' && oidc.route !== 'introspection')) return;
    if (ctx.status !== 400 || !isRecord(ctx.body) || ctx.body['error'] !== 'unsupported_token_type') return;
    const token = oidc.params?.['token'];
    const client = oidc.client;
    if (!client || !looksLikeJwt(token)) return;
    const verified = await verifier.verify(token).catch((err: unknown) => {
      if (err instanceof AccessTokenRejected) return undefined;
      throw err;
    });
    const own = verified?.clientId === client.clientId ? verified : undefined;
    const signed = verified ? undefined : await machine.tokens.verifySigned(token).catch(() => undefined);
    const ownMachine = signed?.clientId === client.clientId ? signed : undefined;
    ctx.status = 200;
    ctx.set('Cache-Control', 'no-store');
    if (oidc.route === 'revocation') {
      if (own) await store.revokeGrant(own.grantId);
      if (ownMachine) await machine.revokeAll(ownMachine.clientId);
      ctx.body = '';
    } else if (own) {
      ctx.body = introspection(own);
    } else {
      const active =
        ownMachine &&
        (await machine.tokens.principal(token).then(
          () => true,
          () => false,
        ));
      ctx.body = ownMachine && active ? machineIntrospection(ownMachine) : { active: false };
    }
  };
}

function machineIntrospection(token: SignedMachineToken): Record<string, unknown> {
  const { claims } = token;
  return {
    active: true,
    client_id: token.clientId,
    sub: claims.sub,
    scope: token.scopes.join(' '),
    iss: claims.iss,
    aud: claims.aud,
    exp: claims.exp,
    iat: claims.iat,
    jti: claims.jti,
    token_type: 'Bearer',
  };
}

function introspection(token: VerifiedAccessToken): Record<string, unknown> {
  const { claims } = token;
  return {
    active: true,
    client_id: token.clientId,
    sub: token.sub,
    scope: [...token.scopes].join(' '),
    iss: claims.iss,
    aud: claims.aud,
    exp: claims.exp,
    iat: claims.iat,
    jti: claims.jti,
    token_type: 'Bearer',
  };
}

/** Writes an OAuth error body the way the provider does. */
function oauthError(ctx: KoaContextWithOIDC, status: number, error: string, description: string): void {
  ctx.status = status;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { error, error_description: description };
}

/**
 * The provider's events, logged through pino with the request id of the host app. Only error
 * codes, descriptions and identifiers are logged: never parameters, bodies or tokens.
 */
function logProviderEvents(provider: Provider, logger: Logger): void {
  // The request id is a field of the line rather than a child logger's binding: every refresh
  // logs a line, and a child per line was made and dropped each time. The refusals' and grants'
  // fields are fixed here and none is a key that redaction censors, so they are written without
  // redaction, as the access log is (src/http/context.ts says why); errors keep it.
  const events = logger.child({}, { redact: [] });
  const requestIdOf = (ctx: KoaContextWithOIDC) => {
    const requestId = ctx.res.getHeader('x-request-id');
    return typeof requestId === 'string' ? requestId : undefined;
  };
  provider.on('server_error', (ctx, err) => {
    logger.error(
      { requestId: requestIdOf(ctx), err: { name: err.name, message: err.message, stack: err.stack }, route: ctx.oidc?.route },
      'oauth server error',
    );
  });
  const refused = (event: string) => (ctx: KoaContextWithOIDC, err: errors.OIDCProviderError) => {
    const { error, description, detail } = describeRefusal(err);
    if (event === 'grant.error' && typeof detail === 'string') ctx.state[GRANT_ERROR_DETAIL] = detail;
    events.info(
      { requestId: requestIdOf(ctx), event, route: ctx.oidc?.route, error, description, detail, clientId: ctx.oidc?.client?.clientId },
      'oauth request refused',
    );
  };
  provider.on('authorization.error', refused('authorization.error'));
  provider.on('grant.error', refused('grant.error'));
  provider.on('revocation.error', refused('revocation.error'));
  provider.on('introspection.error', refused('introspection.error'));
  provider.on('jwks.error', refused('jwks.error'));
  provider.on('discovery.error', refused('discovery.error'));
  provider.on('grant.success', (ctx) => {
    events.info(
      {
        requestId: requestIdOf(ctx),
        event: 'grant.success',
        grantType: ctx.oidc?.params?.['grant_type'],
        clientId: ctx.oidc?.client?.clientId,
      },
      'tokens issued',
    );
  });
  // Errors that escape the provider's own handlers (Koa's 'error' event; the answer is a 500).
  // (Koa's own event, which the provider's typings do not list: reached through Koa's type.)
  const app: Koa = provider;
  app.on('error', (err: Error) => {
    logger.error({ err: { name: err.name, message: err.message, stack: err.stack } }, 'oauth unhandled error');
  });
  provider.on('grant.revoked', (ctx, grantId) => {
    events.warn({ requestId: requestIdOf(ctx), event: 'grant.revoked', grantId, clientId: ctx.oidc?.client?.clientId }, 'grant revoked');
  });
}

function describeRefusal(err: unknown): { error: unknown; description: unknown; detail: unknown } {
  if (!isRecord(err)) return { error: String(err), description: undefined, detail: undefined };
  return { error: err['error'], description: err['error_description'], detail: err['error_detail'] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
