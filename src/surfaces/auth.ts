import compose from 'koa-compose';
import { AccountStore, rememberAllAccounts } from '../data/accounts/store.js';
import { ApiKeyService } from '../data/keys/store.js';
import { AccessAudit } from '../data/accounts/access-log.js';
import { OAuthStore } from '../data/accounts/oauth-records.js';
import { ProjectProposals } from '../data/school/proposals.js';
import { UpdateRequests } from '../data/school/update-requests.js';
import { createGraphQLServer } from '../graphql/server.js';
import type { Logger } from '../logger.js';
import { verifierFor } from '../oauth/access-token.js';
import { AccountService } from '../oauth/accounts.js';
import { AppService } from '../oauth/apps.js';
import { machineTokensFor } from '../oauth/machine-tokens.js';
import { OAUTH_PATHS } from '../oauth/constants.js';
import { EmailCodes } from '../oauth/email-codes.js';
import { loadOAuthKeys } from '../oauth/signing-keys.js';
import { createMailer } from '../oauth/mail.js';
import { buildProvider } from '../oauth/provider.js';
import { installProviderMiddleware } from '../oauth/provider-middleware.js';
import { SelfService } from '../oauth/self-service.js';
import { SignIns } from '../oauth/sign-ins.js';
import { LogoutNotices } from '../oauth/backchannel-logout.js';
import { guardUserCodes, UserCodeThrottle } from '../oauth/device-codes.js';
import { idTokenClaims } from '../oauth/userinfo.js';
import { LoginThrottle } from '../oauth/throttle.js';
import { accountApi } from './accounts/api.js';
import { outboxRoutes } from './accounts/outbox.js';
import { accountRoutes } from './accounts/pages.js';
import { adminRoutes } from './admin/index.js';
import { SchoolOperations } from './admin/deps.js';
import { consoleRoutes } from './console/index.js';
import { consoleRates } from './console/rates.js';
import type { Surface, SurfaceDeps } from './types.js';
import { serveAssets } from './web/assets.js';
import { devCallbackRoutes } from './web/dev-callback.js';
import { homeRoutes } from './web/home.js';
import { statusRoutes } from './web/status.js';
import { loginRoutes } from './web/login.js';
import { MfaService } from '../oauth/second-factor.js';
import { PasskeyService } from '../oauth/passkeys.js';
import { providerPages } from './web/provider-pages.js';
import { CookieSealer } from './web/seal.js';
import { registerWebClient, signInRoutes } from './web/signin.js';
import { Web } from './web/web.js';
import { WebhookStore, WEBHOOK_SECRET_PURPOSE } from '../data/events/webhooks.js';

/**
 * Expired records are also refused on every read; the sweep only reclaims their space. Over SQLite
 * FerretDB filters nothing but `_id` in its storage, so each sweep reads every stored record (used
 * refresh tokens and their claims stay 30 days): every ten minutes rather than every minute, that
 * is a tenth of the cost (docs/benchmarks.md, "The sweep of expired records").
 */
const SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * The authorization server and every page people see: oidc-provider (its own Koa app) answers
 * /v1/oauth/* and /.well-known/*; the web layer (src/surfaces/web/) answers the front door, the
 * login and consent pages, the consoles' sign-in, the sign-up and reset pages, the developer
 * console and the admin console, each a route table mounted here with the dependencies it is
 * given (docs/web.md).
 */
