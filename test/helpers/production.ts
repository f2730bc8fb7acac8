import type { Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { networkInterfaces } from 'node:os';
import type { Database } from '../../src/data/database.js';
import { createTestDatabase } from './database.js';
import { generateJwks } from './oauth.js';

/**
 * A production environment that passes the start-up checks: its addresses, a cookie key and a
 * mail server (production asks for one; nothing here sends mail). Tests add OAUTH_JWKS and their
 * own settings; MONGODB_URI is only named, the test's database is passed in.
 */
export const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  MONGODB_URI: 'mongodb://unused.invalid/campus',
  AUTH_URL: 'https://auth.school.test',
  USERINFO_URL: 'https://me.school.test',
  BASE_URL: 'https://api.school.test',
  OAUTH_COOKIE_KEYS: 'a-production-cookie-key-of-32-characters',
  SMTP_URL: 'smtp://127.0.0.1:2525',
};

/**
 * For a describe whose tests build production apps (buildTestApp with `{ db, env }`): a database
 * of its own and an OAuth key set, made before its tests, the database dropped after them. `env`
 * is the production environment with that key set and the test's own settings.
 */
export function productionSetUp(name: string): { readonly db: Database; env(own?: Record<string, string>): Record<string, string> } {
  let db: (Database & { drop(): Promise<void> }) | undefined;
  let jwks = '';
  before(async () => {
    db = await createTestDatabase(name);
    jwks = await generateJwks();
  });
  after(async () => {
    await db?.drop();
  });
  return {
    get db() {
      if (!db) throw new Error('the production set-up runs in before()');
      return db;
    },
    env: (own = {}) => ({ ...PRODUCTION_ENV, OAUTH_JWKS: jwks, ...own }),
  };
}

/** An IPv4 address of this machine that is not loopback (connections to it come from it). */
export function outsideAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
}

/** Listens on every interface, so that a client at an outside address can connect; the port. */
export async function listenEverywhere(server: Server | HttpsServer): Promise<number> {
  await new Promise<void>((done) => server.listen(0, '0.0.0.0', () => done()));
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}
