import type { AccessAudit } from '../../data/accounts/access-log.js';
import type { AppService } from '../../oauth/apps.js';
import type { Config } from '../../config/index.js';
import type { AccountStore } from '../../data/accounts/store.js';
import type { ApiKeyService } from '../../data/keys/store.js';
import type { Database } from '../../data/database.js';
import { createContext } from '../../graphql/context.js';
import { runOperation, type GraphQLServer } from '../../graphql/server.js';
import type { AccountService } from '../../oauth/accounts.js';
import type { Mailer } from '../../oauth/mail.js';
import type { UpdateRequests } from '../../data/school/update-requests.js';
import type { SelfService } from '../../oauth/self-service.js';
import type { ProjectProposals } from '../../data/school/proposals.js';
import type { StatusBoard } from '../../data/operations/status.js';
import type { PageRequest } from '../web/routes.js';
import type { PasskeyService } from '../../oauth/passkeys.js';

/**
 * The school data of the admin console goes through GraphQL: the typed operations of ./operations
 * (graphql-codegen) run in-process as the signed-in account, on the same schema, resolvers and
 * one write path (validation, audit, data version) that every GraphQL client uses (docs/web.md).
 */
export class SchoolOperations {
  constructor(
    private readonly server: GraphQLServer,
    private readonly db: Database,
    private readonly config: Config,
    private readonly now: () => Date,
  ) {}

  /** Runs one typed operation as the request's signed-in account. */
  run<TData, TVariables extends Record<string, unknown>>(req: PageRequest, query: string, variables: TVariables): Promise<TData> {
    const context = createContext({
      principal: req.account,
      db: this.db,
      log: req.ctx.state.log,
      timeZone: this.config.schoolTimeZone,
      now: this.now,
    });
    return runOperation<TData>(this.server, { query, variables }, context);
  }
}

/**
 * What the admin console's pages are given (src/surfaces/auth.ts builds it): GraphQL for school
 * data; the services of accounts and keys for people and their credentials; the mailer of the
 * teachers' approvals; the clock.
 */
export interface AdminDeps {
  readonly config: Config;
  readonly school: SchoolOperations;
  readonly accounts: AccountService;
  readonly accountStore: AccountStore;
  readonly apiKeys: ApiKeyService;
  readonly clients: AppService;
  /** The access log: every privilege change and export of personal data (docs/decisions.md, "The access log"). */
  readonly audit: AccessAudit;
  /** Data updates asked of students at sign-in. */
  readonly updateRequests: UpdateRequests;
  readonly mailer: Mailer;
  /** The self-service reset's codes and mail, for the resets staff send. */
  readonly selfService: SelfService;
  /** Students' project proposals, reviewed in /admin/proposals. */
  readonly proposals: ProjectProposals;
  /** A person's passkeys, which staff remove (src/oauth/passkeys.ts). */
  readonly passkeys: PasskeyService;
  /** The status page's board: its incidents and maintenance, posted in /admin/status. */
  readonly status: StatusBoard;
  readonly now: () => Date;
}
