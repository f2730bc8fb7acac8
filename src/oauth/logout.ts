import type { KoaContextWithOIDC } from 'oidc-provider';
import type { AccountService } from './accounts.js';
import { logoutPage, pickLanguage, setPageHeaders, signedOutPage, type Lang } from './pages.js';

/**
 * oidc-provider's logoutSource: our confirmation page for the end_session_endpoint, shown when
 * the browser has a login session. The provider has already checked the client and the
 * post_logout_redirect_uri and put its anti-forgery token in `form`.
 */
export async function logoutSource(ctx: KoaContextWithOIDC, form: string, accounts: AccountService): Promise<void> {
  const accountId = Number(ctx.oidc?.session?.accountId);
  const account = await accounts.findById(accountId);
  // A session whose account was deleted since still ends here; it shows the id it holds.
  const accountEmail = account?.email ?? String(ctx.oidc?.session?.accountId ?? '');
  renderPage(ctx, logoutPage({ lang: logoutLanguage(ctx), accountEmail, providerForm: form }));
}

/** oidc-provider's postLogoutSuccessSource: the "signed out" page. */
export async function signedOutSource(ctx: KoaContextWithOIDC): Promise<void> {
  renderPage(ctx, signedOutPage(logoutLanguage(ctx)));
}

/** `ui_locales` (OpenID Connect's parameter) or `lang` when one names ko or en; else the browser's. */
function logoutLanguage(ctx: KoaContextWithOIDC): Lang {
  const uiLocales = ctx.oidc?.params?.['ui_locales'];
  const requested = [ctx.query['lang'], ...(typeof uiLocales === 'string' ? uiLocales.split(' ') : [])]
    .map((tag) => (typeof tag === 'string' ? tag.split('-')[0]?.toLowerCase() : undefined))
    .find((lang) => lang === 'ko' || lang === 'en');
  return pickLanguage(requested, ctx.get('accept-language'));
}

function renderPage(ctx: KoaContextWithOIDC, html: string): void {
  setPageHeaders(ctx);
  ctx.status = 200;
  ctx.type = 'html';
  ctx.body = html;
}
