import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppMiddleware } from '../../http/context.js';
import { ASSETS_PATH, PASSKEY_SCRIPTS } from './shell.js';

const ASSETS_DIR = fileURLToPath(new URL('../../../web/assets/', import.meta.url));

interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

/**
 * @simplewebauthn/browser's own bundle (it defines `SimpleWebAuthnBrowser`), served by us like our
 * own script: the pages load nothing from another origin. Found beside the module the package exports.
 */
const WEBAUTHN_BUNDLE = join(dirname(createRequire(import.meta.url).resolve('@simplewebauthn/browser')), '../dist/bundle/index.umd.min.js');

/** The files the pages load (web/assets/, and the WebAuthn bundle), by the address they are served at. */
const FILES: Readonly<Record<string, { file: string; type: string }>> = {
  [`${ASSETS_PATH}/web.css`]: { file: ASSETS_DIR + 'web.css', type: 'text/css; charset=utf-8' },
  [`${ASSETS_PATH}/web.js`]: { file: ASSETS_DIR + 'web.js', type: 'text/javascript; charset=utf-8' },
  [PASSKEY_SCRIPTS.page]: { file: ASSETS_DIR + 'passkeys.js', type: 'text/javascript; charset=utf-8' },
  [PASSKEY_SCRIPTS.webauthn]: { file: WEBAUTHN_BUNDLE, type: 'text/javascript; charset=utf-8' },
  '/favicon.ico': { file: ASSETS_DIR + 'favicon.ico', type: 'image/x-icon' },
};

/** GET /assets/web.css, /assets/web.js, the passkey scripts and /favicon.ico: read once at start, revalidated by ETag. */
export function serveAssets(): AppMiddleware {
  const assets = new Map<string, Asset>(
    Object.entries(FILES).map(([path, { file, type }]) => {
      const body = readFileSync(file);
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
