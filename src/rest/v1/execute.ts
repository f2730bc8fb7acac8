import type { ApolloServer } from '@apollo/server';
import type { GraphQLFormattedError } from 'graphql';
import type { Database } from '../../data/database.js';
import {
  AppError,
  BadRequestError,
  ForbiddenError,
  InternalError,
  ServiceUnavailableError,
  UnauthorizedError,
} from '../../errors/index.js';
import { createContext, type GraphQLContext } from '../../graphql/context.js';
import type { AppContext } from '../../http/context.js';
import { successEnvelope } from '../../http/envelope.js';
import { ResponseCache, etagOf, matchesIfNoneMatch, type CachedAnswer } from './response-cache.js';

/** What every REST adapter needs: the GraphQL server it executes on and the answer cache. */
export interface RestDeps {
  readonly graphql: ApolloServer<GraphQLContext>;
  readonly db: Database;
  readonly cache: ResponseCache;
  readonly timeZone: string;
  readonly now: () => Date;
}

export interface RestOperation<TData, TPayload> {
  /** Identifies the answer: resource plus the canonical, validated parameters. */
  readonly cacheKey: string;
  readonly query: string;
  readonly variables: Record<string, unknown>;
  /** Picks the envelope's `data` from the GraphQL result. */
  readonly pick: (data: TData) => TPayload;
}

/**
 * Runs a REST request as an in-process GraphQL operation (the same server /graphql uses),
 * wraps the result in the envelope, and answers with ETag, Cache-Control and 304 when the
 * caller already holds it.
 */
export async function respondWithOperation<TData, TPayload>(
  ctx: AppContext,
  deps: RestDeps,
  operation: RestOperation<TData, TPayload>,
): Promise<void> {
  const { data: version } = deps.db.versions.peek() ?? (await deps.db.versions.current());
  let answer = deps.cache.get(operation.cacheKey, version);
  if (!answer) {
    answer = await execute(ctx, deps, operation);
    deps.cache.set(operation.cacheKey, version, answer);
  }
  sendAnswer(ctx, answer);
}

async function execute<TData, TPayload>(
  ctx: AppContext,
  deps: RestDeps,
  operation: RestOperation<TData, TPayload>,
): Promise<CachedAnswer> {
  const contextValue = createContext({ principal: ctx.state.apiKey, db: deps.db, log: ctx.state.log, timeZone: deps.timeZone, now: deps.now });
  const response = await deps.graphql.executeOperation({ query: operation.query, variables: operation.variables }, { contextValue });
  if (response.body.kind !== 'single') throw new InternalError(new Error('unexpected incremental GraphQL response'));
  const { data, errors } = response.body.singleResult;
  const first = errors?.[0];
  if (first) throw fromGraphQLError(first);
  if (!data) throw new InternalError(new Error('GraphQL returned no data'));
  const body = Buffer.from(JSON.stringify(successEnvelope(operation.pick(data as TData))));
  return { body, etag: etagOf(body) };
}

/** Writes a cached answer, or 304 when If-None-Match already names it. */
export function sendAnswer(ctx: AppContext, answer: CachedAnswer): void {
  ctx.set('ETag', answer.etag);
  ctx.set('Cache-Control', 'private, no-cache');
  if (matchesIfNoneMatch(ctx.get('If-None-Match'), answer.etag)) {
    ctx.status = 304;
    return;
  }
  ctx.status = 200;
  ctx.body = answer.body;
  ctx.type = 'application/json; charset=utf-8';
}

/** The inverse of the GraphQL rendering: extensions.code back to the AppError it came from. */
function fromGraphQLError(error: GraphQLFormattedError): AppError {
  const code = error.extensions?.['code'];
  switch (code) {
    case 'BAD_REQUEST':
    case 'BAD_USER_INPUT':
      return new BadRequestError(error.message);
    case 'UNAUTHORIZED':
      return new UnauthorizedError(error.message);
    case 'FORBIDDEN':
      return new ForbiddenError(error.message);
    case 'SERVICE_UNAVAILABLE':
      return new ServiceUnavailableError(error.message);
    default:
      return new InternalError(new Error(`GraphQL error ${String(code)}: ${error.message}`));
  }
}
