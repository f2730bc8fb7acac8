import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import compose from 'koa-compose';
import type Provider from 'oidc-provider';
import { errors, type Interaction } from 'oidc-provider';
import type { AppContext, AppMiddleware, RequestState } from '../http/context.js';
import { MAX_EMAIL_LENGTH, type AccountService } from './accounts.js';
import { SERVICE_NAME } from './clients.js';
import { ACCOUNT_PATHS, OAUTH_PATHS } from './constants.js';
import { consentPage, errorPage, loginPage, pickLanguage, setPageHeaders, text, type Lang, type LoginProblem } from './pages.js';
import type { LoginThrottle } from './throttle.js';

export interface InteractionDeps {
  readonly provider: Provider;
  readonly accounts: AccountService;
  readonly throttle: LoginThrottle;
  readonly cookieKeys: readonly string[];
  /** Origin of AUTH_URL: form posts from any other origin are refused. */
  readonly authOrigin: string;
}

/** A page-level refusal: its status and which message to show. */
class PageError extends Error {
  constructor(
    readonly status: number,
    readonly messageKey: 'sessionExpired' | 'forged',
  ) {
    super(messageKey);
  }
}

/** The shape of oidc-provider's interaction ids. */
const UID = /^[A-Za-z0-9_-]{1,64}$/;

type PageHandler = (ctx: AppContext, uid: string) => Promise<void>;

/**
 * The login and consent pages of oidc-provider's interactions:
 *   GET  /v1/oauth/interaction/:uid          the login or consent page
 *   POST /v1/oauth/interaction/:uid/login    email + password
 *   POST /v1/oauth/interaction/:uid/confirm  allow or deny the requested scopes
 *   POST /v1/oauth/interaction/:uid/abort    cancel the sign-in
 * Forms carry a CSRF token bound to the interaction, posts must come from our own origin, and
 * the interaction cookie is SameSite=Lax; pages refuse framing.
 */
export function interactionRoutes(deps: InteractionDeps): AppMiddleware {
  // The CSRF key derives from a secret cookie key; without one, tokens would be computable.
  const [cookieKey] = deps.cookieKeys;
  if (!cookieKey) throw new Error('no cookie keys: the login pages cannot protect their forms');
  const csrfKey = createHash('sha256').update(`campus-csrf:${cookieKey}`).digest();
  const parseForm = bodyParser({ enableTypes: ['form'], formLimit: '16kb' });
  // A page answers its errors itself (renderPageError); a form post must come from our origin.
  const page =
    (handler: PageHandler, isForm = false): AppMiddleware =>
    async (ctx, next) => {
      const uid = String(ctx.params['uid'] ?? '');
      if (!UID.test(uid)) return next();
      try {
        if (isForm) {
          checkSameOrigin(ctx, deps.authOrigin);
          await parseForm(ctx, async () => {});
        }
        await handler(ctx, uid);
      } catch (err) {
        renderPageError(ctx, err);
      }
    };
  const router = new Router<RequestState>({ prefix: OAUTH_PATHS.interaction });
  router.get('/:uid', page(showInteraction(deps, csrfKey)));
  router.post('/:uid/login', page(submitLogin(deps, csrfKey), true));
  router.post('/:uid/confirm', page(submitConsent(deps, csrfKey), true));
  router.post('/:uid/abort', page(abortInteraction(deps, csrfKey), true));
  const dispatch = compose([router.allowedMethods(), router.routes()]);
  return (ctx, next) =>
    ctx.path.startsWith(`${OAUTH_PATHS.interaction}/`) ? dispatch(ctx as Parameters<typeof dispatch>[0], async () => {}) : next();
}

function showInteraction(deps: InteractionDeps, csrfKey: Buffer) {
  return async (ctx: AppContext, uid: string): Promise<void> => {
    const interaction = await loadInteraction(ctx, deps.provider, uid);
    const lang = pickLanguage(ctx.query['lang'], ctx.get('accept-language'));
    const names = await clientNamesOf(deps.provider, interaction);
    const csrf = csrfToken(csrfKey, uid);
    if (interaction.prompt.name === 'login') {
      return renderPage(ctx, 200, loginPage({ ...loginTargets(uid, lang), lang, ...names, csrf }));
    }
    if (interaction.prompt.name === 'consent') {
      const email = await accountEmail(deps.accounts, interaction);
      return renderPage(
        ctx,
        200,
        consentPage({
          ...consentTargets(uid, lang),
          lang,
          ...names,
          csrf,
          accountEmail: email,
          scopes: requestedScopes(interaction),
          logoutHref: logoutHref(lang),
        }),
      );
    }
    throw new PageError(400, 'sessionExpired');
  };
}

