import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { Kind, parse, visit, type DocumentNode, type GraphQLSchema } from 'graphql';
import { DEFAULT_PAGE, DEFAULT_PAGE_SIZE } from '../limits.js';
import { guardRootFields, rootFieldRules } from './access.js';
import { checkFeedAccess } from './resolvers/changes.js';
import { guardFieldScopes } from './field-scopes.js';
import { resolvers } from './resolvers/index.js';

const SCHEMA_DIR = fileURLToPath(new URL('../../schema/', import.meta.url));

/**
 * The type definitions of schema/*.graphql (the schema is written first, code follows it), with
 * the paging defaults of src/limits.ts.
 */
export function loadTypeDefs(): DocumentNode[] {
  return readdirSync(SCHEMA_DIR)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => withPagingDefaults(readFileSync(SCHEMA_DIR + f, 'utf8')));
}

/**
 * The executable schema: the type definitions, every resolver, the declared rule of every root
 * field (./access.ts: a root field without one stops the build; the change feed's must name the
 * event-type table's scopes: ./resolvers/changes.ts checkFeedAccess), and the scope rule of every
 * record's fields.
 */
export function buildSchema(): GraphQLSchema {
  const schema = guardFieldScopes(guardRootFields(makeExecutableSchema({ typeDefs: loadTypeDefs(), resolvers })));
  checkFeedAccess(rootFieldRules(schema));
  return schema;
}

/**
 * Gives the `page` and `size` arguments of the list fields (students, clubs, projects) their
 * defaults from src/limits.ts, so the limits module stays the one place they are written while
 * introspection, execution and the cost estimate all see them.
 */
export function withPagingDefaults(sdl: string): DocumentNode {
  return visit(parse(sdl), {
    FieldDefinition(field) {
      const pageSize = DEFAULT_PAGE_SIZE[field.name.value as keyof typeof DEFAULT_PAGE_SIZE];
      if (pageSize === undefined) return undefined;
      const defaults: Record<string, number> = { page: DEFAULT_PAGE, size: pageSize };
      return {
        ...field,
        arguments: field.arguments?.map((arg) => {
          const value = defaults[arg.name.value];
          return value === undefined ? arg : { ...arg, defaultValue: { kind: Kind.INT, value: String(value) } };
        }),
      };
    },
  });
}
