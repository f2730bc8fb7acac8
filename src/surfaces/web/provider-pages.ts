import type { ErrorOut, KoaContextWithOIDC } from 'oidc-provider';
import type { AppContext } from '../../http/context.js';
import type { AccountService } from '../../oauth/accounts.js';
import type { ProviderPages } from '../../oauth/provider.js';
import { wayBack } from './errors.js';
import { html, trusted } from './html.js';
import type { Web } from './web.js';

/**
 * The pages oidc-provider shows itself, rendered by the web layer: the end_session_endpoint's
 * confirmation and "signed out" pages, and its errors that cannot go back to an app (an unknown
 * client, a redirect_uri mismatch). They honour the app's ui_locales like the login pages.
 */
export function providerPages(web: Web, accounts: AccountService): ProviderPages {
  // oidc-provider's Koa context: the shell reads only its request (path, query, cookies, Accept
  // headers) and sets its headers and body, which every Koa context has.
  const asPage = (ctx: KoaContextWithOIDC) => ctx as unknown as AppContext;
  const hints = (ctx: KoaContextWithOIDC) => [ctx.oidc?.params?.['ui_locales'], ctx.oidc?.params?.['lang']];
  return {
    /**
     * The logout confirmation (shown when the browser has a login session). `form` is the
     * provider's hidden form (its action and anti-forgery token): the button submits it with logout=yes.
     */
    async logout(ctx, form) {
      const page = asPage(ctx);
      const t = web.texts(page, hints(ctx));
      const account = await accounts.findById(Number(ctx.oidc?.session?.accountId));
      // A session whose account was deleted since still ends here; it shows the id it holds.
      const email = account?.email ?? String(ctx.oidc?.session?.accountId ?? '');
      web.render(page, 200, {
        title: t.logout.title,
        narrow: true,
        oauth: true,
        content: html`<p>${t.logout.intro(email)}</p>
          <p>${t.logout.keepsApps}</p>
          ${trusted(form)}
          <div class="actions">
            <button type="submit" class="primary" form="op.logoutForm" name="logout" value="yes" autofocus>${t.logout.submit}</button>
          </div>
          <p class="hint">${t.logout.stay}</p>`,
      });
    },
    /** The page after logout when the app gave no post_logout_redirect_uri. */
    async signedOut(ctx) {
      const page = asPage(ctx);
      const t = web.texts(page, hints(ctx));
      web.render(page, 200, {
        title: t.logout.signedOutTitle,
        narrow: true,
        content: html`<p role="status">${t.logout.signedOut}</p>
          <p>${t.logout.keepsApps}</p>
          ${wayBack(t, undefined, web.links)}`,
      });
    },
    /**
     * The provider's errors that cannot go back to the app: a page, or JSON when the caller asks
     * for JSON. The status is already set by the provider.
     */
    async error(ctx, out: ErrorOut) {
      const body = { error: out.error, error_description: out.error_description ?? out.error };
      if (ctx.accepts('html', 'json') === 'json') {
        ctx.set('Cache-Control', 'no-store');
        ctx.body = body;
        return;
      }
      const page = asPage(ctx);
      const t = web.texts(page, hints(ctx));
      web.render(page, ctx.status, {
        title: t.errors.badRequestTitle,
        narrow: true,
        content: html`<p role="alert" lang="en">${body.error_description}</p>
          <p>${t.errors.oauthCode}: <code>${body.error}</code></p>
          <p>${t.errors.oauthHint}</p>`,
      });
    },
  };
}
