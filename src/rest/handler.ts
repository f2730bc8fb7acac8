import { todayIn } from '../calendar.js';
import type { Database } from '../data/database.js';
import { createContext } from '../graphql/context.js';
import { runOperation, type GraphQLServer } from '../graphql/server.js';
import type { AppContext, AppMiddleware } from '../http/context.js';
import { COMPRESS_MIN_BYTES, codedEtag, negotiateCoding } from '../http/compression.js';
import { successEnvelope } from '../http/envelope.js';
import type { Endpoint } from './endpoints.js';
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

/**
 * The one handler of every row of the endpoint table (src/rest/endpoints.ts): validate the
 * query, turn it into the operation's variables, run the operation in-process on the same
 * GraphQL server /graphql uses, and answer the envelope with its ETag, or 304 when the caller
 * holds it. An answer is cached per (endpoint, variables, data version): a repeated query over
 * unchanged data is served from memory, and so are its gzip and brotli forms once made.
 */
export function serveEndpoint(endpoint: Endpoint, deps: RestDeps): AppMiddleware {
  const parse = memoByQueryString((query) => parseQuery(endpoint.query, query));
  const today = () => todayIn(deps.timeZone, deps.now());
  return async (ctx) => {
    // Variables, not the raw query, identify an answer: "no date" means another day tomorrow.
    const variables = endpoint.variables(
      parse(ctx.querystring, () => ctx.query),
      today,
    );
    const key = `${endpoint.path} ${JSON.stringify(variables)}`;
    const { data: version } = deps.db.versions.peek() ?? (await deps.db.versions.current());
    let answer = deps.cache.get(key, version);
    if (!answer) {
      answer = await execute(ctx, deps, endpoint, variables);
      deps.cache.set(key, version, answer);
    }
    const coding = answer.body.length > COMPRESS_MIN_BYTES ? negotiateCoding(ctx) : undefined;
    const fresh = matchesIfNoneMatch(ctx.get('If-None-Match'), answer.etag);
    // A 304 carries no body: nothing is compressed for it.
    const body = coding && !fresh ? await deps.cache.encoded(key, version, answer, coding) : undefined;
    sendAnswer(ctx, answer, fresh, coding && { coding, etag: codedEtag(answer.etag, coding), ...(body ? { body } : {}) });
  };
}

/** The coded representation chosen for a request; its body is left out when a 304 needs none. */
interface Coded {
  readonly coding: string;
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
  // Koa sets Content-Length from the Buffer: the coded length when coded.
  ctx.body = coded?.body ?? answer.body;
  ctx.type = 'application/json; charset=utf-8';
}
