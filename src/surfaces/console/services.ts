import type { Config } from '../../config/index.js';
import { ApiKeyService } from '../../data/api-keys.js';
import type { Database } from '../../data/database.js';
import { AccountService } from '../../oauth/accounts.js';
import { ClientService } from '../../oauth/clients.js';
import type { Mailer } from '../../oauth/mail.js';
import type { SelfService } from '../../oauth/self-service.js';
import type { WebKit } from '../web/index.js';
import type { Flashes } from './flash.js';
import { CookieSealer, readSession, type WebSession } from '../web/session.js';
import type { AppContext } from '../../http/context.js';

/**
 * What the developer console and the admin console's account and key pages share, built once
 * by src/surfaces/consoles.ts: the account services, the mailer (one outbox), the flashes.
 */
export class ConsoleServices {
  readonly apiKeys: ApiKeyService;
  readonly clients: ClientService;
  readonly accounts: AccountService;
  private readonly sessions: CookieSealer;

  constructor(
    readonly db: Database,
    readonly config: Config,
    readonly selfService: SelfService,
    readonly mailer: Mailer,
    readonly flashes: Flashes,
    cookieKeys: readonly string[],
    readonly now: () => Date,
  ) {
    this.apiKeys = new ApiKeyService(db);
    this.clients = new ClientService(db, { isProduction: config.isProduction });
    this.accounts = new AccountService(db);
    this.sessions = new CookieSealer(cookieKeys, 'session');
  }

  /** The console session of the request (its grant is this sign-in's; src/surfaces/web/session.ts). */
  session(ctx: AppContext): WebSession | undefined {
    return readSession(ctx, this.sessions, this.now().getTime());
  }
}

/**
 * The services of each web kit. The admin console's routers are composed by
 * src/surfaces/admin/index.ts with (deps, kit) only, so they find theirs through the kit.
 */
const registry = new WeakMap<WebKit, ConsoleServices>();

export function registerConsoleServices(kit: WebKit, services: ConsoleServices): void {
  registry.set(kit, services);
}

export function consoleServices(kit: WebKit): ConsoleServices {
  const services = registry.get(kit);
  if (!services) throw new Error('the console services are not registered (src/surfaces/consoles.ts builds them first)');
  return services;
}
