import { holdsScope, type Principal } from '../auth/principal.js';
import type { ApiScope } from '../data/__generated__/enums.js';
import type { Database } from '../data/database.js';
import { createLoaders, type Loaders } from '../data/school/loaders.js';
import type { Logger } from '../logger.js';

/** Per-request GraphQL context: the caller, fresh DataLoaders, and the database. */
export interface GraphQLContext {
  readonly principal: Principal | undefined;
  readonly loaders: Loaders;
  readonly db: Database;
  readonly log: Logger;
  readonly timeZone: string;
  /** The clock "today" is read from (injected in tests). */
  readonly now: () => Date;
  /**
   * True for the REST endpoints' own documents (fixed shapes, validated parameters): the limits
   * of POST /graphql (src/graphql/limits.ts) do not apply to them.
   */
  readonly trustedDocument: boolean;
  /** The errors resolvers threw, as thrown (src/graphql/server.ts records them for REST). */
  readonly thrown: unknown[];
  /** Lets a measured document run: spends the caller's rate-limit points for its cost, or throws (429). */
  admit(cost: number): Promise<void>;
  /** Whether the caller holds `scope` (src/graphql/field-scopes.ts asks it at every depth). */
  holdsScope(scope: ApiScope): boolean;
}

export interface ContextInput {
  principal: Principal | undefined;
  db: Database;
  log: Logger;
  timeZone: string;
  now: () => Date;
  /** How a /graphql document pays for its cost; absent for the REST endpoints' trusted documents. */
  admit?: (cost: number) => Promise<void>;
}

/** Builds a context; loaders are per request so no cached record outlives its request. */
export function createContext(input: ContextInput): GraphQLContext {
  const { admit, ...rest } = input;
  return {
    ...rest,
    loaders: createLoaders(input.db),
    trustedDocument: admit === undefined,
    thrown: [],
    admit: admit ?? (async () => {}),
    holdsScope: (scope) => holdsScope(input.principal, scope),
  };
}
