import { AppStore } from '../data/apps/store.js';
import type { Database } from '../data/database.js';
import { OAuthStore, type OAuthRecord } from '../data/accounts/oauth-records.js';
import { LogoutNotices } from './backchannel-logout.js';

/** An app that holds a grant to an account: what the "connected apps" page lists. */
export interface ConnectedApp {
  readonly clientId: string;
  /** The app's name (its id when the app was deleted meanwhile). */
  readonly name: string;
  readonly serviceName: string | null;
  /** Every scope granted to the app, across its grants. */
  readonly scopes: readonly string[];
  /** When the first of its grants was given. */
  readonly grantedAt: Date | null;
  /** When tokens were last issued to it (a sign-in or a refresh), if ever. */
  readonly lastUsedAt: Date | null;
}

/**
 * The apps that hold grants to an account, one entry per app (a person who signed in to an app
 * from two browsers gave it two grants). `hidden` clients (our own consoles) are left out.
 */
export async function connectedApps(db: Database, accountId: number, hidden: readonly string[]): Promise<ConnectedApp[]> {
  const store = new OAuthStore(db);
  const grants = (await store.listOf('Grant', { accountId: String(accountId) })).filter((g) => !hidden.includes(clientOf(g)));
  const lastIssued = await store.lastIssued(grants.map((g) => g.id));
  const clients = new Map((await new AppStore(db).findByIds([...new Set(grants.map(clientOf))])).map((c) => [c._id, c]));
  const byClient = new Map<string, { scopes: Set<string>; granted: number[]; used: number[] }>();
  for (const grant of grants) {
    const entry = byClient.get(clientOf(grant)) ?? { scopes: new Set<string>(), granted: [], used: [] };
    for (const scope of scopesOf(grant)) entry.scopes.add(scope);
    if (typeof grant.payload['iat'] === 'number') entry.granted.push(grant.payload['iat']);
    const used = lastIssued.get(grant.id);
    if (used !== undefined) entry.used.push(used);
    byClient.set(clientOf(grant), entry);
  }
  return [...byClient].map(([clientId, entry]) => {
    const client = clients.get(clientId);
    return {
      clientId,
      name: client?.name ?? clientId,
      serviceName: client?.serviceName ?? null,
      scopes: [...entry.scopes].sort(),
      grantedAt: entry.granted.length > 0 ? new Date(Math.min(...entry.granted) * 1000) : null,
      lastUsedAt: entry.used.length > 0 ? new Date(Math.max(...entry.used) * 1000) : null,
    };
  });
}

/**
 * Revokes every grant the account gave the app, with their tokens: userinfo refuses its access
 * tokens at once (it checks the grant) and the token endpoint its refresh tokens (they are gone).
 * Returns how many grants were revoked (0: the app held none).
 */
export async function disconnectApp(db: Database, accountId: number, clientId: string): Promise<number> {
  const store = new OAuthStore(db);
  const grants = (await store.listOf('Grant', { accountId: String(accountId) })).filter((g) => clientOf(g) === clientId);
  // An app with a back-channel logout address is told (src/oauth/backchannel-logout.ts).
  if (grants.length > 0) await new LogoutNotices(db).accessEnded(accountId, 'app_revoked', [clientId]);
  for (const grant of grants) await store.revokeGrant(grant.id);
  return grants.length;
}

function clientOf(grant: OAuthRecord): string {
  return typeof grant.payload['clientId'] === 'string' ? grant.payload['clientId'] : '';
}

/** The scopes of a grant: its OpenID scopes and those of every resource (oidc-provider's Grant payload). */
function scopesOf(grant: OAuthRecord): string[] {
  const scopes: string[] = [];
  const openid = grant.payload['openid'];
  if (isRecord(openid) && typeof openid['scope'] === 'string') scopes.push(...openid['scope'].split(' '));
  const resources = grant.payload['resources'];
  if (isRecord(resources)) for (const value of Object.values(resources)) if (typeof value === 'string') scopes.push(...value.split(' '));
  return scopes.filter(Boolean);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
