import { OAuthStore } from '../data/oauth-store.js';
import type { AppDeps, Surface } from '../http/surface.js';
import { verifierFor } from './access-token.js';
import { loadOAuthKeys } from './keys.js';
import { userinfoRoutes } from './userinfo.js';

/**
 * The authorization server (oidc-provider with our pages). Loaded on demand so that commands
 * which never serve it (`campus accounts ...`) do not load oidc-provider at all.
 */
export async function createAuthSurface(deps: AppDeps): Promise<Surface> {
  const { buildAuthSurface } = await import('./auth-server.js');
  return buildAuthSurface(deps);
}

/** The userinfo server; it shares only the database (keys, grants, accounts) with the auth server. */
export async function createUserinfoSurface(deps: AppDeps): Promise<Surface> {
  const keys = await loadOAuthKeys(deps.config, deps.db);
  const store = new OAuthStore(deps.db, deps.now ?? (() => new Date()));
  return {
    middleware: userinfoRoutes({ db: deps.db, verifier: verifierFor(deps, keys, store), realm: deps.config.urls.userinfo }),
    close: async () => {},
  };
}
