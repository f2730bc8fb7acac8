import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import bodyParser from 'koa-bodyparser';
import Provider, { errors, type Interaction } from 'oidc-provider';
import type { AppContext, AppMiddleware } from '../http/context.js';
import type { AccountService } from './accounts.js';
import { OAUTH_PATHS } from './constants.js';
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

const ROUTE = /^\/v1\/oauth\/interaction\/([A-Za-z0-9_-]{1,64})(?:\/(login|confirm|abort))?$/;

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
  const handlers = {
    show: showInteraction(deps, csrfKey),
    login: submitLogin(deps, csrfKey),
    confirm: submitConsent(deps, csrfKey),
    abort: abortInteraction(deps, csrfKey),
  };
  return async (ctx, next) => {
    const match = ROUTE.exec(ctx.path);
    const uid = match?.[1];
    if (!match || !uid) return next();
    const action = match[2];
    const method = action ? 'POST' : 'GET';
    if (ctx.method !== method && !(method === 'GET' && ctx.method === 'HEAD')) {
      ctx.status = 405;
      ctx.set('Allow', method);
      return;
    }
    try {
      if (!action) return await handlers.show(ctx, uid);
      checkSameOrigin(ctx, deps.authOrigin);
      await parseForm(ctx, async () => {});
      await handlers[action as 'login' | 'confirm' | 'abort'](ctx, uid);
    } catch (err) {
      renderPageError(ctx, err);
    }
  };
}

function showInteraction(deps: InteractionDeps, csrfKey: Buffer) {
  return async (ctx: AppContext, uid: string): Promise<void> => {
    const interaction = await loadInteraction(ctx, deps.provider, uid);
    const lang = pickLanguage(ctx.query['lang'], ctx.get('accept-language'));
    const clientName = await clientNameOf(deps.provider, interaction);
    const csrf = csrfToken(csrfKey, uid);
    if (interaction.prompt.name === 'login') {
      return renderPage(ctx, 200, loginPage({ ...loginTargets(uid, lang), lang, clientName, csrf }));
    }
    if (interaction.prompt.name === 'consent') {
      const email = await accountEmail(deps.accounts, interaction);
      return renderPage(ctx, 200, consentPage({ ...consentTargets(uid, lang), lang, clientName, csrf, accountEmail: email, scopes: requestedScopes(interaction) }));
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
    const clientName = await clientNameOf(deps.provider, interaction);
    const again = (status: number, problem: LoginProblem) =>
      renderPage(ctx, status, loginPage({ ...loginTargets(uid, lang), lang, clientName, csrf: csrfToken(csrfKey, uid), email, problem }));

    if (!email || !password) return again(400, { kind: 'missing' });
    const wait = await deps.throttle.reserve(email, ctx.ip);
    if (wait > 0) {
      ctx.set('Retry-After', String(wait));
      ctx.state.log.warn({ event: 'login.throttled' }, 'login refused: too many failed attempts');
      return again(429, { kind: 'throttled', retryAfterSeconds: wait });
    }
    const account = await deps.accounts.verifyLogin(email, password);
    if (!account) {
      ctx.state.log.info({ event: 'login.failed' }, 'login failed');
      return again(401, { kind: 'invalid' });
    }
    await deps.throttle.succeeded(email, ctx.ip);
    ctx.state.log.info({ event: 'login.succeeded', accountId: account._id }, 'login succeeded');
    await finish(ctx, deps.provider, { login: { accountId: String(account._id) } }, false);
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
  const { missingOIDCScope, missingResourceScopes } = interaction.prompt.details;
  if (missingOIDCScope?.length) grant.addOIDCScope(missingOIDCScope.join(' '));
  for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
  return grant.save();
}

/** The interaction of this browser (by its cookie), which must be the one in the address. */
async function loadInteraction(ctx: AppContext, provider: Provider, uid: string, prompt?: string): Promise<Interaction> {
  const interaction = await provider.interactionDetails(ctx.req, ctx.res);
  if (interaction.uid !== uid || (prompt && interaction.prompt.name !== prompt)) throw new PageError(400, 'sessionExpired');
  return interaction;
}

/** Hands the result to the provider, which answers 303 to the authorization endpoint itself. */
async function finish(ctx: AppContext, provider: Provider, result: Parameters<Provider['interactionFinished']>[2], merge: boolean): Promise<void> {
  await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: merge });
  ctx.respond = false;
}

function requestedScopes(interaction: Interaction): string[] {
  const { missingOIDCScope = [], missingResourceScopes = {} } = interaction.prompt.details;
  return [...new Set([...Object.values(missingResourceScopes).flat(), ...missingOIDCScope])];
}

async function clientNameOf(provider: Provider, interaction: Interaction): Promise<string> {
  const clientId = String(interaction.params['client_id'] ?? '');
  const client = await provider.Client.find(clientId);
  return client?.clientName ?? clientId;
}

async function accountEmail(accounts: AccountService, interaction: Interaction): Promise<string> {
  const account = await accounts.findById(Number(interaction.session?.accountId));
  if (!account) throw new PageError(400, 'sessionExpired');
  return account.email;
}

function loginTargets(uid: string, lang: Lang) {
  const base = `${OAUTH_PATHS.interaction}/${uid}`;
  return { action: `${base}/login`, cancelAction: `${base}/abort`, switchHref: `${base}?lang=${text(lang).switchTo.lang}` };
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
  if (err instanceof errors.OIDCProviderError && err.expose) return renderPage(ctx, err.status, errorPage(lang, err.error_description ?? err.error, err.error));
  ctx.state.log.error({ err }, 'login page failed');
  renderPage(ctx, 500, errorPage(lang, text(lang).errorTitle, 'server_error'));
}
