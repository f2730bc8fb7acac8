import type { Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import type { Database } from '../data/database.js';
import type { Logger } from '../logger.js';
import type { AppMiddleware } from '../http/context.js';
import type { AppMetrics } from '../http/metrics.js';
import type { PageRule } from '../auth/policy.js';
import type { StatusBoard } from '../data/operations/status.js';

/** Everything the app is built from; main.ts opens these, tests build their own. */
export interface AppDeps {
  readonly config: Config;
  readonly db: Database;
  readonly logger: Logger;
  /** Shared rate-limit store; absent means in-memory budgets. */
  readonly redis?: Redis;
  /** The clock; tests inject one to check expiry without waiting. */
  readonly now?: () => Date;
  /** The app's Prometheus metrics (src/http/metrics.ts); src/app.ts makes them. */
  readonly metrics?: AppMetrics;
  /** The status page's board (src/data/operations/status.ts); src/app.ts makes one unless given one. */
  readonly status?: StatusBoard;
}

/** What a surface is built from: the app's deps with the status board every surface shares (src/app.ts). */
export interface SurfaceDeps extends AppDeps {
  readonly status: StatusBoard;
}

/** One of the three surfaces (data API, authorization server, userinfo server). */
export interface Surface {
  /** Handles the surface's paths and passes every other request on. */
  readonly middleware: AppMiddleware;
  /**
   * Catches errors before the app's JSON boundary (src/http/errors.ts) turns them into the
   * envelope: the web layer's HTML error pages (src/surfaces/web/web.ts, `boundary`).
   */
  readonly boundary?: AppMiddleware;
  /** Every page route the surface mounted, with the rule that guards it (src/surfaces/web/web.ts). */
  readonly pages?: readonly PageRoute[];
  close(): Promise<void>;
}

/** A mounted page route and its rule (src/auth/policy.ts, PAGE_RULES). */
export interface PageRoute {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly rule: PageRule;
  /** It has an entry in its console's navigation. */
  readonly inNav: boolean;
}

export type SurfaceName = 'data' | 'auth' | 'userinfo';
export const SURFACE_NAMES: readonly SurfaceName[] = ['data', 'auth', 'userinfo'];
