import type { AppDeps, Surface } from '../http/surface.js';

/**
 * The authorization server (oidc-provider mounted under /v1/oauth and /.well-known).
 * Placeholder until the OAuth issue lands: it handles nothing and passes every request on.
 */
export async function createAuthSurface(_deps: AppDeps): Promise<Surface> {
  return { middleware: (_ctx, next) => next(), close: async () => {} };
}

/** The userinfo server (GET/POST /userinfo). Placeholder until the OAuth issue lands. */
export async function createUserinfoSurface(_deps: AppDeps): Promise<Surface> {
  return { middleware: (_ctx, next) => next(), close: async () => {} };
}
