import type { Config } from '../config/index.js';
import type { AppMiddleware } from '../http/context.js';
import { API_SCOPES } from '../data/keys/store.js';
import { RESOURCE_SCOPES, userinfoAudience } from './constants.js';
import { dataApiResource } from './machine-tokens.js';

/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) of the two servers that take bearer tokens:
 * the data API (machine tokens, beside its API keys) and userinfo (a person's tokens). Each says
 * which authorization server issues its tokens and which scopes it reads, at
 * `/.well-known/oauth-protected-resource` followed by the resource's path, and names that address
 * in the `WWW-Authenticate` of its 401s, so a client that only knows the API finds where tokens
 * come from. The authorization server lists both as its `protected_resources`.
 */

/** The well-known path prefix of RFC 9728. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** A protected resource's metadata document (the members we publish). */
export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly scopes_supported: readonly string[];
  readonly bearer_methods_supported: readonly string[];
  readonly resource_name: string;
}

/** The path of a resource's metadata on its own host: the well-known prefix, then the resource's path (RFC 9728, 3.1). */
export function metadataPath(resource: string): string {
  const path = new URL(resource).pathname.replace(/\/$/, '');
  return `${PROTECTED_RESOURCE_PATH}${path}`;
}

/** The address of a resource's metadata. */
export function metadataUrl(resource: string): string {
  return new URL(metadataPath(resource), resource).href;
}

/** The two protected resources of the service: the data API, then userinfo. */
export function protectedResourceIds(config: Config): string[] {
  return [dataApiResource(config.urls.base), userinfoAudience(config.urls.userinfo)];
}

/** The data API's metadata: machine tokens in the Authorization header, with the data scopes. */
export function dataApiMetadata(config: Config): ProtectedResourceMetadata {
  return {
    resource: dataApiResource(config.urls.base),
    authorization_servers: [config.urls.auth],
    scopes_supported: [...API_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Campus Data Service data API',
  };
}

/** Userinfo's metadata: a person's access tokens in the Authorization header, with the login scopes that release data. */
export function userinfoMetadata(config: Config): ProtectedResourceMetadata {
  return {
    resource: userinfoAudience(config.urls.userinfo),
    authorization_servers: [config.urls.auth],
    scopes_supported: [...RESOURCE_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Campus Data Service userinfo',
  };
}

/**
 * GET of a metadata document: JSON any origin may read (a browser-based client discovers an API
 * as a server does), cacheable for an hour (it changes only with the configuration).
 */
export function metadataHandler(doc: ProtectedResourceMetadata): AppMiddleware {
  const body = JSON.stringify(doc);
  return async (ctx) => {
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = body;
  };
}
