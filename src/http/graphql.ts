import { HeaderMap } from '@apollo/server';
import type { Gate } from '../data/platform/budget.js';
import { AppError } from '../errors/index.js';
import type { GraphQLContext } from '../graphql/context.js';
import type { GraphQLServer } from '../graphql/server.js';
import type { AppContext, AppMiddleware } from './context.js';

export interface GraphQLHttpOptions {
  /** Builds the request's context; `admit` is how its document pays for its measured cost. */
  context(ctx: AppContext, admit: (cost: number) => Promise<void>): GraphQLContext;
  /** Spends the caller's rate-limit points for a document of `cost`; throws 429 when they run out. */
  admit(ctx: AppContext, cost: number): Promise<void>;
  /** Bounds the documents executing at once in this process (others wait in its line). */
  gate: Gate;
}

/**
 * Koa adapter for Apollo's HTTP handling (Apollo ships none for Koa 3). A document runs only
 * once it holds a slot of the gate (waiting while the request's time budget lasts) and keeps
 * it until Apollo is done with it, even when the request was answered 503 meanwhile. A refusal
 * of the caller (429 from `admit`) is answered as the data API's envelope, like the 401 and 429
 * of the middleware in front; refusals of the document itself stay GraphQL errors.
 */
export function graphqlHttp(server: GraphQLServer, options: GraphQLHttpOptions): AppMiddleware {
  return async (ctx) => {
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(ctx.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    let refusal: AppError | undefined;
    const admit = async (cost: number) => {
      try {
        await options.admit(ctx, cost);
      } catch (err) {
        if (err instanceof AppError) refusal = err;
        throw err;
      }
    };
    const release = await options.gate.enter(ctx.state.budget);
    let response: Awaited<ReturnType<GraphQLServer['executeHTTPGraphQLRequest']>>;
    let text: string;
    try {
      response = await server.executeHTTPGraphQLRequest({
        httpGraphQLRequest: {
          method: ctx.method.toUpperCase(),
          headers,
          search: ctx.querystring ? `?${ctx.querystring}` : '',
          body: (ctx.request as { body?: unknown }).body,
        },
        context: async () => options.context(ctx, admit),
      });
      text = await bodyText(response.body);
    } finally {
      release();
    }
    if (refusal) throw refusal;
    // An abandoned request was answered already (503); its late result is dropped here.
    ctx.state.budget?.assertActive();
    for (const [name, value] of response.headers) ctx.set(name, value);
    // Answers hold personal data: never stored by a cache.
    ctx.set('Cache-Control', 'no-store');
    ctx.status = response.status ?? 200;
    ctx.body = text;
  };
}

async function bodyText(body: Awaited<ReturnType<GraphQLServer['executeHTTPGraphQLRequest']>>['body']): Promise<string> {
  if (body.kind === 'complete') return body.string;
  let text = '';
  for await (const chunk of body.asyncIterator) text += chunk;
  return text;
}
