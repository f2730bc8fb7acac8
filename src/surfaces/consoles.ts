import compose from 'koa-compose';
import { EmailCodes } from '../oauth/email-codes.js';
import { loadOAuthKeys } from '../oauth/keys.js';
import { createMailer } from '../oauth/mail.js';
import { SelfService } from '../oauth/self-service.js';
import { accountApi } from './accounts/api.js';
import { AnonymousForms } from './accounts/csrf.js';
import { outboxPage } from './accounts/outbox.js';
import { accountPages } from './accounts/pages.js';
import { createAdminConsole } from './admin/index.js';
import { Flashes } from './console/flash.js';
import { createDeveloperConsole } from './console/index.js';
import { ConsoleServices, registerConsoleServices } from './console/services.js';
import type { AppDeps, Surface } from './types.js';
import { createWebKit } from './web/index.js';

/** Expired email codes are refused on use anyway; the sweep only reclaims their space. */
const CODE_SWEEP_INTERVAL_MS = 60_000;

/**
 * Our own pages and the self-service accounts, served with the authorization server (the same
 * origin as the login pages): the sign-in of the consoles (src/surfaces/web/), the sign-up and
 * password-reset JSON endpoints and pages (src/surfaces/accounts/), the development outbox, the
 * admin console (/admin) and the developer console (/console).
 */
export async function createConsolesSurface(deps: AppDeps): Promise<Surface> {
  const { config, db, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const kit = await createWebKit(deps);
  const keys = await loadOAuthKeys(config, db);
  const secure = config.urls.auth.startsWith('https://');
  const mailer = createMailer(config, logger, now);
  const codes = new EmailCodes(db, keys.cookieKeys, now, deps.redis);
  const selfService = new SelfService({ db, config, logger, mailer, codes, redis: deps.redis });
  const flashes = new Flashes(keys.cookieKeys, secure, now);
  registerConsoleServices(kit, new ConsoleServices(db, config, selfService, mailer, flashes, keys.cookieKeys, now));
  const forms = new AnonymousForms(keys.cookieKeys, secure, new URL(config.urls.auth).origin);
  const admin = createAdminConsole(deps, kit);
  const developer = createDeveloperConsole(deps, kit);
  const sweeper = setInterval(() => {
    codes.sweepExpired().catch((err: Error) => logger.warn({ err: { message: err.message } }, 'could not sweep expired email codes'));
  }, CODE_SWEEP_INTERVAL_MS);
  sweeper.unref();
  return {
    middleware: compose([
      kit.middleware,
      accountApi(selfService),
      accountPages({ config, kit, service: selfService, forms }),
      outboxPage(mailer.outbox, kit, config.schoolTimeZone),
      admin,
      developer,
    ]),
    close: async () => {
      clearInterval(sweeper);
      await mailer.close();
      await kit.graphql.stop();
    },
  };
}
