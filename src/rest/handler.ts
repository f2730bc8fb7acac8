import { belongsToOperators } from '../auth/policy.js';
import { holdsScope } from '../auth/principal.js';
import { todayIn } from '../calendar.js';
import type { ApiScope } from '../data/__generated__/enums.js';
import type { Database } from '../data/database.js';
import { BadRequestError } from '../errors/index.js';
import { createContext } from '../graphql/context.js';
import { runOperation, type GraphQLServer } from '../graphql/server.js';
import type { AppContext, AppMiddleware } from '../http/context.js';
import { COMPRESS_MIN_BYTES, codedEtag, negotiateCoding, type ContentCoding } from '../http/compression.js';
import { successEnvelope } from '../http/envelope.js';
import { endpointScopes, isPublic, pathParameters, pathPattern, type Endpoint } from './endpoints.js';
import { memoByQueryString, parseQuery } from './params.js';
import { etagOf, matchesIfNoneMatch, type CachedAnswer, type ResponseCache } from './response-cache.js';

/** What the endpoint handler needs: the GraphQL server it executes on, the answer cache, the clock. */
export interface RestDeps {
  readonly graphql: GraphQLServer;
  readonly db: Database;
  readonly cache: ResponseCache;
  readonly timeZone: string;
  readonly now: () => Date;
}

/** The two steps of an endpoint's route (src/surfaces/data.ts): the early 304, and the handler. */
export interface EndpointSteps {
  /** Answers 304 when the caller holds the answer in memory now; else goes on. Before the rate limit. */
  readonly notModified: AppMiddleware;
  /** Answers the envelope with its ETag, or 304 when the caller holds it. */
  readonly serve: AppMiddleware;
}

/** What a request asks for: its answer's cache key, the data version, and the answer if in memory. */
interface Lookup {
  readonly variables: Record<string, unknown>;
  readonly key: string;
  readonly version: number;
  readonly answer: CachedAnswer | undefined;
}

/**
 * The one handler of every row of the endpoint table (src/rest/endpoints.ts): validate the
 * query, turn it into the operation's variables, run the operation in-process on the same
 * GraphQL server /graphql uses, and answer the envelope with its ETag, or 304 when the caller
 * holds it. An answer is cached per (endpoint, variables, data version): a repeated query over
 * unchanged data is served from memory, and so are its gzip and brotli forms once made.
 *
 * A conditional request answered 304 does not spend the rate limit (docs/decisions.md, as
 * GitHub's API does): `notModified` runs before the rate limit and, once the key holds the
 * endpoint's scope and the answer in memory carries the ETag the request names, answers 304 at
 * once. Anything else (no If-None-Match, no such answer in memory, a malformed query, a missing
 * scope) goes the usual way, where the rate limit gives back the point of a 304 computed anew.
 */
export function endpointSteps(endpoint: Endpoint, deps: RestDeps): EndpointSteps {
  const parse = memoByQueryString((query) => parseQuery(endpoint.query, query));
  const pathValues = pathParameterReader(endpoint);
  const variablesOf = variablesReader(endpoint, () => todayIn(deps.timeZone, deps.now()));
  const scopes = endpointScopes(endpoint);
  /** A lookup made by notModified, for the handler of the same request. */
  const looked = new WeakMap<AppContext, Lookup>();
  const lookup = async (ctx: AppContext): Promise<Lookup> => {
    // Variables, not the raw query, identify an answer: "no date" means another day tomorrow.
    // A path parameter (`/v1/public/projects/{id}`) is validated with the query, as one of its parameters.
    const params = pathValues(ctx.path);
    const { variables, key: asked } = variablesOf(
      params ? parse(`${ctx.path}?${ctx.querystring}`, () => ({ ...ctx.query, ...params })) : parse(ctx.querystring, () => ctx.query),
    );
    const stamp = deps.db.versions.peek() ?? (await deps.db.versions.current());
    const byScopes = scopes.length > 1 ? `${asked} ${subscriberKey(ctx, scopes)}` : asked;
    // The feed's answers move with its announcements too, which leave the data version as it is.
    const key = endpoint.followsFeed ? `${byScopes} feed:${stamp.feed}` : byScopes;
    const version = stamp.data;
    return { variables, key, version, answer: deps.cache.get(key, version) };
  };
  /** The 304 of a conditional request whose answer the caller holds; else on to the rate limit. */
  const answerHeld = async (ctx: AppContext, next: () => Promise<unknown>, ifNoneMatch: string): Promise<unknown> => {
    let found: Lookup;
    try {
      found = await lookup(ctx);
    } catch (err) {
      // Refused the usual way, after the rate limit (src/rest/openapi.ts lists its headers).
      if (err instanceof BadRequestError) return next();
      throw err;
    }
    const { answer } = found;
    if (answer && matchesIfNoneMatch(ifNoneMatch, answer.etag)) return sendAnswer(ctx, answer, true, codedFor(ctx, answer));
    looked.set(ctx, found);
    return next();
  };
  return {
    notModified(ctx, next) {
      const ifNoneMatch = ctx.get('If-None-Match');
      // A request that is not conditional passes straight on, without an async frame of its own
      // (docs/benchmarks.md, "A warm answer's fixed cost").
      if (!ifNoneMatch || !(isPublic(endpoint) || scopes.some((scope) => holdsScope(ctx.state.apiKey, scope)))) return next();
      return answerHeld(ctx, next, ifNoneMatch);
    },
    async serve(ctx) {
      const { variables, key, version, answer: cached } = looked.get(ctx) ?? (await lookup(ctx));
      let answer = cached;
      if (!answer) {
        answer = await execute(ctx, deps, endpoint, variables);
        deps.cache.set(key, version, answer);
      }
      const fresh = matchesIfNoneMatch(ctx.get('If-None-Match'), answer.etag);
      const coded = codedFor(ctx, answer);
      // A 304 carries no body: nothing is compressed for it.
      const body = coded && !fresh ? await deps.cache.encoded(key, version, answer, coded.coding) : undefined;
      sendAnswer(ctx, answer, fresh, coded && { ...coded, ...(body ? { body } : {}) });
    },
  };
}

