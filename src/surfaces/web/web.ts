import Router from '@koa/router';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import { accountPrincipal, type AccountPrincipal } from '../../auth/principal.js';
import { isStaffRole, needsPasskey, pageRefusal, STAFF_ROLES, type PageRule, type SignInProof } from '../../auth/policy.js';
import type { Config } from '../../config/index.js';
import { AccountStore } from '../../data/accounts/store.js';
import type { Database } from '../../data/database.js';
import { OAuthStore } from '../../data/accounts/oauth-records.js';
import { servesHttps } from '../../oauth/constants.js';
import { NotFoundError } from '../../errors/index.js';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { appErrorOf, logFailure } from '../../http/errors.js';
import { anonymousBinding, Csrf, type CsrfBinding } from './csrf.js';
import { errorView, RoleRequiredError, wantsPage } from './errors.js';
import { Flashes, type Flash } from './flash.js';
import { formFields, urlencodedForm } from './forms.js';
import { html, type Html } from './html.js';
import { chooseLang, otherLangHref, type Lang } from './lang.js';
import { multipartForm, uploadOf } from './multipart.js';
import type { Outcome, PageRequest, RouteTable } from './routes.js';
import type { PageRoute } from '../types.js';
import { CookieSealer } from './seal.js';
import { Sessions, type WebSession } from './session.js';
import { standingOf } from '../../data/accounts/standing.js';
import { renderShell, sendPage, setPageHeaders, type Section, type SiteLinks } from './shell.js';
import { textsOf, type Texts } from './texts/index.js';

/** The paths of the consoles' own sign-in (./signin.ts). */
export const WEB_PATHS = {
  signIn: '/web/signin',
  callback: '/web/callback',
  signOut: '/web/signout',
  signedOut: '/web/signed-out',
} as const;

export interface WebOptions {
  readonly config: Config;
  readonly db: Database;
  readonly cookieKeys: readonly string[];
  readonly now: () => Date;
}

/** What a page shows beside its content. */
export interface PageFrame {
  readonly title: string;
  readonly content: Html;
  readonly section?: Section | undefined;
  readonly narrow?: boolean | undefined;
  readonly oauth?: boolean | undefined;
  /** The message of the redirect that led here (route tables' pages only). */
  readonly flash?: Flash | undefined;
}

/**
 * The web layer of every human-facing page: the language, the session and who is signed in, the
 * one CSRF protection, the one flash, the shell, and route tables whose pages all go through them
 * (docs/web.md). Built once per app by src/surfaces/auth.ts; each page family mounts its table.
 */
export class Web {
  readonly config: Config;
  readonly now: () => Date;
  readonly secure: boolean;
  readonly sessions: Sessions;
  readonly flashes: Flashes;
  readonly csrf: Csrf;
  /** Forms of a signed-in person: bound to the console session. */
  readonly sessionForms: CsrfBinding;
  /** Forms shown before anyone signs in (sign-up, reset): bound to a cookie of their own. */
  readonly anonymousForms: CsrfBinding;
  readonly links: SiteLinks;
  private readonly accounts: AccountStore;
  private readonly grants: OAuthStore;
  /** Every route mounted, with the rule that guards it (the route walk of the tests reads it). */
  readonly mounted: PageRoute[] = [];
  /** The language chosen for each request, so the shell and the page never disagree. */
  private readonly chosen = new WeakMap<object, Lang>();

  constructor(options: WebOptions) {
    const { config, db, cookieKeys, now } = options;
    this.config = config;
    this.now = now;
    this.secure = servesHttps(config.urls.auth);
    this.sessions = new Sessions(new CookieSealer(cookieKeys, 'session'), this.secure, now);
    this.flashes = new Flashes(new CookieSealer(cookieKeys, 'flash'), this.secure, now);
    this.csrf = new Csrf(cookieKeys, new URL(config.urls.auth).origin);
    this.sessionForms = { name: 'session', value: (ctx) => this.sessions.read(ctx)?.nonce };
    this.anonymousForms = anonymousBinding(this.secure);
    this.accounts = new AccountStore(db);
    this.grants = new OAuthStore(db, now);
    // The docs are served by the data surface, which may live at another address (BASE_URL).
    this.links = {
      home: '/',
      console: '/console',
      admin: '/admin',
      docs: `${config.urls.base === config.urls.auth ? '' : config.urls.base}/docs`,
      signIn: WEB_PATHS.signIn,
      signOut: WEB_PATHS.signOut,
    };
  }

  /**
   * The request's language (./lang.ts), chosen once per request; `hints` (an OAuth app's
   * ui_locales and lang) count only in the first call, which route tables make before anything else.
   */
  lang(ctx: AppContext, hints: readonly unknown[] = []): Lang {
    const known = this.chosen.get(ctx);
    if (known) return known;
    const lang = chooseLang(ctx, this.secure, hints);
    this.chosen.set(ctx, lang);
    return lang;
  }

