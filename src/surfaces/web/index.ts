import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import compose from 'koa-compose';
import { STAFF_ROLES, type AccountPrincipal } from '../../auth/principal.js';
import type { AccountRole } from '../../data/__generated__/enums.js';
import { AccountStore } from '../../data/accounts.js';
import { OAuthStore } from '../../data/oauth-store.js';
import { createContext, type GraphQLContext } from '../../graphql/context.js';
import { createGraphQLServer, type GraphQLServer } from '../../graphql/server.js';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { html } from '../../http/web/html.js';
import { pickLanguage, type Lang } from '../../http/web/lang.js';
import { renderPage, sendPage, serveAssets, type NavItem } from '../../http/web/page.js';
import { AccessTokenRejected, verifierFor } from '../../oauth/access-token.js';
import { ClientService } from '../../oauth/clients.js';
import { OAUTH_PATHS, SELF_READ } from '../../oauth/constants.js';
import { loadOAuthKeys } from '../../oauth/keys.js';
import type { AppDeps } from '../types.js';
import {
  CookieSealer,
  SESSION_LIFETIME_MS,
  clearSession,
  csrfMatches,
  csrfToken,
  readSession,
  writeSession,
  type WebSession,
} from './session.js';

/**
 * Our own pages' sign-in (the admin console, the developer console). They are a first-party
 * client of our own authorization server and sign people in the way any app does: the
 * authorization-code flow with PKCE, the code redeemed at the token endpoint, the access token
 * verified. The pages' session is then a sealed browser-session cookie that names the account
 * and the grant of that sign-in, and lives as long as the grant does (docs/architecture.md,
 * "Writes and the two consoles"): no session store of our own.
 */

/** The first-party client of our pages (registered at start-up; PKCE, no secret). */
export const WEB_CLIENT_ID = 'campus-web';
export const WEB_PATHS = {
  signIn: '/web/signin',
  callback: '/web/callback',
  signOut: '/web/signout',
  signedOut: '/web/signed-out',
} as const;
const SIGNIN_COOKIE = 'campus_web_signin';
const LANG_COOKIE = 'campus_lang';
const SIGNIN_LIFETIME_MS = 10 * 60 * 1000;

const TEXT = {
  ko: {
    product: '캠퍼스 데이터 서비스',
    forbiddenTitle: '접근 권한이 없습니다',
    forbidden: (email: string, roles: readonly string[]) =>
      `${email} 계정으로는 이 페이지를 볼 수 없습니다. ${roles.join(' 또는 ')} 계정이 필요합니다.`,
    signInFailedTitle: '로그인하지 못했습니다',
    signInFailed: '로그인을 마치지 못했습니다. 다시 시도하세요.',
    signInAgain: '다시 로그인',
    signedOutTitle: '로그아웃되었습니다',
    signedOut: '콘솔과 학교 계정에서 로그아웃했습니다. 공용 컴퓨터라면 브라우저를 닫으세요.',
    forgedTitle: '요청을 확인할 수 없습니다',
    forged: '페이지를 새로 고친 뒤 다시 시도하세요.',
  },
  en: {
    product: 'Campus Data Service',
    forbiddenTitle: 'Access denied',
    forbidden: (email: string, roles: readonly string[]) =>
      `The account ${email} cannot open this page; it needs an ${roles.join(' or ')} account.`,
    signInFailedTitle: 'Sign-in failed',
    signInFailed: 'The sign-in could not be completed. Please try again.',
    signInAgain: 'Sign in again',
    signedOutTitle: 'Signed out',
    signedOut: 'You have signed out of the consoles and of your school account. On a shared computer, close the browser.',
    forgedTitle: 'The request could not be verified',
    forged: 'Reload the page and try again.',
  },
} as const;