function submitLogin(deps: InteractionDeps, csrfKey: Buffer) {
  return async (ctx: AppContext, uid: string): Promise<void> => {
    const interaction = await loadInteraction(ctx, deps.provider, uid, 'login');
    const form = formFields(ctx);
    checkCsrf(csrfKey, uid, form['csrf']);
    const lang = pickLanguage(form['lang'], ctx.get('accept-language'));
    const email = (form['email'] ?? '').trim();
    const password = form['password'] ?? '';
    const remember = form['remember'] === 'yes';
    const names = await clientNamesOf(deps.provider, interaction);
    const again = (status: number, problem: LoginProblem) =>
      renderPage(
        ctx,
        status,
        loginPage({
          ...loginTargets(uid, lang),
          lang,
          ...names,
          csrf: csrfToken(csrfKey, uid),
          email: email.slice(0, MAX_EMAIL_LENGTH),
          remember,
          problem,
        }),
      );

    if (!email || !password) return again(400, { kind: 'missing' });
    // No account has a longer email; refused before any pattern or budget looks at it.
    if (email.length > MAX_EMAIL_LENGTH) return again(400, { kind: 'emailTooLong' });
    const decision = await deps.throttle.reserve(email, ctx.ip);
    if (decision.refused) {
      ctx.set('Retry-After', String(decision.retryAfterSeconds));
      ctx.state.log.warn({ event: 'login.throttled' }, 'login refused: too many failed attempts');
      return again(429, { kind: 'throttled', retryAfterSeconds: decision.retryAfterSeconds });
    }
    if (decision.delayMs > 0) {
      // Many recent failures on this account (from anywhere): every attempt waits, none is refused.
      ctx.state.log.info({ event: 'login.delayed', delayMs: decision.delayMs }, 'login slowed: many failed attempts on this account');
      await sleep(decision.delayMs);
    }
    const account = await deps.accounts.verifyLogin(email, password);
    if (!account) {
      ctx.state.log.info({ event: 'login.failed' }, 'login failed');
      return again(401, { kind: 'invalid' });
    }
    await deps.throttle.succeeded(email, ctx.ip);
    ctx.state.log.info({ event: 'login.succeeded', accountId: account._id, remember }, 'login succeeded');
    // Not remembered: a transient session, whose cookie ends with the browser (see sessionTtl).
    await finish(ctx, deps.provider, { login: { accountId: String(account._id), remember } }, false);
  };
}

function submitConsent(deps: InteractionDeps, csrfKey: Buffer) {
  return async (ctx: AppContext, uid: string): Promise<void> => {
    const interaction = await loadInteraction(ctx, deps.provider, uid, 'consent');
    const form = formFields(ctx);
    checkCsrf(csrfKey, uid, form['csrf']);
    if (form['decision'] !== 'allow') {
      await finish(ctx, deps.provider, { error: 'access_denied', error_description: 'the user denied the request' }, false);
      return;
    }
    const grantId = await grantRequested(deps.provider, interaction);
    await finish(ctx, deps.provider, { consent: interaction.grantId ? {} : { grantId } }, true);
  };
}

function abortInteraction(deps: InteractionDeps, csrfKey: Buffer) {
  return async (ctx: AppContext, uid: string): Promise<void> => {
    await loadInteraction(ctx, deps.provider, uid);
    checkCsrf(csrfKey, uid, formFields(ctx)['csrf']);
    await finish(ctx, deps.provider, { error: 'access_denied', error_description: 'the user cancelled the sign-in' }, false);
  };
}

/** Adds the scopes the consent page listed to the grant (existing or new) and saves it. */
async function grantRequested(provider: Provider, interaction: Interaction): Promise<string> {
  const accountId = interaction.session?.accountId;
  const clientId = interaction.params['client_id'];
  if (!accountId || typeof clientId !== 'string') throw new PageError(400, 'sessionExpired');
  const existing = interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined;
  const grant = existing ?? new provider.Grant({ accountId, clientId });
  const { missingOIDCScope, missingResourceScopes } = missingScopes(interaction);
  if (missingOIDCScope.length > 0) grant.addOIDCScope(missingOIDCScope.join(' '));
  for (const [indicator, scopes] of Object.entries(missingResourceScopes)) grant.addResourceScope(indicator, scopes.join(' '));
  return grant.save();
}

/** The interaction of this browser (by its cookie), which must be the one in the address. */
async function loadInteraction(ctx: AppContext, provider: Provider, uid: string, prompt?: string): Promise<Interaction> {
  const interaction = await provider.interactionDetails(ctx.req, ctx.res);
  if (interaction.uid !== uid || (prompt && interaction.prompt.name !== prompt)) throw new PageError(400, 'sessionExpired');
  return interaction;
}

/** Hands the result to the provider, which answers 303 to the authorization endpoint itself. */
async function finish(
  ctx: AppContext,
  provider: Provider,
  result: Parameters<Provider['interactionFinished']>[2],
  merge: boolean,
): Promise<void> {
  await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: merge });
  ctx.respond = false;
}