export async function createAuthSurface(deps: SurfaceDeps): Promise<Surface> {
  const { config, logger, db } = deps;
  const now = deps.now ?? (() => new Date());
  const keys = await loadOAuthKeys(config, db);
  const store = new OAuthStore(db, now);
  const notices = new LogoutNotices(db, now);
  const accounts = new AccountService(db);
  const clients = new AppService(db, { isProduction: config.isProduction, policy: config.policy });
  const web = new Web({ config, db, cookieKeys: keys.cookieKeys, now });
  const dataUpdates = new UpdateRequests(db, new AccountStore(db), now);
  const providerPageSet = providerPages(web, accounts);
  const provider = buildProvider({
    config,
    logger,
    keys,
    store,
    accounts,
    clients,
    pages: providerPageSet,
    dataUpdates,
    idTokenClaims: (accountId, scopes) => idTokenClaims(db, accountId, scopes),
    notices,
  });
  const verifier = verifierFor(config, keys, store, now);
  const machine = { tokens: machineTokensFor(config, keys, clients, db, now), revokeAll: (id: string) => clients.revokeMachineTokens(id) };
  installProviderMiddleware(provider, { verifier, store, logger, machine });
  // Codes typed at /device that find nothing are limited per address and everywhere (src/oauth/device-codes.ts).
  guardUserCodes(provider, new UserCodeThrottle(deps.redis), (ctx, err) => providerPageSet.deviceCode(ctx, undefined, err));
  await registerWebClient(clients, config);
  // The accounts in memory before the first sign-in (src/data/accounts/store.ts); a failure only means they are read as used.
  await rememberAllAccounts(db).catch((err: unknown) =>
    logger.warn(
      { event: 'accounts.remember_failed', reason: err instanceof Error ? err.message : String(err) },
      'accounts not remembered at start',
    ),
  );

  const mailer = createMailer(config, logger, now);
  const codes = new EmailCodes(db, keys.cookieKeys, now, deps.redis);
  const selfService = new SelfService({ db, config, logger, mailer, codes, redis: deps.redis });
  const mfa = new MfaService(db, keys.cookieKeys, now, deps.redis);
  const passkeys = new PasskeyService(db, config, now);
  const apiKeys = new ApiKeyService(db, config.policy);
  const accountStore = new AccountStore(db);
  const graphql = await createGraphQLServer(logger);
  const throttle = new LoginThrottle(config.oauth.login, deps.redis);

  // Webhooks' secrets are sealed under the cookie keys, as `campus serve`'s delivery opens them (src/main.ts).
  const webhooks = {
    db,
    store: new WebhookStore(db, new CookieSealer(keys.cookieKeys, WEBHOOK_SECRET_PURPOSE), config.policy, now),
    policy: { production: config.isProduction, allowPrivate: config.webhooks.allowPrivate },
    now,
  };
  const proposals = new ProjectProposals(db, { timeZone: config.schoolTimeZone, now });
  const pages = compose([
    serveAssets(),
    web.mount(homeRoutes(web), web),
    // The status page: the data surface's GET /v1/status in words (it may live at BASE_URL).
    web.mount(statusRoutes(web), {
      board: deps.status,
      config,
      jsonUrl: `${config.urls.base === config.urls.auth ? '' : config.urls.base}/v1/status`,
    }),
    // A redirect address to register while developing (docs/accounts.md, "The first hour"); absent in production.
    ...(config.isProduction ? [] : [web.mount(devCallbackRoutes(web), web)]),
    web.mount(loginRoutes, {
      provider,
      db,
      dataUpdates,
      timeZone: config.schoolTimeZone,
      accounts,
      clients,
      throttle,
      selfService,
      countAttempt: deps.metrics?.loginAttempt ?? (() => undefined),
      mfa,
      passkeys,
      policy: config.policy,
      sealer: new CookieSealer(keys.cookieKeys, 'second-factor'),
      secure: web.secure,
      now,
      helpContact: config.helpContact,
    }),
    web.mount(signInRoutes(web), {
      web,
      config,
      verifier,
      accounts: accountStore,
      grants: store,
      notices,
      sealer: new CookieSealer(keys.cookieKeys, 'signin'),
    }),
    accountApi(selfService),
    web.mount(accountRoutes(web), { service: selfService, domain: config.schoolEmailDomain }),
    web.mount(outboxRoutes(web), { outbox: mailer.outbox, timeZone: config.schoolTimeZone }),
    web.mount(consoleRoutes(web), {
      config,
      db,
      web,
      apiKeys,
      clients,
      accounts,
      selfService,
      mfa,
      passkeys,
      signIns: new SignIns(store, notices),
      webhooks,
      proposals,
      rates: consoleRates(deps.redis),
      now,
    }),
    web.mount(adminRoutes(web), {
      config,
      school: new SchoolOperations(graphql, db, config, now),
      accounts,
      accountStore,
      apiKeys,
      clients,
      audit: new AccessAudit(db),
      updateRequests: dataUpdates,
      mailer,
      selfService,
      proposals,
      passkeys,
      status: deps.status,
      now,
    }),
  ]);
  const handle = provider.callback();
  const sweeper = startSweeper(logger, async () => {
    await store.sweepExpired();
    await codes.sweepExpired();
    await passkeys.sweepExpired();
  });
  return {
    middleware: async (ctx, next) => {
      if (!isProviderPath(ctx.path)) return pages(ctx, next);
      // The provider writes the response itself; the host only logs the outcome.
      ctx.respond = false;
      await handle(ctx.req, ctx.res);
    },
    boundary: web.boundary(),
    pages: web.mounted,
    close: async () => {
      clearInterval(sweeper);
      await mailer.close();
      await graphql.stop();
    },
  };
}

function isProviderPath(path: string): boolean {
  if (path.startsWith(`${OAUTH_PATHS.interaction}/`)) return false;
  // Device sign-in's pages (/device, and /device/<uid> after the login) are the provider's routes, rendered by the web layer.
  if (path === OAUTH_PATHS.device || path.startsWith(`${OAUTH_PATHS.device}/`)) return true;
  return path.startsWith('/v1/oauth/') || path === OAUTH_PATHS.discovery || path === OAUTH_PATHS.authorizationServerMetadata;
}

function startSweeper(logger: Logger, sweep: () => Promise<void>): NodeJS.Timeout {
  const timer = setInterval(() => {
    sweep().catch((err: Error) => logger.warn({ err: { message: err.message } }, 'could not sweep expired OAuth records and email codes'));
  }, SWEEP_INTERVAL_MS);
  timer.unref();
  return timer;
}
