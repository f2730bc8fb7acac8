import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './__generated__/api.js';
import type { TokenSource } from './oauth.js';

export type { components, operations, paths };
export * from './oauth.js';

/**
 * The typed client of the Campus Data Service's REST data API. Every path, parameter, envelope
 * and error below comes from the service's own OpenAPI document (GET /v1/openapi.json), turned
 * into types by openapi-typescript (`npm run codegen` at the repository's root; `npm run
 * codegen:check` fails when they are stale), and the calls are openapi-fetch's.
 *
 *   const campus = createClient({ baseUrl: 'http://127.0.0.1:8080', apiKey });
 *   const { data, error, response } = await campus.GET('/v1/neis/meals', { params: { query: { date: '2026-03-02' } } });
 *
 * `data` is the `{status, code, message, data}` envelope of a 200; `error` the envelope of a 4xx
 * or 5xx; a 304 (an `If-None-Match` naming the current ETag) has neither: look at
 * `response.status`. A 429 is retried after its `Retry-After` (see `retry`).
 */
export type CampusClient = Client<paths>;

export interface CreateClientOptions {
  /** The data API's address, e.g. `http://127.0.0.1:8080` (BASE_URL of the service). */
  readonly baseUrl: string;
  /**
   * An API key (a UUID) holding the scopes of the endpoints called; sent as `X-API-KEY`. Leave it
   * out to call only the endpoints that need none (`/v1/public/projects`, `/v1/health`, `/v1/status`); the others
   * then answer 401.
   */
  readonly apiKey?: string | undefined;
  /**
   * An app's machine tokens (`clientCredentials`), in place of an API key: each request carries
   * `Authorization: Bearer` with a token valid now, and a 401 is asked again once with a new token
   * (the app's tokens were revoked).
   */
  readonly tokens?: TokenSource | undefined;
  /**
   * Retrying 429 (Too Many Requests): wait what `Retry-After` says, at most `maxWaitSeconds` per
   * wait and `attempts` times, then hand the 429 back. Default: 2 attempts of at most 30 s;
   * `false` never retries.
   */
  readonly retry?: { readonly attempts?: number; readonly maxWaitSeconds?: number } | false;
  /** Another fetch (tests, proxies); the global one by default. */
  readonly fetch?: typeof globalThis.fetch;
  /** Headers added to every request (e.g. `Accept-Language`). */
  readonly headers?: Record<string, string>;
}

const DEFAULT_RETRY = { attempts: 2, maxWaitSeconds: 30 };

export function createClient(options: CreateClientOptions): CampusClient {
  // An empty key is a mistake (an unset variable), not a choice to call without one.
  if (options.apiKey === '') throw new TypeError('createClient: apiKey is empty (an API key from the developer console, or leave it out)');
  if (options.apiKey !== undefined && options.tokens !== undefined)
    throw new TypeError('createClient: give an apiKey or machine tokens, not both (the service takes one credential per request)');
  const retry = options.retry === false ? { attempts: 0, maxWaitSeconds: 0 } : { ...DEFAULT_RETRY, ...options.retry };
  const retrying = retryingFetch(options.fetch ?? globalThis.fetch, retry);
  const clientOptions: ClientOptions = {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: options.apiKey === undefined ? { ...options.headers } : { ...options.headers, 'X-API-KEY': options.apiKey },
    fetch: options.tokens ? bearerFetch(retrying, options.tokens) : retrying,
  };
  return createFetchClient<paths>(clientOptions);
}

/** Seconds to wait from a Retry-After header (delay-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * A fetch that waits out a 429's Retry-After and asks again. Only GETs reach it (the data API
 * has no other method), so asking again is safe. A wait longer than `maxWaitSeconds`, or a 429
 * without Retry-After, is not waited for: the caller gets the 429 (its envelope says when).
 */
function retryingFetch(
  fetchImpl: typeof globalThis.fetch,
  retry: { attempts: number; maxWaitSeconds: number },
): (input: Request) => Promise<Response> {
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const response = await fetchImpl(request.clone());
      if (response.status !== 429 || attempt >= retry.attempts) return response;
      const wait = retryAfterSeconds(response.headers.get('Retry-After'));
      if (wait === undefined || wait > retry.maxWaitSeconds) return response;
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    }
  };
}

/**
 * A fetch that sends the token source's current token as `Authorization: Bearer`; a 401 (the
 * app's tokens were revoked, or its secret changed) is asked again once with a new token.
 */
function bearerFetch(fetchImpl: (input: Request) => Promise<Response>, tokens: TokenSource): (input: Request) => Promise<Response> {
  const withToken = async (request: Request) => {
    const signed = new Request(request);
    signed.headers.set('Authorization', `Bearer ${await tokens.token()}`);
    return fetchImpl(signed);
  };
  return async (request) => {
    const response = await withToken(request.clone());
    if (response.status !== 401) return response;
    await response.body?.cancel();
    tokens.renew();
    return withToken(request);
  };
}
