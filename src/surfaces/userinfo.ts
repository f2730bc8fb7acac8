import { OAuthStore } from '../data/oauth-store.js';
import { verifierFor } from '../oauth/access-token.js';
import { loadOAuthKeys } from '../oauth/keys.js';
import { userinfoRoutes } from '../oauth/userinfo.js';
import type { AppDeps, Surface } from './types.js';

/** The userinfo server; it shares only the database (keys, grants, accounts) with the auth server. */
export async function createUserinfoSurface(deps: AppDeps): Promise<Surface> {
  const now = deps.now ?? (() => new Date());
  const keys = await loadOAuthKeys(deps.config, deps.db);
  const store = new OAuthStore(deps.db, now);
  return {
    middleware: userinfoRoutes({ db: deps.db, verifier: verifierFor(deps.config, keys, store, now), realm: deps.config.urls.userinfo }),
    close: async () => {},
  };
}
