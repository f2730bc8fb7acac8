import type { ErrorOut, KoaContextWithOIDC } from 'oidc-provider';
import type { AppContext } from '../../http/context.js';
import type { AccountService } from '../../oauth/accounts.js';
import { SERVICE_NAME } from '../../oauth/apps.js';
import { OAUTH_PATHS } from '../../oauth/constants.js';
import { UserCodeGuessesSpent } from '../../oauth/device-codes.js';
import type { ProviderPages } from '../../oauth/provider.js';
import { parseUserAgent } from '../../oauth/sign-ins.js';
import { errorSummary, field, type FieldError } from './components.js';
import { wayBack } from './errors.js';
import { html, trusted } from './html.js';
import type { Texts } from './texts/index.js';
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
    /**
     * /device: the form for the code a device shows (oidc-provider checks it: its anti-forgery
     * token is the session's), again with the refusal when a code was wrong, expired or used (400),
     * or a page saying when to try again once too many codes found nothing (429, no form).
     */
    async deviceCode(ctx, _out, err) {
      const page = asPage(ctx);
      const t = web.texts(page);
      const d = t.device;
      if (err instanceof UserCodeGuessesSpent) {
        web.render(page, 429, {
          title: d.title,
          narrow: true,
          content: html`<p role="alert">${d.tooMany(Math.ceil(err.retryAfterSeconds / 60))}</p>`,
        });
        return;
      }
      const refusal = err ? deviceRefusal(err.name) : undefined;
      const errors: FieldError[] = refusal && refusal !== 'aborted' ? [{ field: USER_CODE, message: d[refusal] }] : [];
      const typed = err && 'userCode' in err && typeof err.userCode === 'string' ? err.userCode : '';
      const secret = ctx.oidc?.session?.state?.['secret'];
      // A refused code is the person's to correct (400); any other failure keeps the provider's status.
      const status = refusal === 'failed' ? Math.max(ctx.status, 400) : errors.length > 0 ? 400 : 200;
      web.render(page, status, {
        title: d.title,
        narrow: true,
        content: html`${refusal === 'aborted' ? html`<p role="status" class="notice">${d.aborted}</p>` : ''}
          <p>${d.intro}</p>
          ${errorSummary(t, errors)}
          <form method="post" action="${OAUTH_PATHS.device}" class="card" novalidate>
            <input type="hidden" name="xsrf" value="${typeof secret === 'string' ? secret : ''}" />
            ${field({ name: USER_CODE, label: d.code, hint: d.codeHint, value: typed, required: true, maxlength: 32, autofocus: true, errors })}
            <div class="actions"><button type="submit" class="primary">${d.submit}</button></div>
          </form>`,
      });
    },
    /**
     * The device's app, the code the device should show, and where the request came from (RFC
     * 8628, section 5.4: a person tricked into typing someone else's code can see it is not theirs).
     */
    async deviceConfirm(ctx, client, deviceInfo, userCode) {
      const page = asPage(ctx);
      const t = web.texts(page);
      const d = t.device;
      const secret = ctx.oidc?.session?.state?.['secret'];
      web.render(page, 200, {
        title: d.confirmTitle,
        narrow: true,
        content: html`<p>${d.confirmIntro(appName(client))}</p>
          <p>${d.confirmCode}:</p>
          <p class="user-code">
            <strong><code id="user-code">${userCode}</code></strong>
          </p>
          <p class="hint">${d.requestedFrom(whereFrom(deviceInfo))}</p>
          <p class="notice">${d.confirmWarning}</p>
          <form method="post" action="${OAUTH_PATHS.device}">
            <input type="hidden" name="xsrf" value="${typeof secret === 'string' ? secret : ''}" />
            <input type="hidden" name="user_code" value="${userCode}" />
            <div class="actions">
              <button type="submit" class="primary" name="confirm" value="yes" autofocus>${d.confirm}</button>
              <button type="submit" class="secondary" name="abort" value="yes">${d.cancel}</button>
            </div>
          </form>`,
      });
    },
    /** The device is signed in: the person goes back to it. */
    async deviceDone(ctx) {
      const page = asPage(ctx);
      const t = web.texts(page);
      web.render(page, 200, {
        title: t.device.successTitle,
        narrow: true,
        content: html`<p role="status">${t.device.success(ctx.oidc?.client ? appName(ctx.oidc.client) : '')}</p>`,
      });
    },
  };
}

/** The name of the code's field (oidc-provider reads it). */
const USER_CODE = 'user_code';

/** What the refusal of a typed code says (oidc-provider's re-render errors, by name). */
function deviceRefusal(name: string): keyof Pick<Texts['device'], 'missing' | 'wrong' | 'expired' | 'used' | 'aborted' | 'failed'> {
  switch (name) {
    case 'NoCodeError':
      return 'missing';
    case 'NotFoundError':
      return 'wrong';
    case 'ExpiredError':
      return 'expired';
    case 'AlreadyUsedError':
      return 'used';
    case 'AbortedError':
      return 'aborted';
    default:
      return 'failed';
  }
}

/** The app as the login page names it: its service name with the app's name, or the app's name. */
function appName(client: { clientId: string; clientName?: string | undefined; [key: string]: unknown }): string {
  const name = client.clientName ?? client.clientId;
  const service = client[SERVICE_NAME];
  return typeof service === 'string' && service ? `${service} (${name})` : name;
}

/** The device's address and browser or program, as the device authorization request showed them. */
function whereFrom(deviceInfo: Record<string, unknown>): string {
  const ip = typeof deviceInfo['ip'] === 'string' ? deviceInfo['ip'] : '';
  const ua = typeof deviceInfo['ua'] === 'string' ? deviceInfo['ua'] : '';
  const { browser, os } = parseUserAgent(ua || null);
  const program = [browser, os].filter(Boolean).join(', ') || ua.slice(0, 60);
  return [ip, program].filter(Boolean).join(' · ') || '—';
}
