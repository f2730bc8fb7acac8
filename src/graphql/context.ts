import type { Database } from '../data/database.js';
import { createLoaders, type Loaders } from '../data/loaders.js';
import type { ApiScope } from '../data/api-keys.js';
import { assertScope, type ApiKeyPrincipal } from '../http/api-key.js';
import type { Logger } from '../logger.js';

/** Per-request GraphQL context: the caller, fresh DataLoaders, and the database. */
export interface GraphQLContext {
  readonly principal: ApiKeyPrincipal | undefined;
  readonly loaders: Loaders;
  readonly db: Database;
  readonly log: Logger;
  readonly timeZone: string;
  /** The clock "today" is read from (injected in tests). */
  readonly now: () => Date;
  /** Throws 401/403 unless the caller holds `scope`. */
  requireScope(scope: ApiScope): void;
}

export interface ContextInput {
  principal: ApiKeyPrincipal | undefined;
  db: Database;
  log: Logger;
  timeZone: string;
  now: () => Date;
}

/** Builds a context; loaders are per request so no cached record outlives its request. */
export function createContext(input: ContextInput): GraphQLContext {
  return {
    ...input,
    loaders: createLoaders(input.db.models),
    requireScope: (scope) => assertScope(input.principal, scope),
  };
}
