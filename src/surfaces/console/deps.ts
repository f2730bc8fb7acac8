import type { Config } from '../../config/index.js';
import type { ApiKeyService } from '../../data/keys/store.js';
import type { Database } from '../../data/database.js';
import type { AccountService } from '../../oauth/accounts.js';
import type { AppService } from '../../oauth/apps.js';
import type { MfaService } from '../../oauth/second-factor.js';
import type { PasskeyService } from '../../oauth/passkeys.js';
import type { SelfService } from '../../oauth/self-service.js';
import type { SignIns } from '../../oauth/sign-ins.js';
import type { Web } from '../web/web.js';
import type { ProjectProposals } from '../../data/school/proposals.js';
import type { ManualDeps } from '../../events/delivery.js';
import type { ConsoleRates } from './rates.js';

/**
 * What the developer console's pages are given (src/surfaces/auth.ts builds it): the services
 * of accounts, keys and apps they call (docs/web.md: consoles call services for people and their
 * credentials, GraphQL for school data), the web layer (the session a page ends), the clock.
 */
export interface ConsoleDeps {
  readonly config: Config;
  readonly db: Database;
  readonly web: Web;
  readonly apiKeys: ApiKeyService;
  readonly clients: AppService;
  readonly accounts: AccountService;
  readonly selfService: SelfService;
  readonly mfa: MfaService;
  /** The person's passkeys (src/oauth/passkeys.ts). */
  readonly passkeys: PasskeyService;
  /** The person's login sessions at the authorization server ("My sign-ins"). */
  readonly signIns: SignIns;
  /** Webhooks: their store, and what sending a test event or a redelivery needs (src/events/delivery.ts). */
  readonly webhooks: ManualDeps;
  /** A student's project proposals (/console/projects). */
  readonly proposals: ProjectProposals;
  /** Actions counted per account: profile saves, webhook sends (./rates.ts). */
  readonly rates: ConsoleRates;
  readonly now: () => Date;
}
