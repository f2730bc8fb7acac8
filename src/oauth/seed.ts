import type { Config } from '../config/index.js';
import { hashApiKey } from '../data/keys/store.js';
import type { Database } from '../data/database.js';
import { AccountStore } from '../data/accounts/store.js';
import { DEMO_ACCOUNT_STUDENT_ID, DEMO_API_KEY, demoAccountEmail } from '../data/school/demo.js';
import { AccountService } from './accounts.js';
import { AppService } from './apps.js';
import { verifyPassword } from './secrets.js';
import { ConflictError } from '../errors/index.js';

/**
 * Fixed demo credentials, so the walk-through of docs/oauth.md works as written. They are published,
 * so they exist only where `campus seed --demo` ran: production refuses to seed them and to
 * start while they exist, and `campus seed --remove-demo` removes them.
 */
export const DEMO_OAUTH = {
  password: 'campus-demo-password',
  clientId: 'demo-client',
  clientSecret: 'demo-client-secret',
  publicClientId: 'demo-public-client',
  redirectUri: 'http://127.0.0.1:3000/callback',
  /** Where the example app (examples/login-with-school, on port 3000) sends the browser back after a logout. */
  postLogoutRedirectUri: 'http://127.0.0.1:3000/',
} as const;

const DEMO_CLIENT_IDS = [DEMO_OAUTH.clientId, DEMO_OAUTH.publicClientId] as const;

/**
 * Creates (or resets) the demo account of the first demo student and the two demo clients:
 * a confidential one with a fixed secret and a public one, both requiring PKCE. Idempotent.
 */
export async function seedDemoOAuth(db: Database, config: Config): Promise<{ lines: string[] }> {
  const student = await db.models.students.findOne({ _id: DEMO_ACCOUNT_STUDENT_ID }).lean<{ email: string; name: string }>();
  if (!student) throw new Error('the demo school must be loaded before the demo OAuth data');
  const account = await new AccountService(db).ensure({ email: student.email, password: DEMO_OAUTH.password, role: 'USER' });
  const clients = new AppService(db, config);
  await clients.put({
    id: DEMO_OAUTH.clientId,
    secret: DEMO_OAUTH.clientSecret,
    name: 'Campus demo app',
    redirectUris: [DEMO_OAUTH.redirectUri],
    postLogoutRedirectUris: [DEMO_OAUTH.postLogoutRedirectUri],
  });
  await clients.put({
    id: DEMO_OAUTH.publicClientId,
    name: 'Campus demo app (public)',
    redirectUris: [DEMO_OAUTH.redirectUri],
    postLogoutRedirectUris: [DEMO_OAUTH.postLogoutRedirectUri],
    public: true,
  });
  return {
    lines: [
      `Demo login account (student ${student.name}): email ${account.email}, password ${DEMO_OAUTH.password}`,
      `Demo OAuth client (confidential, PKCE S256): client_id ${DEMO_OAUTH.clientId}, client_secret ${DEMO_OAUTH.clientSecret}, redirect_uri ${DEMO_OAUTH.redirectUri}`,
      `Demo OAuth client (public, PKCE S256): client_id ${DEMO_OAUTH.publicClientId}, redirect_uri ${DEMO_OAUTH.redirectUri}`,
    ],
  };
}

/** The published demo credentials found in a database. */
export interface DemoCredentials {
  /** Whether the demo API key (in any state) is stored. */
  apiKey: boolean;
  clientIds: string[];
  /** The demo account's email when it exists with the published password. */
  accountEmail: string | null;
}

/** What `campus seed --remove-demo` removed. */
export interface RemovedDemoCredentials {
  apiKeys: number;
  clientIds: string[];
  accountEmails: string[];
  /** Grants, codes, tokens and sessions revoked with the clients and the account. */
  revoked: number;
}

/**
 * Looks for the published demo credentials: the demo API key, the demo clients, and the demo
 * account, i.e. the demo student's email still holding the published password (an account a
 * real person registered with that email and their own password is not a demo credential).
 */
export async function findDemoCredentials(db: Database): Promise<DemoCredentials> {
  const [apiKeys, clients, account] = await Promise.all([
    db.models.apiKeys.countDocuments({ hash: hashApiKey(DEMO_API_KEY) }),
    db.models.oauthClients.find({ _id: { $in: [...DEMO_CLIENT_IDS] } }, { _id: 1 }).lean<{ _id: string }[]>(),
    new AccountStore(db).findByEmail(demoAccountEmail()),
  ]);
  const isDemoAccount = account !== null && (await verifyPassword(account.passwordHash, DEMO_OAUTH.password));
  return {
    apiKey: apiKeys > 0,
    clientIds: clients.map((c) => c._id).sort(),
    accountEmail: isDemoAccount ? account.email : null,
  };
}

export function hasDemoCredentials(found: DemoCredentials): boolean {
  return found.apiKey || found.clientIds.length > 0 || found.accountEmail !== null;
}

/** One line naming what was found (for the start-up refusal). */
export function describeDemoCredentials(found: DemoCredentials): string {
  return [
    found.apiKey ? `the demo API key ${DEMO_API_KEY.slice(0, 8)}…` : undefined,
    found.clientIds.length > 0 ? `the demo client${found.clientIds.length > 1 ? 's' : ''} ${found.clientIds.join(', ')}` : undefined,
    found.accountEmail ? `the demo account ${found.accountEmail}` : undefined,
  ]
    .filter(Boolean)
    .join(', ');
}

/**
 * Removes exactly the demo credentials (the key, the clients, the account) and every grant,
 * code, token and session issued to or for them; school data and everything else stay.
 */
export async function removeDemoCredentials(db: Database, config: Config): Promise<RemovedDemoCredentials> {
  const found = await findDemoCredentials(db);
  const apiKeys = (await db.models.apiKeys.deleteMany({ hash: hashApiKey(DEMO_API_KEY) })).deletedCount;
  const clients = new AppService(db, config);
  let revoked = 0;
  for (const id of found.clientIds) revoked += (await clients.delete(id)).revoked;
  const accountEmails: string[] = [];
  if (found.accountEmail) {
    const deleted = await new AccountService(db).delete(found.accountEmail);
    accountEmails.push(deleted.account.email);
    revoked += deleted.revoked;
  }
  return { apiKeys, clientIds: found.clientIds, accountEmails, revoked };
}

/** `campus serve` in production while demo credentials exist. */
export class DemoCredentialsError extends ConflictError {}

/** Production refuses to start with published credentials in its database. */
export async function refuseDemoCredentials(db: Database): Promise<void> {
  const found = await findDemoCredentials(db);
  if (!hasDemoCredentials(found)) return;
  throw new DemoCredentialsError(
    `Refusing to start in production while demo credentials exist (${describeDemoCredentials(found)}): remove them with \`campus seed --remove-demo\`.`,
  );
}
