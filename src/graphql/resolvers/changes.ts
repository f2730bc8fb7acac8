import { GraphQLScalarType } from 'graphql';
import { belongsToOperators } from '../../auth/policy.js';
import { FEED_SCOPES } from '../../data/events/types.js';
import type { Resolvers } from '../__generated__/resolvers.js';
import { UndeclaredAccessError, type AccessRule } from '../access.js';
import { readChanges } from '../../data/events/feed.js';
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
      // The events as this key may see them (presentEvent, src/data/events/outbox.ts).
      const subscriber = { scopes, operator: ctx.principal?.kind === 'apiKey' && belongsToOperators(ctx.principal) };
      return readChanges(ctx.db, { after: args.after ?? null, limit: args.limit ?? null, subscriber });
    },
  },
};

/**
 * Stops the schema build when the scopes `Query.changes` declares (its @access in
 * schema/changes.graphql) are not the event-type table's (FEED_SCOPES, src/data/events/types.ts):
 * a type given a new scope, or a scope added to the schema alone, fails at start-up.
 */
export function checkFeedAccess(rules: ReadonlyMap<string, AccessRule>): void {
  const rule = rules.get('Query.changes');
  const declared = rule?.rule === 'DATA' ? rule.scopes : [];
  if (declared.join(',') !== FEED_SCOPES.join(',')) {
    throw new UndeclaredAccessError(
      `Query.changes: @access(rule: DATA, scopes: [${declared.join(', ')}]) must name the scopes of the event-type table (src/data/events/types.ts), in this order: ${FEED_SCOPES.join(', ')}.`,
    );
  }
}
