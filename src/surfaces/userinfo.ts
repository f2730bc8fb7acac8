import { OAuthStore } from '../data/accounts/oauth-records.js';
import { verifierFor } from '../oauth/access-token.js';
import { loadOAuthKeys } from '../oauth/signing-keys.js';
import { userinfoRoutes } from '../oauth/userinfo.js';
import { AppService } from '../oauth/apps.js';
import { RememberedLookups } from '../data/platform/remembered.js';
import { cacheTarget } from '../data/platform/versions.js';
import { metadataHandler, metadataPath, metadataUrl, userinfoMetadata } from '../oauth/protected-resources.js';
import { userinfoAudience } from '../oauth/constants.js';

/** Apps whose state userinfo remembers per process. */
const MAX_REMEMBERED_CLIENTS = 10000;
import type { AppDeps, Surface } from './types.js';

/** The userinfo server; it shares only the database (keys, grants, accounts) with the auth server. */
export async function createUserinfoSurface(deps: AppDeps): Promise<Surface> {
  const now = deps.now ?? (() => new Date());
  const keys = await loadOAuthKeys(deps.config, deps.db);
  const store = new OAuthStore(deps.db, now);
  // A disabled app's tokens stop here at once: whether an app is active is remembered until a
  // change names the app, as disabling it does (src/data/accounts/store.ts, AppStore).
  const clients = new AppService(deps.db, { isProduction: deps.config.isProduction });
  const active = new RememberedLookups(
    deps.db.versions,
    'oauth',
    MAX_REMEMBERED_CLIENTS,
    async (id: string) => clients.isActive(id),
    (id) => [cacheTarget.client(id)],
  );
  const resource = userinfoAudience(deps.config.urls.userinfo);
  const path = metadataPath(resource);
  const metadata = metadataHandler(userinfoMetadata(deps.config));
  const routes = userinfoRoutes({
    db: deps.db,
    verifier: verifierFor(deps.config, keys, store, now),
    realm: deps.config.urls.userinfo,
    resourceMetadata: metadataUrl(resource),
    clientActive: async (id) => (await active.get(id)) === true,
  });
  return {
    // Where userinfo's tokens come from (RFC 9728); its 401s name it.
    middleware: (ctx, next) => (ctx.method === 'GET' && ctx.path === path ? metadata(ctx, next) : routes(ctx, next)),
    close: async () => {},
  };
}