/** What the consoles build their pages and operations with. */
export interface WebKit {
  /** Sign-in, callback, sign-out and the shared assets. */
  readonly middleware: AppMiddleware;
  /** The GraphQL server the consoles' typed operations run on (in-process, src/graphql/server.ts). */
  readonly graphql: GraphQLServer;
  /**
   * Requires a signed-in account (redirecting to sign-in otherwise) with one of `roles` (a page
   * saying so otherwise); puts it in `ctx.state.account`.
   */
  requireAccount(roles?: readonly AccountRole[]): AppMiddleware;
  /** Parses a form post and refuses it (403 page) unless it carries the session's CSRF token from our origin. */
  readonly form: AppMiddleware;
  /** The form fields of a checked post. */
  fields(ctx: AppContext): Record<string, string>;
  /** The language of the page (?lang=, then the remembered choice, then the browser). */
  lang(ctx: AppContext): Lang;
  /** The CSRF token for the forms of this request's session. */
  csrf(ctx: AppContext): string;
  /** Renders a page in the shell of a console (header, account, sign-out, navigation, language switch). */
  page(
    ctx: AppContext,
    status: number,
    input: {
      product: NavItem;
      nav: readonly NavItem[];
      title: string;
      content: ReturnType<typeof html>;
      flash?: { kind: 'ok' | 'error'; text: string };
    },
  ): void;
  /** The GraphQL context of the signed-in account, for `runOperation`. */
  context(ctx: AppContext): GraphQLContext;
}