  /** The catalogue of the request's language. */
  texts(ctx: AppContext, hints: readonly unknown[] = []): Texts {
    return textsOf(this.lang(ctx, hints));
  }

  /** The session of the request. */
  session(ctx: AppContext): WebSession | undefined {
    return this.sessions.read(ctx);
  }

  /**
   * The signed-in account: a session whose grant is still alive (revoking the grant, anywhere,
   * signs the pages out) and whose account still exists and is not disabled; undefined otherwise.
   * Its staff privilege is worked out here, from its role and second factor now and what this
   * sign-in proved (src/auth/policy.ts), for every page and GraphQL operation of the request.
   */
  async identify(ctx: AppContext): Promise<AccountPrincipal | undefined> {
    if (ctx.state.account) return ctx.state.account;
    const session = this.sessions.read(ctx);
    if (!session) return undefined;
    const known = (await this.grants.find('Grant', session.grantId)) ? await this.accounts.known(session.accountId) : null;
    if (!known || known.doc.disabledAt) return undefined;
    ctx.state.account = accountPrincipal(standingOf(known.doc, known), known.doc.email, proofOf(session), this.config.policy);
    return ctx.state.account;
  }

  /**
   * Lets the request through when the route's rule (src/auth/policy.ts, PAGE_RULES) admits the
   * viewer; otherwise: not signed in, a 303 to sign in that comes back here; a role without
   * staff privilege, a 403 page; a staff account without the second factor its role needs, a 403
   * page that says how to set one up; a staff sign-in that did not use its factor, or is older than
   * FRESH_SIGN_IN_SECONDS where the rule wants a fresh one, the login form again (prompt=login).
   */
  guard(rule: PageRule): AppMiddleware {
    return async (ctx, next) => {
      if (rule === 'anyone') return next();
      const account = await this.identify(ctx);
      const session = this.sessions.read(ctx);
      const viewer = account && session ? { account: account.standing, proof: proofOf(session) } : undefined;
      const refusal = pageRefusal(rule, viewer, this.config.policy, this.now().getTime());
      if (refusal === null) return next();
      const again = (reauth: 'age' | 'login') => {
        ctx.status = 303;
        ctx.redirect(
          `${WEB_PATHS.signIn}?next=${encodeURIComponent(ctx.originalUrl)}${reauth === 'login' ? '&reauth=login' : '&reauth=age'}`,
        );
      };
      switch (refusal) {
        case 'sign-in':
          if (session) this.sessions.clear(ctx);
          ctx.status = 303;
          ctx.redirect(`${WEB_PATHS.signIn}?next=${encodeURIComponent(ctx.originalUrl)}`);
          return;
        case 'role':
          throw new RoleRequiredError(STAFF_ROLES);
        case 'second-factor-missing':
          return this.secondFactorNeeded(ctx, account);
        case 'second-factor-again':
          return again('login');
        case 'stale':
          return again('age');
      }
    };
  }

  /**
   * A staff account without the second factor its privilege needs: a 403 page that says how to set
   * one up (a passkey, where ADMIN_MFA=passkey accepts nothing else).
   */
  private secondFactorNeeded(ctx: AppContext, account: AccountPrincipal | undefined): void {
    const t = this.texts(ctx);
    ctx.state.log.warn({ event: 'admin.second_factor_missing', accountId: account?.accountId }, 'staff page refused: no second factor');
    const passkeyOnly = account !== undefined && needsPasskey(account.role, this.config.policy);
    this.render(ctx, 403, {
      title: passkeyOnly ? t.passkeys.adminNeededTitle : t.mfa.adminNeededTitle,
      content: passkeyOnly
        ? html`<p role="alert">${t.passkeys.adminNeeded}</p>
            <p><a class="button" href="/console/account#passkeys">${t.passkeys.setUp}</a></p>`
        : html`<p role="alert">${t.mfa.adminNeeded}</p>
            <p>${t.passkeys.orPasskey}</p>
            <p><a class="button" href="/console/account">${t.mfa.adminSetUp}</a></p>`,
    });
  }

  /**
   * The one HTML error boundary: any error of a request that wants a page (./errors.ts) becomes a
   * page in the person's language with a way back (home, the consoles, sign-in); every other
   * request's error goes on to the JSON boundary (src/http/errors.ts). Mounted by src/app.ts right
   * inside the JSON boundary, so unknown paths (the app's final 404) get a page too.
   */
  boundary(): AppMiddleware {
    return async (ctx, next) => {
      try {
        await next();
      } catch (err) {
        if (!wantsPage(ctx)) throw err;
        const error = appErrorOf(err);
        logFailure(ctx, error);
        for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
        // Who is signed in decides the way back; a failing database must not fail the error page too.
        const person = await this.identify(ctx).catch(() => undefined);
        this.render(ctx, error.status, errorView(this.texts(ctx), error, person, ctx.state.requestId, this.links));
      }
    };
  }

