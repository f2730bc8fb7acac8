import { OAuthStore } from '../data/oauth-store.js';
import type { Logger } from '../logger.js';
import { verifierFor } from '../oauth/access-token.js';
import { AccountService } from '../oauth/accounts.js';
import { ClientService } from '../oauth/clients.js';
import { OAUTH_PATHS } from '../oauth/constants.js';
import { interactionRoutes } from '../oauth/interactions.js';
import { loadOAuthKeys } from '../oauth/keys.js';
import { buildProvider } from '../oauth/provider.js';
import { installProviderMiddleware } from '../oauth/provider-middleware.js';
import { LoginThrottle } from '../oauth/throttle.js';
import type { AppDeps, Surface } from './types.js';

/** Expired records are also refused on every read; the sweep only reclaims their space. */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * The authorization server: oidc-provider (its own Koa app) answers /v1/oauth/* and
 * /.well-known/*, our pages answer /v1/oauth/interaction/*; every other path passes on.
 * src/app.ts loads this module only when the process serves it (oidc-provider is heavy).
 */
export async function createAuthSurface(deps: AppDeps): Promise<Surface> {
  const { config, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const keys = await loadOAuthKeys(config, deps.db);
  const store = new OAuthStore(deps.db, now);
  const accounts = new AccountService(deps.db);
  const clients = new ClientService(deps.db, { isProduction: config.isProduction });
  const provider = buildProvider({ config, logger, keys, store, accounts, clients });
  installProviderMiddleware(provider, { verifier: verifierFor(config, keys, store, now), store, logger });
  const pages = interactionRoutes({
    provider,
    accounts,
    throttle: new LoginThrottle(
      { accountFromAddress: config.oauth.loginLimitAccount, address: config.oauth.loginLimitIp, delay: config.oauth.loginDelay },
      deps.redis,
    ),
    cookieKeys: keys.cookieKeys,
    authOrigin: new URL(config.urls.auth).origin,
  });
  const handle = provider.callback();
  const sweeper = startSweeper(store, logger);
  return {
    middleware: async (ctx, next) => {
      if (ctx.path.startsWith(`${OAUTH_PATHS.interaction}/`)) return pages(ctx, next);
      if (!isProviderPath(ctx.path)) return next();
      // The provider writes the response itself; the host only logs the outcome.
      ctx.respond = false;
      await handle(ctx.req, ctx.res);
    },
    close: async () => clearInterval(sweeper),
  };
}

function isProviderPath(path: string): boolean {
  return path.startsWith('/v1/oauth/') || path === OAUTH_PATHS.discovery || path === OAUTH_PATHS.authorizationServerMetadata;
}

function startSweeper(store: OAuthStore, logger: Logger): NodeJS.Timeout {
  const timer = setInterval(() => {
    store.sweepExpired().catch((err: Error) => logger.warn({ err: { message: err.message } }, 'could not sweep expired OAuth records'));
  }, SWEEP_INTERVAL_MS);
  timer.unref();
  return timer;
}
