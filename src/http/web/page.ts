import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AppContext, AppMiddleware } from '../context.js';
import { html, type Html } from './html.js';
import type { Lang } from './lang.js';

/**
 * The shell of the consoles' pages (src/surfaces/web/, /admin, /console): a header with the
 * product, the signed-in account and sign-out, a navigation, the language switch, a skip link,
 * and the page's content. One stylesheet and one small script, both served from web/assets/
 * (so the Content-Security-Policy allows no inline code at all).
 */

const ASSETS_DIR = fileURLToPath(new URL('../../../web/assets/', import.meta.url));

/** Where the shared assets are served. */
export const ASSETS_PATH = '/assets';

export interface NavItem {
  readonly href: string;
  readonly label: string;
}

export interface PageInput {
  readonly lang: Lang;
  /** The page's heading and title. */
  readonly title: string;
  /** The console's name and home. */
  readonly product: NavItem;
  readonly nav: readonly NavItem[];
  /** The current path: its navigation entry is marked as the current page. */
  readonly path: string;
  /** The signed-in account and the sign-out form's action and CSRF token. */
  readonly account?: { readonly email: string; readonly signOutAction: string; readonly csrf: string };
  /** The same page in the other language. */
  readonly switchLangHref: string;
  /** A one-time message after a redirect (PRG). */
  readonly flash?: { readonly kind: 'ok' | 'error'; readonly text: string };
  readonly content: Html;
}

const SHELL_TEXT = {
  ko: { skip: '본문으로 건너뛰기', signOut: '로그아웃', signedInAs: '로그인:', switchTo: 'English', switchLang: 'en', nav: '주 메뉴' },
  en: { skip: 'Skip to content', signOut: 'Sign out', signedInAs: 'Signed in:', switchTo: '한국어', switchLang: 'ko', nav: 'Main' },
} as const;

/** Renders a whole page. */
export function renderPage(input: PageInput): string {
  const t = SHELL_TEXT[input.lang];
  const current = (href: string) => input.path === href || (href !== input.product.href && input.path.startsWith(`${href}/`));
  const account = input.account
    ? html`<span class="who">${t.signedInAs} ${input.account.email}</span>
        <form method="post" action="${input.account.signOutAction}">
          <input type="hidden" name="csrf" value="${input.account.csrf}" />
          <button type="submit">${t.signOut}</button>
        </form>`
    : '';
  const flash = input.flash
    ? html`<p class="flash ${input.flash.kind}" role="${input.flash.kind === 'error' ? 'alert' : 'status'}">${input.flash.text}</p>`
    : '';
  return html`<!doctype html>
    <html lang="${input.lang}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${input.title} · ${input.product.label}</title>
        <link rel="stylesheet" href="${ASSETS_PATH}/web.css" />
        <script src="${ASSETS_PATH}/web.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#content">${t.skip}</a>
        <header class="top">
          <div class="bar">
            <a class="product" href="${input.product.href}">${input.product.label}</a>
            ${account}
            <a class="lang" href="${input.switchLangHref}" lang="${t.switchLang}" hreflang="${t.switchLang}">${t.switchTo}</a>
          </div>
        </header>
        ${
          input.nav.length > 0
            ? html`<nav class="main" aria-label="${t.nav}">
                <ul>
                  ${input.nav.map(
                    (item) =>
                      html`<li><a href="${item.href}" ${current(item.href) ? html`aria-current="page"` : ''}>${item.label}</a></li>`,
                  )}
                </ul>
              </nav>`
            : ''
        }
        <main id="content" tabindex="-1">
          <h1>${input.title}</h1>
          ${flash} ${input.content}
        </main>
      </body>
    </html>`.text;
}

/**
 * Headers of every console page: only our own stylesheet and script, no framing
 * (clickjacking), forms only to ourselves, nothing cached, no Referer to other sites.
 */
export function setConsoleHeaders(ctx: { set(field: string, value: string): void }): void {
  ctx.set(
    'Content-Security-Policy',
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('Cache-Control', 'no-store');
}

/** Writes a rendered page. */
export function sendPage(ctx: AppContext, status: number, page: string): void {
  setConsoleHeaders(ctx);
  ctx.status = status;
  ctx.type = 'html';
  ctx.body = page;
}

interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

const ASSETS: Readonly<Record<string, string>> = { 'web.css': 'text/css; charset=utf-8', 'web.js': 'text/javascript; charset=utf-8' };

/** GET /assets/web.css and /assets/web.js: read once, revalidated by ETag. */
export function serveAssets(): AppMiddleware {
  const assets = new Map<string, Asset>(
    Object.entries(ASSETS).map(([name, type]) => {
      const body = readFileSync(ASSETS_DIR + name);
      return [`${ASSETS_PATH}/${name}`, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` }];
    }),
  );
  return async (ctx, next) => {
    const asset = assets.get(ctx.path);
    if (!asset || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    ctx.set('ETag', asset.etag);
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (ctx.get('If-None-Match') === asset.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = asset.type;
    ctx.body = asset.body;
  };
}
