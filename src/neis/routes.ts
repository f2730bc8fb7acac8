import type Router from '@koa/router';
import type { ApiScope } from '../data/api-keys.js';
import type { AppMiddleware, RequestState } from '../http/context.js';
import type { HealthContributor } from '../http/health.js';
import type { AppDeps } from '../http/surface.js';
import type { RestDeps } from '../rest/v1/execute.js';

/** The NEIS part of the data surface: its routes, its health section and its background sync. */
export interface NeisRoutes {
  register(router: Router<RequestState>, guard: (scope: ApiScope) => AppMiddleware[], rest: RestDeps): void;
  health?: HealthContributor;
  close(): Promise<void>;
}

/** Placeholder until the NEIS issue lands: no routes, no sync. */
export function createNeisRoutes(_deps: AppDeps): NeisRoutes {
  return { register: () => {}, close: async () => {} };
}