function requestedScopes(interaction: Interaction): string[] {
  const { missingOIDCScope, missingResourceScopes } = missingScopes(interaction);
  return [...new Set([...Object.values(missingResourceScopes).flat(), ...missingOIDCScope])];
}

/** The consent prompt's details (oidc-provider types them loosely): OIDC scopes and scopes per resource. */
function missingScopes(interaction: Interaction): { missingOIDCScope: string[]; missingResourceScopes: Record<string, string[]> } {
  const { details } = interaction.prompt;
  const strings = (value: unknown) => (Array.isArray(value) ? value.filter((s): s is string => typeof s === 'string') : []);
  const resources =
    typeof details['missingResourceScopes'] === 'object' && details['missingResourceScopes'] !== null
      ? details['missingResourceScopes']
      : {};
  return {
    missingOIDCScope: strings(details['missingOIDCScope']),
    missingResourceScopes: Object.fromEntries(Object.entries(resources).map(([indicator, scopes]) => [indicator, strings(scopes)])),
  };
}

/** The app's name, and the service it registered for the login page (src/oauth/clients.ts). */
async function clientNamesOf(
  provider: Provider,
  interaction: Interaction,
): Promise<{ clientName: string; serviceName: string | undefined }> {
  const clientId = String(interaction.params['client_id'] ?? '');
  const client = await provider.Client.find(clientId);
  const serviceName = client?.[SERVICE_NAME];
  return { clientName: client?.clientName ?? clientId, serviceName: typeof serviceName === 'string' ? serviceName : undefined };
}

async function accountEmail(accounts: AccountService, interaction: Interaction): Promise<string> {
  const account = await accounts.findById(Number(interaction.session?.accountId));
  if (!account) throw new PageError(400, 'sessionExpired');
  return account.email;
}

function loginTargets(uid: string, lang: Lang) {
  const base = `${OAUTH_PATHS.interaction}/${uid}`;
  // The sign-up and reset pages send the person back to this login page when they are done.
  const back = new URLSearchParams({ lang, return: base }).toString();
  return {
    action: `${base}/login`,
    cancelAction: `${base}/abort`,
    switchHref: `${base}?lang=${text(lang).switchTo.lang}`,
    signUpHref: `${ACCOUNT_PATHS.signUpPage}?${back}`,
    resetHref: `${ACCOUNT_PATHS.resetPage}?${back}`,
  };
}

/** The end_session_endpoint in the page's language (its confirmation page follows ui_locales). */
function logoutHref(lang: Lang): string {
  return `${OAUTH_PATHS.logout}?ui_locales=${lang}`;
}

function consentTargets(uid: string, lang: Lang) {
  const base = `${OAUTH_PATHS.interaction}/${uid}`;
  return { action: `${base}/confirm`, switchHref: `${base}?lang=${text(lang).switchTo.lang}` };
}

function formFields(ctx: AppContext): Record<string, string | undefined> {
  const body: unknown = ctx.request.body;
  const fields: Record<string, string | undefined> = {};
  if (typeof body !== 'object' || body === null) return fields;
  for (const [name, value] of Object.entries(body)) {
    if (typeof value === 'string') fields[name] = value;
  }
  return fields;
}

/** The synchronizer token of an interaction: an HMAC of its id under a server key. */
function csrfToken(key: Buffer, uid: string): string {
  return createHmac('sha256', key).update(uid).digest('base64url');
}

function checkCsrf(key: Buffer, uid: string, presented: string | undefined): void {
  const expected = Buffer.from(csrfToken(key, uid));
  const actual = Buffer.from(presented ?? '');
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) throw new PageError(403, 'forged');
}

/** Browsers send Origin on form posts; one from another site is a cross-site forgery. */
function checkSameOrigin(ctx: AppContext, authOrigin: string): void {
  const origin = ctx.get('origin');
  if (origin && origin !== authOrigin) throw new PageError(403, 'forged');
}

function renderPage(ctx: AppContext, status: number, html: string): void {
  setPageHeaders(ctx);
  ctx.status = status;
  ctx.type = 'html';
  ctx.body = html;
}

/** Lost or expired interactions and forged posts get a page; anything else is logged as a 500. */
function renderPageError(ctx: AppContext, err: unknown): void {
  const lang = pickLanguage(ctx.query['lang'], ctx.get('accept-language'));
  if (err instanceof PageError) return renderPage(ctx, err.status, errorPage(lang, text(lang)[err.messageKey]));
  if (err instanceof errors.SessionNotFound) return renderPage(ctx, 400, errorPage(lang, text(lang).sessionExpired, err.error));
  if (err instanceof errors.OIDCProviderError && err.expose)
    return renderPage(ctx, err.status, errorPage(lang, err.error_description ?? err.error, err.error));
  ctx.state.log.error({ err }, 'login page failed');
  renderPage(ctx, 500, errorPage(lang, text(lang).errorTitle, 'server_error'));
}