/**
 * What an answer that depends on the key is cached per (an endpoint taking several scopes: the
 * change feed): the scopes it holds, and whether it is an operator's, who is shown which account
 * made a change (presentEvent, src/data/events/outbox.ts).
 */
function subscriberKey(ctx: AppContext, scopes: readonly ApiScope[]): string {
  const held = scopes.filter((scope) => holdsScope(ctx.state.apiKey, scope)).join(',');
  const key = ctx.state.apiKey;
  return key && belongsToOperators(key) ? `${held} operator` : held;
}

/** An endpoint's operation variables for a validated query, and the answer's cache key they make. */
interface Asked {
  readonly variables: Record<string, unknown>;
  /** `<path> <variables as JSON>`: variables, not the raw query, identify an answer. */
  readonly key: string;
}

/**
 * Turns a validated query (an object the query memo keeps: src/rest/params.ts) into its
 * variables and key, remembered per query for a row whose variables do not read the day (the
 * day enters only where a date is left out, and changes at midnight), so a repeated query
 * builds and serializes nothing again (docs/benchmarks.md, "A warm answer's fixed cost").
 */
function variablesReader(endpoint: Endpoint, today: () => string): (query: object) => Asked {
  const known = new WeakMap<object, Asked>();
  return (query) => {
    const hit = known.get(query);
    if (hit) return hit;
    let daily = false;
    const variables = endpoint.variables(query, () => {
      daily = true;
      return today();
    });
    const asked = { variables, key: `${endpoint.path} ${JSON.stringify(variables)}` };
    if (!daily) known.set(query, asked);
    return asked;
  };
}

/**
 * Reads the path parameters of a row whose path has any (`{id}`), as strings like the query's;
 * undefined for a row without (the router matched the path already).
 */
function pathParameterReader(endpoint: Endpoint): (path: string) => Record<string, string> | undefined {
  const names = pathParameters(endpoint);
  if (names.length === 0) return () => undefined;
  const pattern = pathPattern(endpoint.path);
  return (path) => {
    const values = pattern.exec(path)?.slice(1) ?? [];
    return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(values[i] ?? '')]));
  };
}

/** The coding the request gets for `answer` and that coding's ETag (none for a small answer). */
function codedFor(ctx: AppContext, answer: CachedAnswer): Coded | undefined {
  const coding = answer.body.length > COMPRESS_MIN_BYTES ? negotiateCoding(ctx) : undefined;
  return coding && { coding, etag: codedEtag(answer.etag, coding) };
}

/** The coded representation chosen for a request; its body is left out when a 304 needs none. */
interface Coded {
  readonly coding: ContentCoding;
  readonly etag: string;
  readonly body?: Buffer;
}

async function execute(ctx: AppContext, deps: RestDeps, endpoint: Endpoint, variables: Record<string, unknown>): Promise<CachedAnswer> {
  const contextValue = createContext({
    principal: ctx.state.apiKey,
    db: deps.db,
    log: ctx.state.log,
    timeZone: deps.timeZone,
    now: deps.now,
  });
  const result = await runOperation(deps.graphql, { query: endpoint.operation, variables }, contextValue);
  const body = Buffer.from(JSON.stringify(successEnvelope(endpoint.data(result))));
  return { body, etag: etagOf(body) };
}

/**
 * Writes an answer with its ETag, or 304 when the request's If-None-Match already names it (any
 * coding of it). The ETag is the representation's own: strong, and different per coding, since
 * the bytes differ (src/http/compression.ts). `Vary: Accept-Encoding` goes on every answer, 304s
 * and uncoded ones included: a cache (the client's; answers are `private`) must not reuse a
 * stored gzip answer for a request that did not ask for gzip, nor an identity one for one that did.
 */
function sendAnswer(ctx: AppContext, answer: CachedAnswer, fresh: boolean, coded: Coded | undefined): void {
  // An abandoned request was answered already (503); its late result is dropped here.
  ctx.state.budget?.assertActive();
  ctx.set('ETag', coded?.etag ?? answer.etag);
  ctx.set('Cache-Control', 'private, no-cache');
  ctx.vary('Accept-Encoding');
  if (fresh) {
    ctx.status = 304;
    return;
  }
  ctx.status = 200;
  if (coded?.body) ctx.set('Content-Encoding', coded.coding);
  // The type first: a Buffer body set without one makes Koa look up and set a binary type first.
  ctx.type = 'application/json; charset=utf-8';
  // Koa sets Content-Length from the Buffer: the coded length when coded.
  ctx.body = coded?.body ?? answer.body;
}
