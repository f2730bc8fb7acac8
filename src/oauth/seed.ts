import type { Config } from '../config/index.js';
import type { Database } from '../data/database.js';
import { AccountService } from './accounts.js';
import { ClientService } from './clients.js';

/**
 * Fixed demo credentials, so the README's walk-through works as written. They exist only where
 * `campus seed --demo` ran, which production refuses.
 */
export const DEMO_OAUTH = {
  password: 'campus-demo-password',
  clientId: 'demo-client',
  clientSecret: 'demo-client-secret',
  publicClientId: 'demo-public-client',
  redirectUri: 'http://127.0.0.1:3000/callback',
} as const;

/** The demo student whose email the demo account uses (the first student of the demo school). */
const DEMO_STUDENT_ID = 1;

/**
 * Creates (or resets) the demo account of the first demo student and the two demo clients:
 * a confidential one with a fixed secret and a public one that uses PKCE. Idempotent.
 */
export async function seedDemoOAuth(db: Database, config: Config): Promise<{ lines: string[] }> {
  const student = await db.models.students.findOne({ _id: DEMO_STUDENT_ID }).lean<{ email: string; name: string }>();
  if (!student) throw new Error('the demo school must be loaded before the demo OAuth data');
  const account = await new AccountService(db).ensure({ email: student.email, password: DEMO_OAUTH.password, role: 'USER' });
  const clients = new ClientService(db, config);
  await clients.put({
    id: DEMO_OAUTH.clientId,
    secret: DEMO_OAUTH.clientSecret,
    name: 'Campus demo app',
    redirectUris: [DEMO_OAUTH.redirectUri],
  });
  await clients.put({ id: DEMO_OAUTH.publicClientId, name: 'Campus demo app (public)', redirectUris: [DEMO_OAUTH.redirectUri], public: true });
  return {
    lines: [
      `Demo login account (student ${student.name}): email ${account.email}, password ${DEMO_OAUTH.password}`,
      `Demo OAuth client (confidential): client_id ${DEMO_OAUTH.clientId}, client_secret ${DEMO_OAUTH.clientSecret}, redirect_uri ${DEMO_OAUTH.redirectUri}`,
      `Demo OAuth client (public, PKCE S256): client_id ${DEMO_OAUTH.publicClientId}, redirect_uri ${DEMO_OAUTH.redirectUri}`,
    ],
  };
}