/** Builds the sign-in routes and the kit; registers (or updates) the first-party client. */
export async function createWebKit(deps: AppDeps): Promise<WebKit> {
  const { config, db } = deps;
  const now = deps.now ?? (() => new Date());
  const keys = await loadOAuthKeys(config, db);
  const store = new OAuthStore(db, now);
  const verifier = verifierFor(config, keys, store, now);
  const accounts = new AccountStore(db);
  const sealer = new CookieSealer(keys.cookieKeys, 'session');
  const signInSealer = new CookieSealer(keys.cookieKeys, 'signin');
  const csrfKey = createHash('sha256')
    .update(`campus-web-csrf:${keys.cookieKeys[0] ?? ''}`)
    .digest();
  const secure = config.urls.auth.startsWith('https://');
  const origin = new URL(config.urls.auth).origin;
  const redirectUri = `${config.urls.auth}${WEB_PATHS.callback}`;
  const graphql = await createGraphQLServer(deps.logger);
  await new ClientService(db, { isProduction: config.isProduction }).put({
    id: WEB_CLIENT_ID,
    name: TEXT.ko.product,
    redirectUris: [redirectUri],
    postLogoutRedirectUris: [`${config.urls.auth}${WEB_PATHS.signedOut}`],
    scopes: [SELF_READ],
    public: true,
    firstParty: true,
  });

  const lang = (ctx: AppContext): Lang => {
    const explicit = ctx.query['lang'];
    if (explicit === 'ko' || explicit === 'en')
      ctx.cookies.set(LANG_COOKIE, explicit, { httpOnly: true, sameSite: 'lax', secure, path: '/', overwrite: true });
    return pickLanguage(explicit ?? ctx.cookies.get(LANG_COOKIE), ctx.get('accept-language'));
  };
  const sessionOf = (ctx: AppContext): WebSession | undefined => readSession(ctx, sealer, now().getTime());
  const csrf = (ctx: AppContext): string => {
    const session = sessionOf(ctx);
    return session ? csrfToken(csrfKey, session) : '';
  };
  const simplePage = (ctx: AppContext, status: number, title: string, body: ReturnType<typeof html>) => {
    const l = lang(ctx);
    sendPage(
      ctx,
      status,
      renderPage({
        lang: l,
        title,
        product: { href: '/console', label: TEXT[l].product },
        nav: [],
        path: ctx.path,
        switchLangHref: `${ctx.path}?lang=${l === 'ko' ? 'en' : 'ko'}`,
        content: body,
      }),
    );
  };

  /** GET /web/signin?next=/admin: starts the authorization-code flow with PKCE and a state. */
  const signIn: AppMiddleware = async (ctx) => {
    const verifierText = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('base64url');
    const next = safeNext(ctx.query['next']);
    ctx.cookies.set(
      SIGNIN_COOKIE,
      signInSealer.seal({ state, verifier: verifierText, next, expiresAt: now().getTime() + SIGNIN_LIFETIME_MS }),
      {
        httpOnly: true,
        sameSite: 'lax',
        secure,
        path: '/web',
        overwrite: true,
      },
    );
    const query = new URLSearchParams({
      client_id: WEB_CLIENT_ID,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: SELF_READ,
      state,
      code_challenge: createHash('sha256').update(verifierText).digest('base64url'),
      code_challenge_method: 'S256',
      ui_locales: lang(ctx),
    });
    ctx.status = 303;
    ctx.redirect(`${config.urls.auth}${OAUTH_PATHS.authorize}?${query.toString()}`);
  };

  /** GET /web/callback: checks the state, redeems the code, verifies the token, opens the session. */
  const callback: AppMiddleware = async (ctx) => {
    const pending = signInSealer.open(ctx.cookies.get(SIGNIN_COOKIE)) as
      { state?: string; verifier?: string; next?: string; expiresAt?: number } | undefined;
    ctx.cookies.set(SIGNIN_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure, path: '/web', maxAge: 0, overwrite: true });
    const code = ctx.query['code'];
    const state = ctx.query['state'];
    const t = TEXT[lang(ctx)];
    const failed = () =>
      simplePage(
        ctx,
        400,
        t.signInFailedTitle,
        html`<p role="alert">${t.signInFailed}</p>
          <p><a class="button" href="${WEB_PATHS.signIn}">${t.signInAgain}</a></p>`,
      );
    if (
      !pending?.state ||
      !pending.verifier ||
      (pending.expiresAt ?? 0) < now().getTime() ||
      typeof code !== 'string' ||
      !sameText(state, pending.state)
    ) {
      return failed();
    }
    const token = await redeem(`${config.urls.auth}${OAUTH_PATHS.token}`, { code, verifier: pending.verifier, redirectUri });
    if (!token) return failed();
    const verified = await verifier.verify(token).catch((err: unknown) => {
      if (err instanceof AccessTokenRejected) return undefined;
      throw err;
    });
    const account = verified && /^\d+$/.test(verified.sub) ? await accounts.findById(Number(verified.sub)) : null;
    if (!verified || !account) return failed();
    writeSession(
      ctx,
      sealer,
      {
        accountId: account._id,
        grantId: verified.grantId,
        nonce: randomBytes(16).toString('base64url'),
        expiresAt: now().getTime() + SESSION_LIFETIME_MS,
      },
      secure,
    );
    ctx.state.log.info({ event: 'web.signin', accountId: account._id }, 'signed in to the consoles');
    ctx.status = 303;
    ctx.redirect(safeNext(pending.next));
  };

  /** Refuses a post without the session's CSRF token or from another origin. */
  const form: AppMiddleware = async (ctx, next) => {
    await bodyParser({ enableTypes: ['form'], formLimit: '1mb' })(ctx, async () => {});
    const session = sessionOf(ctx);
    const requestOrigin = ctx.get('origin');
    const fields = formFields(ctx);
    if (!session || (requestOrigin && requestOrigin !== origin) || !csrfMatches(csrfKey, session, fields['csrf'])) {
      const t = TEXT[lang(ctx)];
      return simplePage(ctx, 403, t.forgedTitle, html`<p role="alert">${t.forged}</p>`);
    }
    await next();
  };

  /** POST /web/signout: ends the grant (so every page of this sign-in is signed out) and the school sign-in. */
  const signOut: AppMiddleware = async (ctx) => {
    const session = sessionOf(ctx);
    if (session) await store.revokeGrant(session.grantId);
    clearSession(ctx, secure);
    const query = new URLSearchParams({
      client_id: WEB_CLIENT_ID,
      post_logout_redirect_uri: `${config.urls.auth}${WEB_PATHS.signedOut}`,
      ui_locales: lang(ctx),
    });
    ctx.status = 303;
    ctx.redirect(`${config.urls.auth}${OAUTH_PATHS.logout}?${query.toString()}`);
  };

  const signedOut: AppMiddleware = async (ctx) => {
    const t = TEXT[lang(ctx)];
    simplePage(
      ctx,
      200,
      t.signedOutTitle,
      html`<p role="status">${t.signedOut}</p>
        <p><a class="button" href="${WEB_PATHS.signIn}">${t.signInAgain}</a></p>`,
    );
  };

  const router = new Router<RequestState>();
  router.get(WEB_PATHS.signIn, signIn);
  router.get(WEB_PATHS.callback, callback);
  router.post(WEB_PATHS.signOut, form, signOut);
  router.get(WEB_PATHS.signedOut, signedOut);
  const routes = router.routes();

  const kit: WebKit = {
    middleware: compose([serveAssets(), (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next)]),
    graphql,
    form,
    fields: formFields,
    lang,
    requireAccount(roles) {
      return async (ctx, next) => {
        const session = sessionOf(ctx);
        const account = session && (await store.find('Grant', session.grantId)) ? await accounts.findById(session.accountId) : null;
        if (!session || !account) {
          if (session) clearSession(ctx, secure);
          ctx.status = 303;
          ctx.redirect(`${WEB_PATHS.signIn}?next=${encodeURIComponent(ctx.originalUrl)}`);
          return;
        }
        const principal: AccountPrincipal = { kind: 'account', accountId: account._id, email: account.email, role: account.role };
        ctx.state.account = principal;
        if (roles && !roles.includes(principal.role)) {
          const t = TEXT[lang(ctx)];
          return kit.page(ctx, 403, {
            product: { href: '/console', label: t.product },
            nav: [],
            title: t.forbiddenTitle,
            content: html`<p role="alert">${t.forbidden(principal.email, roles)}</p>`,
          });
        }
        await next();
      };
    },
    csrf,
    page(ctx, status, input) {
      const l = lang(ctx);
      const account = ctx.state.account;
      sendPage(
        ctx,
        status,
        renderPage({
          lang: l,
          title: input.title,
          product: input.product,
          nav: input.nav,
          path: ctx.path,
          switchLangHref: `${ctx.path}?${withLang(ctx.querystring, l === 'ko' ? 'en' : 'ko')}`,
          content: input.content,
          ...(input.flash ? { flash: input.flash } : {}),
          ...(account ? { account: { email: account.email, signOutAction: WEB_PATHS.signOut, csrf: csrf(ctx) } } : {}),
        }),
      );
    },
    context(ctx) {
      return createContext({ principal: ctx.state.account, db, log: ctx.state.log, timeZone: config.schoolTimeZone, now });
    },
  };
  return kit;
}

