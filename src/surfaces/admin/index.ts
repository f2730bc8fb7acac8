import compose from 'koa-compose';
import type { AppMiddleware } from '../../http/context.js';
import type { AppDeps } from '../types.js';
import type { WebKit } from '../web/index.js';
import { adminAccountPages } from './accounts.js';
import { adminKeyPages } from './keys.js';
import { schoolPages } from './school.js';

/**
 * The admin console at /admin (ADMIN and ROOT accounts only): school data (students, clubs,
 * projects, import and export, the school year, the audit log) and the accounts and API keys of
 * every user. Each part is a router of its own; adminShell (./nav.ts) is their common frame.
 */
export function createAdminConsole(deps: AppDeps, kit: WebKit): AppMiddleware {
  return compose([schoolPages(deps, kit), adminAccountPages(deps, kit), adminKeyPages(deps, kit)]);
}
