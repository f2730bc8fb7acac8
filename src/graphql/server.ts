import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ApolloServer, HeaderMap } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { toAppError } from '../errors/index.js';
import type { AppContext, AppMiddleware } from '../http/context.js';
import type { Logger } from '../logger.js';
import type { GraphQLContext } from './context.js';
import { limitsPlugin } from './limits.js';
import { buildResolvers } from './resolvers/index.js';

const SCHEMA_DIR = fileURLToPath(new URL('../../schema/', import.meta.url));

/** The SDL of schema/*.graphql: the schema is written first, code follows it. */
export function loadTypeDefs(): string[] {
  return readdirSync(SCHEMA_DIR)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => readFileSync(SCHEMA_DIR + f, 'utf8'));
}

/** Builds and starts the Apollo server that both /graphql and the REST adapters execute on. */
export async function createGraphQLServer(logger: Logger): Promise<ApolloServer<GraphQLContext>> {
  const schema = makeExecutableSchema({ typeDefs: loadTypeDefs(), resolvers: buildResolvers() });
  const server = new ApolloServer<GraphQLContext>({
    schema,
    plugins: [limitsPlugin()],
    includeStacktraceInErrorResponses: false,
    // main.ts owns shutdown; Apollo's own handler would re-raise SIGTERM and kill the process.
    stopOnTerminationSignals: false,
    formatError: (formatted, error) => formatGraphQLError(formatted, error, logger),
  });
  await server.start();
  return server;
}

/**
 * The GraphQL rendering of AppError: `extensions.code` carries the same code the REST envelope's
 * status does; causes of server errors are logged, never sent.
 */
export function formatGraphQLError(formatted: GraphQLFormattedError, error: unknown, logger: Logger): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  // Errors raised by graphql-js or Apollo themselves (parse, validation, limits) are already safe.
  if (original instanceof GraphQLError) return formatted;
  const appError = toAppError(original);
  if (appError.status >= 500) logger.error({ err: appError.cause ?? appError, code: appError.code }, 'graphql resolver failed');
  return {
    message: appError.expose ? appError.message : 'Internal server error.',
    ...(formatted.path ? { path: formatted.path } : {}),
    extensions: { code: appError.code },
  };
}

/** Koa adapter for Apollo's HTTP handling (Apollo ships none for Koa 3). */
export function graphqlHttp(
  server: ApolloServer<GraphQLContext>,
  makeContext: (ctx: AppContext) => GraphQLContext,
): AppMiddleware {
  return async (ctx) => {
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(ctx.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const response = await server.executeHTTPGraphQLRequest({
      httpGraphQLRequest: {
        method: ctx.method.toUpperCase(),
        headers,
        search: ctx.querystring ? `?${ctx.querystring}` : '',
        body: (ctx.request as { body?: unknown }).body,
      },
      context: async () => makeContext(ctx),
    });
    for (const [name, value] of response.headers) ctx.set(name, value);
    ctx.status = response.status ?? 200;
    if (response.body.kind === 'complete') {
      ctx.body = response.body.string;
    } else {
      let text = '';
      for await (const chunk of response.body.asyncIterator) text += chunk;
      ctx.body = text;
    }
  };
}