/** The roles of the admin console. */
export { STAFF_ROLES };

/** Redeems an authorization code at our token endpoint (as any client would); the access token, or undefined. */
async function redeem(tokenUrl: string, input: { code: string; verifier: string; redirectUri: string }): Promise<string | undefined> {
  const res = await fetch(tokenUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: input.code,
      redirect_uri: input.redirectUri,
      client_id: WEB_CLIENT_ID,
      code_verifier: input.verifier,
    }),
  });
  if (!res.ok) return undefined;
  const body = (await res.json()) as { access_token?: unknown };
  return typeof body.access_token === 'string' ? body.access_token : undefined;
}

/** Only a path of ours: never another origin (`//host`) or a scheme. */
function safeNext(value: unknown): string {
  return typeof value === 'string' && /^\/(?![/\\])/.test(value) ? value : '/console';
}

/** Constant-time comparison of two texts (through their equal-length digests). */
function sameText(a: unknown, b: string): boolean {
  if (typeof a !== 'string') return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}

function withLang(querystring: string, lang: Lang): string {
  const query = new URLSearchParams(querystring);
  query.set('lang', lang);
  return query.toString();
}

function formFields(ctx: AppContext): Record<string, string> {
  const body: unknown = ctx.request.body;
  const fields: Record<string, string> = {};
  if (typeof body !== 'object' || body === null) return fields;
  for (const [name, value] of Object.entries(body)) if (typeof value === 'string') fields[name] = value;
  return fields;
}
