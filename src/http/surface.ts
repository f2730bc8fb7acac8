import type { Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import type { Database } from '../data/database.js';
import type { Logger } from '../logger.js';
import type { AppMiddleware } from './context.js';

/** Everything the app is built from; main.ts opens these, tests build their own. */
export interface AppDeps {
  readonly config: Config;
  readonly db: Database;
  readonly logger: Logger;
  /** Shared rate-limit store; absent means in-memory budgets. */
  readonly redis?: Redis;
  /** The clock; tests inject one to check expiry without waiting. */
  readonly now?: () => Date;
}

/** One of the three surfaces (data API, authorization server, userinfo server). */
export interface Surface {
  /** Handles the surface's paths and passes every other request on. */
  readonly middleware: AppMiddleware;
  /** Extra facts for GET /v1/health (e.g. the last NEIS sync). */
  readonly health?: () => Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export type SurfaceName = 'data' | 'auth' | 'userinfo';
export const SURFACE_NAMES: readonly SurfaceName[] = ['data', 'auth', 'userinfo'];
