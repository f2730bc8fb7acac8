import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { toAppError } from '../data/platform/errors.js';
import { AppError, BadRequestError, InternalError, isLoadShedding } from '../errors/index.js';
import type { Logger } from '../logger.js';
import type { GraphQLContext } from './context.js';
import { MAX_TOKENS, limitsPlugin } from './limits.js';
import { buildSchema } from './schema.js';

export type GraphQLServer = ApolloServer<GraphQLContext>;

/**
 * Builds and starts the Apollo server that both /graphql and the REST endpoints execute on. The
 * data surface passes the schema it also prints at GET /graphql/schema.graphql, so the SDL served
 * is the very schema executed.
 */
export async function createGraphQLServer(logger: Logger, schema: GraphQLSchema = buildSchema()): Promise<GraphQLServer> {
  const server = new ApolloServer<GraphQLContext>({
    schema,
    // Cache-control hints are unused (REST sets its own Cache-Control, /graphql always no-store);
    // Apollo's plugin for them would wrap every resolver of every request.
    plugins: [limitsPlugin(), recordThrown(), ApolloServerPluginCacheControlDisabled()],
    // The parser stops at MAX_TOKENS: a huge document is refused (400) before it is parsed, and
    // graphql's validation (whose check of overlapping fields grows with the square of their
    // number) never sees more than that.
    parseOptions: { maxTokens: MAX_TOKENS },
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
  // A request stopped by its budget is answered (and logged) by the HTTP layer.
  if (appError.status >= 500 && !isLoadShedding(appError))
    logger.error({ err: appError.cause ?? appError, code: appError.code }, 'graphql resolver failed');
  return {
    message: appError.safeMessage,
    ...(formatted.path ? { path: formatted.path } : {}),
    extensions: { code: appError.code },
  };
}

/** Keeps what resolvers threw, as thrown, in the request's context (runOperation rethrows it). */
function recordThrown(): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didEncounterErrors({ errors, contextValue }) {
          for (const error of errors) contextValue.thrown.push(unwrapResolverError(error));
        },
      };
    },
  };
}

/**
 * Executes one of our own documents in-process (the REST endpoints) and returns its data. A
 * failure is rethrown as the AppError a resolver threw, whatever its code, so each surface
 * renders it as it would any other; graphql's own refusals (variables) are 400s.
 */
export async function runOperation<TData>(
  server: GraphQLServer,
  request: { query: string; variables: Record<string, unknown> },
  contextValue: GraphQLContext,
): Promise<TData> {
  const response = await server.executeOperation(request, { contextValue });
  if (response.body.kind !== 'single') throw new InternalError(new Error('unexpected incremental GraphQL response'));
  const { data, errors } = response.body.singleResult;
  const [first] = errors ?? [];
  if (first) {
    const thrown = contextValue.thrown.find((e) => !(e instanceof GraphQLError));
    if (thrown !== undefined) throw thrown instanceof AppError ? thrown : toAppError(thrown);
    throw new BadRequestError(first.message);
  }
  if (!data) throw new InternalError(new Error('GraphQL returned no data'));
  return data as TData;
}
