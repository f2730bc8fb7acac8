import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AppMiddleware } from '../../http/context.js';
import { ASSETS_PATH } from './shell.js';

const ASSETS_DIR = fileURLToPath(new URL('../../../web/assets/', import.meta.url));

interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

/** The files every page loads (web/assets/), by the address they are served at. */
const FILES: Readonly<Record<string, { file: string; type: string }>> = {
  [`${ASSETS_PATH}/web.css`]: { file: 'web.css', type: 'text/css; charset=utf-8' },
  [`${ASSETS_PATH}/web.js`]: { file: 'web.js', type: 'text/javascript; charset=utf-8' },
  '/favicon.ico': { file: 'favicon.ico', type: 'image/x-icon' },
};

/** GET /assets/web.css, /assets/web.js and /favicon.ico: read once at start, revalidated by ETag. */
export function serveAssets(): AppMiddleware {
  const assets = new Map<string, Asset>(
    Object.entries(FILES).map(([path, { file, type }]) => {
      const body = readFileSync(ASSETS_DIR + file);
      return [path, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` }];
    }),
  );
  return async (ctx, next) => {
    const asset = assets.get(ctx.path);
    if (!asset || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    ctx.set('ETag', asset.etag);
    ctx.set('Cache-Control', 'public, max-age=300');
    if (ctx.get('If-None-Match') === asset.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = asset.type;
    ctx.body = asset.body;
  };
}