  /** Renders a page in the shell, with the person's menu. */
  render(ctx: AppContext, status: number, frame: PageFrame): void {
    const lang = this.lang(ctx);
    const t = textsOf(lang);
    const account = ctx.state.account;
    const html = renderShell({
      lang,
      t,
      schoolName: this.config.schoolName[lang],
      links: this.links,
      title: frame.title,
      path: ctx.path,
      switchLangHref: otherLangHref(ctx.path, ctx.querystring, lang),
      section: frame.section,
      narrow: frame.narrow,
      person: account
        ? { email: account.email, staff: isStaffRole(account.role), signOutCsrf: this.csrf.token(ctx, this.sessionForms) }
        : undefined,
      flash: frame.flash,
      content: frame.content,
    });
    sendPage(ctx, status, html, frame.oauth);
  }

  /**
   * The router of a route table: each route behind the table's access check; an unsafe request's
   * form parsed (urlencoded, or multipart for uploads) and its CSRF token checked; the handler's
   * outcome answered. With a prefix, any other path under it is a 404 page.
   */
  mount<D>(table: RouteTable<D>, deps: D): AppMiddleware {
    const router = new Router<RequestState>();
    const guard = this.guard(table.access);
    for (const route of table.routes) {
      this.mounted.push({ method: route.method, path: route.path, rule: route.access ?? table.access, inNav: route.nav !== undefined });
      const steps: AppMiddleware[] = [route.access ? this.guard(route.access) : guard];
      if (route.method === 'POST') {
        const check = this.csrf.check(table.csrf);
        // An upload over the limit lost its fields (the token among them) with its body: its handler
        // answers 413 with the form again, changing nothing, instead of calling it a forgery.
        if (route.upload) steps.push(multipartForm(), (ctx, next) => (uploadOf(ctx).tooLarge ? next() : check(ctx, next)));
        else steps.push(urlencodedForm(), check);
      }
      const handle = async (ctx: AppContext) => {
        if (table.langHints) this.lang(ctx, await table.langHints(ctx, deps));
        this.answer(ctx, table, await route.handler(this.request(ctx, table), deps));
      };
      const frame = table.frame;
      steps.push(frame ? (ctx) => frame(() => handle(ctx)) : handle);
      const [first, ...rest] = steps as Middleware[] as [Middleware, ...Middleware[]];
      if (route.method === 'GET') router.get(route.path, first, ...rest);
      else router.post(route.path, first, ...rest);
    }
    const routes = router.routes();
    const prefix = table.prefix;
    const unknown: AppMiddleware = async (ctx, next) => {
      if (!prefix || (ctx.path !== prefix && !ctx.path.startsWith(`${prefix}/`))) return next();
      await guard(ctx, async () => {
        throw new NotFoundError();
      });
    };
    return compose([(ctx, next) => routes(ctx as Parameters<typeof routes>[0], next), unknown]);
  }

  private request<D>(ctx: AppContext, table: RouteTable<D>): PageRequest {
    const lang = this.lang(ctx);
    let csrf: string | undefined;
    const token = () => (csrf ??= this.csrf.token(ctx, table.csrf));
    return {
      ctx,
      lang,
      t: textsOf(lang),
      get csrf() {
        return token();
      },
      account: ctx.state.account,
      form: formFields(ctx),
      param: (name) => {
        const value: unknown = ctx.params[name];
        return typeof value === 'string' ? value : '';
      },
      query: (name) => {
        const value = ctx.query[name];
        return typeof value === 'string' ? value.trim().slice(0, 200) : '';
      },
    };
  }

  private answer<D>(ctx: AppContext, table: RouteTable<D>, outcome: Outcome): void {
    if (outcome.kind === 'page') {
      this.render(ctx, outcome.status, {
        title: outcome.title,
        content: outcome.content,
        section: sectionOf(table, this.texts(ctx)),
        narrow: table.narrow,
        oauth: table.oauth,
        flash: this.flashes.take(ctx),
      });
    } else if (outcome.kind === 'redirect') {
      if (outcome.flash) this.flashes.set(ctx, outcome.flash);
      ctx.status = 303;
      ctx.redirect(outcome.location);
    } else if (outcome.kind === 'file') {
      setPageHeaders(ctx);
      ctx.attachment(outcome.name);
      ctx.type = outcome.type;
      ctx.body = outcome.body;
    } else if (outcome.kind === 'json') {
      setPageHeaders(ctx, table.oauth);
      ctx.status = outcome.status;
      ctx.body = outcome.body;
    }
  }
}

/** What a sign-in of our pages proved, as the privilege rules read it. */
function proofOf(session: WebSession): SignInProof {
  return { secondFactor: session.mfa === true, passkey: session.passkey === true, authTime: session.authTime };
}

/** A table's section in the shell: its name and home, and a navigation entry for each route that names one. */
function sectionOf<D>(table: RouteTable<D>, t: Texts): Section | undefined {
  if (!table.section) return undefined;
  const nav = table.routes.flatMap((route) => (route.nav ? [{ href: route.path, label: route.nav(t) }] : []));
  return { label: table.section.label(t), home: table.section.home, nav };
}
