import { GraphQLScalarType } from 'graphql';
import { belongsToOperators } from '../../auth/policy.js';
import { FEED_SCOPES } from '../../data/event-types.js';
import type { Resolvers } from '../__generated__/resolvers.js';
import { readChanges } from '../../data/school/feed.js';
import { ForbiddenError } from '../../errors/index.js';

/** JSON: any JSON value, sent as it is (an event's data: REST shapes, counts). Output only. */
export const JSON_SCALAR = new GraphQLScalarType<unknown, unknown>({
  name: 'JSON',
  description: "Any JSON value: an event's data (the REST shapes of a record before and after a change, or a batch's counts).",
  serialize: (value) => value,
  parseValue: () => {
    throw new TypeError('JSON is an output type only');
  },
  parseLiteral: () => {
    throw new TypeError('JSON is an output type only');
  },
});

export const changeResolvers: Resolvers = {
  JSON: JSON_SCALAR,
  Query: {
    async changes(_parent, args, ctx) {
      const scopes = new Set(FEED_SCOPES.filter((scope) => ctx.holdsScope(scope)));
      if (scopes.size === 0) {
        throw new ForbiddenError(
          `The change feed needs an API key with any of ${FEED_SCOPES.join(', ')}; it shows the events those scopes allow.`,
        );
      }
      // The events as this key may see them (presentEvent, src/data/school/events.ts).
      const subscriber = { scopes, operator: ctx.principal?.kind === 'apiKey' && belongsToOperators(ctx.principal) };
      return readChanges(ctx.db, { after: args.after ?? null, limit: args.limit ?? null, subscriber });
    },
  },
};
