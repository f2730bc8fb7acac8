import { setTimeout as sleep } from 'node:timers/promises';
import type Provider from 'oidc-provider';
import { errors, type Interaction } from 'oidc-provider';
import { z } from 'zod';
import type { AppContext } from '../../http/context.js';
import type { LoginOutcome } from '../../http/metrics.js';
import { MAX_EMAIL_LENGTH, type AccountService } from '../../oauth/accounts.js';
import { SERVICE_NAME, type AppService } from '../../oauth/apps.js';
import { loginScope, SUB_FIELD } from '../../oauth/login-scopes.js';
import { withInteractionMemo } from '../../oauth/adapter.js';
import { ACCOUNT_PATHS, cookieName, OAUTH_PATHS } from '../../oauth/constants.js';
import { MfaLimited, type MfaService } from '../../oauth/second-factor.js';
import { PASSKEY_AMR, PasskeyRefused, type PasskeyProblem, type PasskeyService } from '../../oauth/passkeys.js';
import { SelfServiceError, type SelfService } from '../../oauth/self-service.js';
import type { AccountDoc } from '../../data/accounts/store.js';
import { LRUCache } from 'lru-cache';
import type { LoginThrottle } from '../../oauth/throttle.js';
import { APP_ADMISSION_PROMPT, DATA_UPDATE_PROMPT } from '../../oauth/provider.js';
import { appAdmits, secondStep, type PolicySettings } from '../../auth/policy.js';
import { standingOf } from '../../data/accounts/standing.js';
import type { Database } from '../../data/database.js';
import { studentFieldValues } from '../../data/school/student-fields.js';
import type { UpdateRequests } from '../../data/school/update-requests.js';
import { studentFieldInputs } from './student-fields.js';
import { csrfField, errorSummary, field, type FieldError } from './components.js';
import type { CsrfBinding } from './csrf.js';
import { text, ticked } from './forms.js';
import { html, type Html } from './html.js';
import { json, page, SENT, type Outcome, type PageRequest, type RouteTable } from './routes.js';
import type { CookieSealer } from './seal.js';
import { passkeyScripts } from './shell.js';
import { passkeyProblem } from './texts/passkeys.js';

export interface LoginDeps {
  readonly provider: Provider;
  readonly db: Database;
  /** Data updates the school asks at sign-in (the `data_update` prompt, src/oauth/provider.ts). */
  readonly dataUpdates: UpdateRequests;
  readonly timeZone: string;
  readonly accounts: AccountService;
  readonly clients: AppService;
  readonly throttle: LoginThrottle;
  /** The codes mailed to the owner of a soft-locked account (src/oauth/self-service.ts). */
  readonly selfService: SelfService;
  /** Counts each password sign-in's outcome (src/http/metrics.ts, campus_login_attempts_total). */
  readonly countAttempt: (outcome: LoginOutcome) => void;
  readonly mfa: MfaService;
  /** Sign-in with a passkey, alone or as the second step (src/oauth/passkeys.ts). */
  readonly passkeys: PasskeyService;
  /** The privilege rules' settings: which accounts a password sign-in asks a passkey of (src/auth/policy.ts, secondStep). */
  readonly policy: PolicySettings;
  /** Seals the login waiting for its second factor (./login.ts, SECOND_FACTOR_COOKIE). */
  readonly sealer: CookieSealer;
  readonly secure: boolean;
  readonly now: () => Date;
  /** Whom a disabled account is told to ask (HELP_CONTACT; null: the school's administrators). */
  readonly helpContact: string | null;
}

/** The login whose password was right, waiting for its second factor: bound to the interaction, for a few minutes. */
const SECOND_FACTOR_COOKIE = 'campus_second_factor';
const SECOND_FACTOR_LIFETIME_MS = 5 * 60 * 1000;
const secondFactorState = z.object({ uid: z.string(), accountId: z.number(), remember: z.boolean(), expiresAt: z.number() });
type SecondFactorState = z.infer<typeof secondFactorState>;

/** The shape of oidc-provider's interaction ids. */
const UID = /^[A-Za-z0-9_-]{1,64}$/;

/** The forms of a login in progress are bound to its interaction (the id in their address). */
const interactionForms: CsrfBinding = {
  name: 'interaction',
  value: (ctx) => {
    const uid: unknown = ctx.params['uid'];
    return typeof uid === 'string' && UID.test(uid) ? uid : undefined;
  },
};

/** The interaction of a request, read once (the language hints and the handler both need it). */
const loaded = new WeakMap<object, Promise<Interaction>>();
function interactionOf(ctx: AppContext, provider: Provider): Promise<Interaction> {
  let details = loaded.get(ctx);
  if (!details) {
    details = provider.interactionDetails(ctx.req, ctx.res);
    loaded.set(ctx, details);
  }
  return details;
}

/** A login in progress that is gone (expired, or another browser's): its own page. */
class LoginExpired extends Error {}

type Step = (req: PageRequest, deps: LoginDeps, interaction: Interaction) => Promise<Outcome>;

/**
 * Runs a step with this browser's interaction, which must be the one in the address; a lost login
 * or the provider's refusal is a page.
 */
function loginStep(step: Step) {
  return async (req: PageRequest, deps: LoginDeps): Promise<Outcome> => {
    const { t } = req;
    try {
      const interaction = await interactionOf(req.ctx, deps.provider);
      if (interaction.uid !== req.param('uid')) throw new LoginExpired();
      return await step(req, deps, interaction);
    } catch (err) {
      if (err instanceof LoginExpired || err instanceof errors.SessionNotFound)
        return page(t.errors.badRequestTitle, html`<p role="alert">${t.errors.sessionExpired}</p>`, 400);
      if (err instanceof errors.OIDCProviderError && err.expose)
        return page(
          t.errors.badRequestTitle,
          html`<p role="alert" lang="en">${err.error_description ?? err.error}</p>
            <p>${t.errors.oauthCode}: <code>${err.error}</code></p>
            <p>${t.errors.oauthHint}</p>`,
          err.status,
        );
      throw err;
    }
  };
}

const showInteraction: Step = async (req, deps, interaction) => {
  const names = await clientNamesOf(deps.provider, interaction);
  if (interaction.prompt.name === 'login') return loginForm(req, deps, names, { email: '', remember: false }, []);
  if (interaction.prompt.name === APP_ADMISSION_PROMPT) {
    // Approved meanwhile (another tab, a reload): the sign-in goes on, and the provider asks the rule again.
    if (await admitted(deps, interaction)) return finish(req.ctx, deps.provider, {}, true);
    return awaitingApproval(req, names);
  }
  if (interaction.prompt.name === 'consent') {
    const account = await deps.accounts.findById(Number(interaction.session?.accountId));
    if (!account) throw new LoginExpired();
    if (!(await admitted(deps, interaction))) return awaitingApproval(req, names);
    return consentForm(req, names, account.email, requestedScopes(interaction), await makerOf(deps, interaction));
  }
  if (interaction.prompt.name === DATA_UPDATE_PROMPT) return dataUpdateStep(req, deps, interaction, undefined);
  throw new LoginExpired();
};

/**
 * The data update the school asks at sign-in (docs/decisions.md, "Data updates at sign-in"): the
 * requested fields with their current values, the admin's message, one button. `answer` holds a
 * refused answer (its values and problems).
 */
async function dataUpdateStep(
  req: PageRequest,
  deps: LoginDeps,
  interaction: Interaction,
  answer: { values: Record<string, string>; errors: FieldError[] } | undefined,
  status = 200,
): Promise<Outcome> {
  const { t, lang } = req;
  const accountId = Number(interaction.session?.accountId);
  const pending = await deps.dataUpdates.pendingForAccount(accountId);
  const account = await deps.accounts.findById(accountId);
  if (!account) throw new LoginExpired();
  const school = await deps.db.school.snapshot();
  const student = school.studentByEmail(account.email);
  // Answered or withdrawn meanwhile (another tab): the sign-in goes on.
  if (!pending || !student) return finish(req.ctx, deps.provider, {}, true);
  const names = await clientNamesOf(deps.provider, interaction);
  const errors = answer?.errors ?? [];
  const base = `${OAUTH_PATHS.interaction}/${req.param('uid')}`;
  return page(
    t.dataUpdate.title,
    html`<p>${t.dataUpdate.intro(names.serviceName ?? names.clientName)}</p>
      ${
        pending.messages.length > 0
          ? html`<section class="notice" aria-labelledby="school-message">
              <p><strong id="school-message">${t.dataUpdate.message}</strong></p>
              ${pending.messages.map((m) => html`<p class="message">${m}</p>`)}
            </section>`
          : ''
      }
      ${errorSummary(t, errors, pending.fields)}
      <form method="post" action="${base}/data-update" class="card" novalidate>
        ${csrfField(req.csrf)}
        <p class="hint">${account.email} · ${student.name}</p>
        ${studentFieldInputs({ t, lang, fields: pending.fields, values: answer?.values ?? studentFieldValues(student, pending.fields), errors, clubs: school.clubs.all })}
        <div class="actions">
          <button type="submit" class="primary">${t.dataUpdate.submit}</button>
          <button type="submit" class="secondary" formaction="${base}/abort" formnovalidate>${t.login.cancel}</button>
        </div>
      </form>`,
    status,
  );
}

/** POST …/:uid/data-update: the answer, written with the student as the actor; then the sign-in goes on to the app. */
const submitDataUpdate: Step = async (req, deps, interaction) => {
  if (interaction.prompt.name !== DATA_UPDATE_PROMPT) throw new LoginExpired();
  const accountId = Number(interaction.session?.accountId);
  const values = Object.fromEntries(
    Object.entries(req.form).flatMap(([name, value]) =>
      name === 'csrf' ? [] : [[name, typeof value === 'string' ? value : (value[0] ?? '')]],
    ),
  );
  const outcome = await deps.dataUpdates.answer({ accountId, values, lang: req.lang, clock: { timeZone: deps.timeZone, now: deps.now } });
  if (!outcome.ok) return dataUpdateStep(req, deps, interaction, { values, errors: outcome.problems }, 422);
  req.ctx.state.log.info({ event: 'login.data_updated', accountId, batchId: outcome.batchId }, 'data update answered at sign-in');
  return finish(req.ctx, deps.provider, {}, true);
};

/** Who made the app: the school (an operator's registration) or an account, and whether it is still in testing. */
interface Maker {
  readonly ownerId: number | null;
  readonly ownerEmail: string | null;
  readonly ownerIsStudent: boolean;
  readonly testing: boolean;
}

async function makerOf(deps: LoginDeps, interaction: Interaction): Promise<Maker> {
  const clientId = String(interaction.params['client_id'] ?? '');
  const app = await deps.clients.get(clientId).catch(() => undefined);
  if (!app) throw new LoginExpired();
  const owner = app.ownerAccountId == null ? null : await deps.accounts.findById(app.ownerAccountId);
  return {
    ownerId: app.ownerAccountId,
    ownerEmail: owner?.email ?? null,
    ownerIsStudent: owner ? (await deps.accounts.summarize(owner)).isStudent : false,
    testing: app.state === 'testing',
  };
}

/**
 * Whether the app admits the signed-in account now (src/auth/policy.ts appAdmits): a testing app
 * only its owner. The provider asks it at every authorization (APP_ADMISSION_PROMPT); the consent
 * page asks again, as the app may have gone back to testing since the prompt was chosen.
 */
async function admitted(deps: LoginDeps, interaction: Interaction): Promise<boolean> {
  const app = await deps.clients.standing(String(interaction.params['client_id'] ?? ''));
  return app !== undefined && appAdmits(app, Number(interaction.session?.accountId));
}

/** A testing app refuses everyone but its owner: a page, 403, nothing granted (docs/oauth.md, "The app registry"). */
function awaitingApproval(req: PageRequest, names: ClientNames): Outcome {
  const { t } = req;
  return page(t.consent.awaitingTitle, html`<p role="alert">${t.consent.awaiting(names.serviceName ?? names.clientName)}</p>`, 403);
}

const loginFields = z.object({ email: text(), password: text({ trim: false }), remember: ticked() });
type LoginFields = z.infer<typeof loginFields>;

/**
 * POST …/:uid/login: the password, behind the login throttle (src/oauth/throttle.ts). The
 * throttle decides before the interaction is read: a refusal (this address spent its failures on
 * the account, or the account is soft-locked) is answered from memory, without a database
 * operation or a password check, so a flood of guesses cannot take the machine from the people
 * signing in. A refused address gets exactly the wrong password's answer; a soft-locked account
 * gets the same page whatever the password was, offering a code mailed to its owner.
 */
async function submitLogin(req: PageRequest, deps: LoginDeps): Promise<Outcome> {
  const { t, ctx } = req;
  const form = loginFields.parse(req.form);
  const again = (names: ClientNames, status: number, message: string, field: 'email' | 'password' = 'password') =>
    loginForm(req, deps, names, { email: form.email.slice(0, MAX_EMAIL_LENGTH), remember: form.remember }, [{ field, message }], status);
  // A form to fill in again, within the interaction (which must still be there).
  const refuseForm = (message: string, field: 'email' | 'password') =>
    loginStep(async (_req, _deps, interaction) => again(await clientNamesOf(deps.provider, interaction), 400, message, field))(req, deps);
  // The problem shows at the field to fill in again: the email when it is missing or wrong, else the password.
  if (!form.email || !form.password) return refuseForm(t.login.missing, form.email ? 'password' : 'email');
  // No account has a longer email; refused before any pattern or budget looks at it.
  if (form.email.length > MAX_EMAIL_LENGTH) return refuseForm(t.login.emailTooLong, 'email');
  const decision = await deps.throttle.reserve(form.email, ctx.ip);
  if (decision.kind !== 'check') deps.countAttempt(decision.kind);
  if (decision.kind === 'unchecked') {
    ctx.state.log.warn({ event: 'login.throttled' }, 'login refused unchecked: too many failed attempts from this address');
    return again(await namesOf(req, deps), 401, t.login.invalid);
  }
  if (decision.kind === 'locked') {
    ctx.state.log.warn({ event: 'login.locked', lockStarted: decision.lockStarted }, 'login refused: the account is soft-locked');
    // The owner is mailed a code once, when the lock starts (the page can ask for another).
    if (decision.lockStarted) await mailSignInCode(req, deps, form.email);
    ctx.set('Retry-After', String(decision.retryAfterSeconds));
    return lockedPage(req, await namesOf(req, deps), form.email, decision.retryAfterSeconds, [], 429);
  }
  let settled = false;
  try {
    return await loginStep(async (r, d, interaction) => {
      if (interaction.prompt.name !== 'login') throw new LoginExpired();
      if (decision.delayMs > 0) {
        // Many recent failures on this account (from anywhere): the attempt waits, and is still checked.
        ctx.state.log.info({ event: 'login.delayed', delayMs: decision.delayMs }, 'login slowed: many failed attempts');
        await sleep(decision.delayMs);
      }
      const account = await deps.accounts.verifyLogin(form.email, form.password);
      settled = true;
      deps.countAttempt(account ? 'succeeded' : 'failed');
      await decision.settle(account ? 'succeeded' : 'failed');
      if (!account) return failedPassword(req, deps, await clientNamesOf(deps.provider, interaction), form, decision.slowFailure);
      return passwordRight(req, deps, interaction, account, form.remember, ['pwd']);
    })(req, deps);
  } finally {
    // The interaction was gone before the password was checked: the attempt spent nothing.
    if (!settled) await decision.settle('unused');
  }
}

/** A wrong password: 401; from an address past its failure budget on any accounts, 429 after a pause. */
async function failedPassword(
  req: PageRequest,
  deps: LoginDeps,
  names: ClientNames,
  form: LoginFields,
  slow: { delayMs: number; retryAfterSeconds: number } | null,
): Promise<Outcome> {
  const { t, ctx } = req;
  const answer = (status: number, message: string) =>
    loginForm(
      req,
      deps,
      names,
      { email: form.email.slice(0, MAX_EMAIL_LENGTH), remember: form.remember },
      [{ field: 'password', message }],
      status,
    );
  if (slow) {
    await sleep(slow.delayMs);
    ctx.set('Retry-After', String(slow.retryAfterSeconds));
    ctx.state.log.warn({ event: 'login.throttled' }, 'login failed from an address past its failure budget');
    return answer(429, t.login.throttled(Math.max(1, Math.ceil(slow.retryAfterSeconds / 60))));
  }
  ctx.state.log.info({ event: 'login.failed' }, 'login failed');
  return answer(401, t.login.invalid);
}

/**
 * The account proved (a right password, or a mailed sign-in code): a disabled one is told why it
 * cannot go on; one with a second factor is asked for it; else the sign-in ends here.
 */
async function passwordRight(
  req: PageRequest,
  deps: LoginDeps,
  interaction: Interaction,
  account: AccountDoc,
  remember: boolean,
  amr: string[],
): Promise<Outcome> {
  const { t, ctx } = req;
  const names = await clientNamesOf(deps.provider, interaction);
  // The right password of a disabled account is told why it cannot go on, and whom to ask.
  if (account.disabledAt) {
    ctx.state.log.info({ event: 'login.disabled', accountId: account._id }, 'login refused: the account is disabled');
    return loginForm(
      req,
      deps,
      names,
      { email: account.email, remember },
      [{ field: 'password', message: t.login.disabled(deps.helpContact) }],
      403,
    );
  }
  // Its second factors, from the account as this process remembers it (the check above just read it):
  // an enrolled TOTP app, and a passkey where the role needs a factor (src/auth/policy.ts, secondStep).
  const known = await deps.accounts.known(account._id);
  if (!known) throw new LoginExpired();
  const step = secondStep(standingOf(known.doc, known), deps.policy);
  if (step) {
    // The sign-in ends only with the second factor.
    writeSecondFactor(ctx, deps, {
      uid: interaction.uid,
      accountId: account._id,
      remember,
      expiresAt: deps.now().getTime() + SECOND_FACTOR_LIFETIME_MS,
    });
    ctx.state.log.info({ event: 'login.password_ok', accountId: account._id }, 'password right; second factor asked');
    return secondStepPage(req, deps, account._id, false, []);
  }
  ctx.state.log.info({ event: 'login.succeeded', accountId: account._id, remember }, 'login succeeded');
  // Not remembered: a transient session, whose cookie ends with the browser (src/oauth/provider.ts, sessionTtl).
  return finish(ctx, deps.provider, { login: { accountId: String(account._id), remember, amr } }, false);
}

/** Mails a sign-in code to a soft-locked account's owner; spent code budgets only mean no mail now. */
async function mailSignInCode(req: PageRequest, deps: LoginDeps, email: string): Promise<boolean> {
  try {
    await deps.selfService.requestSignInCode(email, req.ctx.ip);
    return true;
  } catch (err) {
    if (err instanceof SelfServiceError && err.status === 429) return false;
    throw err;
  }
}

/** The soft lock's page: the same whatever the password was, with the form for the mailed code. */
function lockedPage(
  req: PageRequest,
  names: ClientNames,
  email: string,
  retryAfterSeconds: number,
  errors: FieldError[],
  status: number,
  notice?: string,
): Outcome {
  const { t } = req;
  const base = `${OAUTH_PATHS.interaction}/${req.param('uid')}`;
  const back = new URLSearchParams({ return: base }).toString();
  return page(
    t.login.lockedTitle,
    html`<p role="alert">${t.login.locked(Math.max(1, Math.ceil(retryAfterSeconds / 60)))}</p>
      ${names.serviceName ? html`<p class="hint">${t.login.appOf(names.clientName)}</p>` : ''}
      ${notice ? html`<p class="notice" role="status">${notice}</p>` : ''} ${errorSummary(t, errors)}
      <form method="post" action="${base}/sign-in-code" class="card" novalidate>
        ${csrfField(req.csrf)}
        <input type="hidden" name="email" value="${email}" />
        <p class="hint">${email}</p>
        ${field({ name: 'code', label: t.login.code, inputmode: 'numeric', autocomplete: 'one-time-code', required: true, maxlength: 8, autofocus: true, errors })}
        <div class="actions">
          <button type="submit" class="primary">${t.login.codeSubmit}</button>
          <button type="submit" class="secondary" formaction="${base}/sign-in-code/send" formnovalidate>${t.login.codeAgain}</button>
        </div>
      </form>
      <p class="links"><a href="${ACCOUNT_PATHS.resetPage}?${back}">${t.login.forgot}</a></p>`,
    status,
  );
}

const codeFields = z.object({ email: text(), code: text(), remember: ticked() });

/** POST …/:uid/sign-in-code: the code mailed to a soft-locked account's owner signs it in (the second factor still follows). */
const submitSignInCode: Step = async (req, deps, interaction) => {
  if (interaction.prompt.name !== 'login') throw new LoginExpired();
  const { t, ctx } = req;
  const form = codeFields.parse(req.form);
  const email = form.email.slice(0, MAX_EMAIL_LENGTH);
  const names = await clientNamesOf(deps.provider, interaction);
  let account: AccountDoc;
  try {
    account = await deps.selfService.signInWithCode({ email, code: form.code.slice(0, 20) }, ctx.ip);
  } catch (err) {
    if (!(err instanceof SelfServiceError)) throw err;
    if (err.status === 429) ctx.set('Retry-After', err.headers['Retry-After'] ?? '60');
    const minutes = Math.max(1, Math.ceil(Number(err.headers['Retry-After'] ?? 60) / 60));
    const message = err.status === 429 ? t.login.codeThrottled(minutes) : t.login.codeWrong;
    ctx.state.log.info({ event: 'login.code_failed' }, 'sign-in code refused');
    return lockedPage(req, names, email, 60, [{ field: 'code', message }], err.status === 429 ? 429 : 401);
  }
  ctx.state.log.info({ event: 'login.code_ok', accountId: account._id }, 'signed in with a mailed code');
  // RFC 8176 "otp": a one-time code proved the mailbox.
  return passwordRight(req, deps, interaction, account, form.remember, ['otp']);
};

/** POST …/:uid/sign-in-code/send: another code for a soft-locked account (the self-service code budgets apply). */
const sendSignInCode: Step = async (req, deps, interaction) => {
  if (interaction.prompt.name !== 'login') throw new LoginExpired();
  const { t } = req;
  const email = codeFields.parse(req.form).email.slice(0, MAX_EMAIL_LENGTH);
  const names = await clientNamesOf(deps.provider, interaction);
  if (!(await mailSignInCode(req, deps, email)))
    return lockedPage(req, names, email, 60, [{ field: 'code', message: t.login.codeThrottled(10) }], 429);
  return lockedPage(req, names, email, 60, [], 200, t.login.codeSent);
};

/** GET …/:uid/second-factor[?recovery=1]: the second-factor form again (the app's code, or a recovery code). */
const showSecondFactor: Step = async (req, deps, interaction) => {
  const pending = interaction.prompt.name === 'login' ? readSecondFactor(req.ctx, deps, interaction.uid) : undefined;
  if (!pending) throw new LoginExpired();
  return secondStepPage(req, deps, pending.accountId, req.query('recovery') === '1', []);
};

/** POST …/:uid/second-factor: a 6-digit code from the app or a recovery code ends the sign-in. */
const submitSecondFactor: Step = async (req, deps, interaction) => {
  const { t, ctx } = req;
  const pending = interaction.prompt.name === 'login' ? readSecondFactor(ctx, deps, interaction.uid) : undefined;
  if (!pending) throw new LoginExpired();
  const form = z.object({ code: text(), recovery: text() }).parse(req.form);
  const recovery = form.recovery === '1';
  const again = (message: string, status: number) =>
    secondStepPage(req, deps, pending.accountId, recovery, [{ field: 'code', message }], status);
  if (!form.code) return again(t.mfa.missing, 400);
  let proven: Awaited<ReturnType<MfaService['verify']>>;
  try {
    proven = await deps.mfa.verify(pending.accountId, form.code.slice(0, 40));
  } catch (err) {
    if (!(err instanceof MfaLimited)) throw err;
    ctx.set('Retry-After', String(err.retryAfterSeconds));
    ctx.state.log.warn(
      { event: 'login.second_factor_throttled', accountId: pending.accountId },
      'second factor refused: too many wrong codes',
    );
    return again(t.mfa.throttled(Math.max(1, Math.ceil(err.retryAfterSeconds / 60))), 429);
  }
  if (!proven) {
    ctx.state.log.info({ event: 'login.second_factor_failed', accountId: pending.accountId }, 'wrong second factor');
    return again(recovery ? t.mfa.wrongRecovery : t.mfa.wrong, 401);
  }
  clearSecondFactor(ctx, deps);
  ctx.state.log.info(
    { event: 'login.succeeded', accountId: pending.accountId, remember: pending.remember, secondFactor: proven },
    'login succeeded with a second factor',
  );
  // RFC 8176 method references: password, one-time password (a recovery code is one too), more than one factor.
  const amr = proven === 'totp' ? ['pwd', 'otp', 'mfa'] : ['pwd', 'mfa'];
  return finish(ctx, deps.provider, { login: { accountId: String(pending.accountId), remember: pending.remember, amr } }, false);
};

/** POST …/:uid/passkey/options: the options of the browser's passkey ceremony (JSON, for web/assets/passkeys.js). */
const passkeyOptions: Step = async (req, deps, interaction) => {
  if (interaction.prompt.name !== 'login' || deps.passkeys.relyingParty === null) throw new LoginExpired();
  // The second step after a right password asks for that account's passkey; otherwise any of ours.
  const pending = readSecondFactor(req.ctx, deps, interaction.uid);
  return json(await deps.passkeys.signInOptions(interaction.uid, pending?.accountId ?? null));
};

const passkeyFields = z.object({ response: text({ trim: false }), remember: ticked() });

/** The status of each refusal of a passkey. */
const PASSKEY_REFUSAL_STATUS: Readonly<Record<PasskeyProblem, number>> = {
  unavailable: 404,
  expired: 400,
  invalid: 401,
  unknown: 401,
  cloned: 403,
  limit: 422,
  duplicate: 409,
};

/**
 * POST …/:uid/passkey: the browser's answer signs its account in as a right password does (the
 * consent, the data update and the code follow), with no password and no further step: a passkey
 * with user verification is multi-factor. As the second step, it ends the password's sign-in.
 */
const submitPasskey: Step = async (req, deps, interaction) => {
  const { t, ctx } = req;
  if (interaction.prompt.name !== 'login') throw new LoginExpired();
  const form = passkeyFields.parse(req.form);
  const pending = readSecondFactor(ctx, deps, interaction.uid);
  let accountId: number;
  try {
    ({ accountId } = await deps.passkeys.signIn(interaction.uid, form.response));
  } catch (err) {
    if (!(err instanceof PasskeyRefused)) throw err;
    const cloned = err.problem === 'cloned';
    ctx.state.log[cloned ? 'warn' : 'info'](
      { event: cloned ? 'login.passkey_cloned' : 'login.passkey_failed', problem: err.problem, accountId: pending?.accountId },
      err.message,
    );
    const errors = [{ field: 'passkey', message: passkeyProblem(t.passkeys, err.problem) }];
    const status = PASSKEY_REFUSAL_STATUS[err.problem];
    if (pending) return secondStepPage(req, deps, pending.accountId, false, errors, status);
    return loginForm(req, deps, await clientNamesOf(deps.provider, interaction), { email: '', remember: form.remember }, errors, status);
  }
  // The password typed before counts only for its own account (a passkey of another is a sign-in of its own).
  const step = pending?.accountId === accountId ? pending : undefined;
  const remember = step ? step.remember : form.remember;
  const account = await deps.accounts.known(accountId);
  if (!account) throw new LoginExpired();
  if (account.doc.disabledAt) {
    ctx.state.log.info({ event: 'login.disabled', accountId }, 'login refused: the account is disabled');
    const names = await clientNamesOf(deps.provider, interaction);
    return loginForm(
      req,
      deps,
      names,
      { email: account.doc.email, remember },
      [{ field: 'passkey', message: t.login.disabled(deps.helpContact) }],
      403,
    );
  }
  if (pending) clearSecondFactor(ctx, deps);
  ctx.state.log.info({ event: 'login.succeeded', accountId, remember, passkey: true }, 'login succeeded with a passkey');
  // RFC 8176: the passkey's key, with user verification more than one factor; the password before it when it was the second step.
  const amr = step ? ['pwd', PASSKEY_AMR, 'mfa'] : [PASSKEY_AMR, 'mfa'];
  return finish(ctx, deps.provider, { login: { accountId: String(accountId), remember, amr } }, false);
};

function writeSecondFactor(ctx: AppContext, deps: LoginDeps, state: SecondFactorState): void {
  ctx.cookies.set(cookieName(SECOND_FACTOR_COOKIE, deps.secure), deps.sealer.seal(state), {
    httpOnly: true,
    sameSite: 'lax',
    secure: deps.secure,
    path: '/',
    overwrite: true,
  });
}

function readSecondFactor(ctx: AppContext, deps: LoginDeps, uid: string): SecondFactorState | undefined {
  const parsed = secondFactorState.safeParse(deps.sealer.open(ctx.cookies.get(cookieName(SECOND_FACTOR_COOKIE, deps.secure))));
  if (!parsed.success || parsed.data.uid !== uid || parsed.data.expiresAt <= deps.now().getTime()) return undefined;
  return parsed.data;
}

function clearSecondFactor(ctx: AppContext, deps: LoginDeps): void {
  ctx.cookies.set(cookieName(SECOND_FACTOR_COOKIE, deps.secure), '', {
    httpOnly: true,
    sameSite: 'lax',
    secure: deps.secure,
    path: '/',
    maxAge: 0,
    overwrite: true,
  });
}

/**
 * The second step of a password sign-in (src/auth/policy.ts, secondStep): the TOTP app's code (or
 * a recovery code), with the account's passkey as another way; or, for an account whose role needs
 * a factor and that has only passkeys, its passkey.
 */
async function secondStepPage(
  req: PageRequest,
  deps: LoginDeps,
  accountId: number,
  recovery: boolean,
  errors: FieldError[],
  status = 200,
): Promise<Outcome> {
  const known = await deps.accounts.known(accountId);
  if (!known) throw new LoginExpired();
  const passkey = known.passkey && deps.passkeys.relyingParty !== null;
  if (!known.secondFactor && passkey) return passkeyStepPage(req, errors, status);
  return secondFactorForm(req, recovery, errors, status, passkey);
}

/** The second step with only a passkey: its button (the page's script), and a way out. */
function passkeyStepPage(req: PageRequest, errors: FieldError[], status: number): Outcome {
  const { t } = req;
  const base = `${OAUTH_PATHS.interaction}/${req.param('uid')}`;
  return page(
    t.passkeys.stepTitle,
    html`<p>${t.passkeys.stepIntro}</p>
      ${errorSummary(t, errors)} ${passkeyOffer(req, { label: t.passkeys.stepUse, or: false, primary: true })}
      <p class="notice" data-passkey-unsupported>${t.passkeys.unsupported}</p>
      <form method="post" action="${base}/abort">
        ${csrfField(req.csrf)}
        <div class="actions"><button type="submit" class="secondary">${t.login.cancel}</button></div>
      </form>`,
    status,
  );
}

/** The second step of a sign-in with two-step sign-in on: the app's 6-digit code, or (`recovery`) a recovery code. */
function secondFactorForm(req: PageRequest, recovery: boolean, errors: FieldError[], status = 200, passkey = false): Outcome {
  const { t } = req;
  const base = `${OAUTH_PATHS.interaction}/${req.param('uid')}`;
  return page(
    recovery ? t.mfa.recoveryTitle : t.mfa.title,
    html`<p>${recovery ? t.mfa.recoveryIntro : t.mfa.intro}</p>
      ${errorSummary(t, errors)}
      <form method="post" action="${base}/second-factor" class="card" novalidate>
        ${csrfField(req.csrf)}
        <input type="hidden" name="recovery" value="${recovery ? '1' : ''}" />
        ${
          recovery
            ? field({
                name: 'code',
                label: t.mfa.recoveryCode,
                hint: t.mfa.recoveryHint,
                autocomplete: 'off',
                required: true,
                maxlength: 40,
                autofocus: true,
                errors,
              })
            : field({
                name: 'code',
                label: t.mfa.code,
                inputmode: 'numeric',
                autocomplete: 'one-time-code',
                required: true,
                maxlength: 6,
                autofocus: true,
                errors,
              })
        }
        <div class="actions">
          <button type="submit" class="primary">${t.mfa.submit}</button>
          <button type="submit" class="secondary" formaction="${base}/abort" formnovalidate>${t.login.cancel}</button>
        </div>
      </form>
      <p class="links">
        <a href="${base}/second-factor${recovery ? '' : '?recovery=1'}">${recovery ? t.mfa.useApp : t.mfa.useRecovery}</a>
      </p>
      ${passkey ? passkeyOffer(req, { label: t.passkeys.stepUse, hint: t.passkeys.stepInstead, or: true }) : ''}`,
    status,
  );
}

const submitConsent: Step = async (req, deps, interaction) => {
  if (interaction.prompt.name !== 'consent') throw new LoginExpired();
  if (!(await admitted(deps, interaction))) return awaitingApproval(req, await clientNamesOf(deps.provider, interaction));
  if (req.form['decision'] !== 'allow')
    return finish(req.ctx, deps.provider, { error: 'access_denied', error_description: 'the user denied the request' }, false);
  const grantId = await grantRequested(deps.provider, interaction);
  return finish(req.ctx, deps.provider, { consent: interaction.grantId ? {} : { grantId } }, true);
};

const abort: Step = async (req, deps) =>
  finish(req.ctx, deps.provider, { error: 'access_denied', error_description: 'the user cancelled the sign-in' }, false);

interface ClientNames {
  readonly clientName: string;
  /** The service the app registered for the login page (src/oauth/apps.ts); the app's name is shown beside it. */
  readonly serviceName: string | undefined;
}

/** The login form: labelled fields, the first field (or the error) focused, no script needed. */
function loginForm(
  req: PageRequest,
  deps: LoginDeps,
  names: ClientNames,
  values: { email: string; remember: boolean },
  errors: FieldError[],
  status = 200,
): Outcome {
  const { t } = req;
  const base = `${OAUTH_PATHS.interaction}/${req.param('uid')}`;
  // The sign-up and reset pages send the person back to this login page when they are done.
  const back = new URLSearchParams({ return: base }).toString();
  return page(
    t.login.title,
    html`<p>${t.login.intro(names.serviceName ?? names.clientName)}</p>
      ${names.serviceName ? html`<p class="hint">${t.login.appOf(names.clientName)}</p>` : ''} ${errorSummary(t, errors)}
      <form method="post" action="${base}/login" class="card" novalidate>
        ${csrfField(req.csrf)}
        ${field({ name: 'email', label: t.login.email, type: 'email', value: values.email, autocomplete: 'username', required: true, maxlength: MAX_EMAIL_LENGTH, autofocus: !values.email, errors })}
        ${field({ name: 'password', label: t.login.password, type: 'password', autocomplete: 'current-password', required: true, maxlength: 1024, autofocus: Boolean(values.email), errors })}
        <label class="check" for="remember"
          ><input
            id="remember"
            name="remember"
            type="checkbox"
            value="yes"
            aria-describedby="remember-hint"
            ${values.remember ? html`checked` : ''}
          />
          <span>${t.login.remember}</span></label
        >
        <p id="remember-hint" class="hint">${t.login.rememberHint}</p>
        <div class="actions">
          <button type="submit" class="primary">${t.login.submit}</button>
          <button type="submit" class="secondary" formaction="${base}/abort" formnovalidate>${t.login.cancel}</button>
        </div>
      </form>
      ${
        deps.passkeys.relyingParty
          ? passkeyOffer(req, {
              label: t.passkeys.signIn,
              hint: t.passkeys.signInHint,
              or: true,
              // Right after a passkey was refused, the email field does not suggest it again (the button still offers it).
              ...(errors.some((e) => e.field === 'passkey') ? {} : { autofill: 'f-email' }),
            })
          : ''
      }
      <p class="links">
        ${t.login.noAccount} <a href="${ACCOUNT_PATHS.signUpPage}?${back}">${t.login.signUp}</a><br />
        <a href="${ACCOUNT_PATHS.resetPage}?${back}">${t.login.forgot}</a>
      </p>`,
    status,
  );
}

/**
 * The passkey's way in, for the page's script (web/assets/passkeys.js): hidden until the script
 * finds WebAuthn in the browser, so the page is unchanged without it. The script asks for the
 * options (…/passkey/options), runs the browser's ceremony (on the button, or, with `autofill`,
 * from the email field's suggestions: conditional mediation), and posts the answer in this form.
 */
function passkeyOffer(req: PageRequest, o: { label: string; hint?: string; or: boolean; primary?: boolean; autofill?: string }): Html {
  const { t } = req;
  const base = `${OAUTH_PATHS.interaction}/${req.param('uid')}`;
  return html`<div class="passkey" data-passkey-offer hidden>
      ${o.or ? html`<p class="or"><span>${t.passkeys.or}</span></p>` : ''}
      <form
        method="post"
        action="${base}/passkey"
        data-passkey="get"
        data-options="${base}/passkey/options"
        ${o.autofill ? html`data-autofill="${o.autofill}"` : ''}
        data-working="${t.passkeys.working}"
        data-cancelled="${t.passkeys.cancelled}"
      >
        ${csrfField(req.csrf)}
        <input type="hidden" name="response" value="" />
        <input type="hidden" name="remember" value="" />
        <button type="button" class="${o.primary ? 'primary' : 'secondary'} passkey-button" id="f-passkey" data-passkey-start>
          ${o.label}
        </button>
        ${o.hint ? html`<p class="hint">${o.hint}</p>` : ''}
        <p class="hint" role="status" data-passkey-status></p>
      </form>
    </div>
    ${passkeyScripts()}`;
}

/**
 * The consent page: who made the app (the school, or which account), each requested scope in
 * words with every field the app will receive (src/oauth/login-scopes.ts, the table userinfo
 * releases by), Allow / Deny.
 */
function consentForm(req: PageRequest, names: ClientNames, email: string, scopes: readonly string[], maker: Maker): Outcome {
  const { t } = req;
  const en = t.locale === 'en-US';
  const base = `${OAUTH_PATHS.interaction}/${req.param('uid')}`;
  const items: Html[] = scopes.map((scope) => {
    const fields = loginScope(scope)?.shown ?? [];
    return html`<li>
      <strong>${t.consent.scopes[scope] ?? scope}</strong> <code>${scope}</code>
      ${
        fields.length > 0
          ? html`<ul class="fields" aria-label="${t.consent.fieldsOf(scope)}">
              ${fields.map((f) => html`<li data-field="${f.key}">${en ? f.en : f.ko}</li>`)}
            </ul>`
          : ''
      }
    </li>`;
  });
  return page(
    t.consent.title,
    html`<p>${t.consent.intro(names.serviceName ?? names.clientName, email)}</p>
      ${names.serviceName ? html`<p class="hint">${t.login.appOf(names.clientName)}</p>` : ''}
      <p class="notice" data-maker="${maker.ownerId === null ? 'school' : 'account'}">
        ${maker.ownerId === null ? t.consent.school : t.consent.madeBy(maker.ownerEmail ?? '—', maker.ownerIsStudent)}
      </p>
      ${maker.testing ? html`<p class="notice">${t.consent.testing}</p>` : ''}
      <p class="hint" data-field="${SUB_FIELD.key}">${t.consent.always(en ? SUB_FIELD.en : SUB_FIELD.ko)}</p>
      <ul class="scopes">
        ${items}
      </ul>
      <form method="post" action="${base}/confirm">
        ${csrfField(req.csrf)}
        <div class="actions">
          <button type="submit" class="primary" name="decision" value="allow" autofocus>${t.consent.allow}</button>
          <button type="submit" class="secondary" name="decision" value="deny">${t.consent.deny}</button>
        </div>
      </form>
      <p>${t.consent.notYou(email)} <a href="${OAUTH_PATHS.logout}?ui_locales=${req.lang}">${t.consent.signOut}</a></p>`,
  );
}

/** Adds the scopes the consent page listed to the grant (existing or new) and saves it. */
async function grantRequested(provider: Provider, interaction: Interaction): Promise<string> {
  const accountId = interaction.session?.accountId;
  const clientId = interaction.params['client_id'];
  if (!accountId || typeof clientId !== 'string') throw new LoginExpired();
  const existing = interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined;
  const grant = existing ?? new provider.Grant({ accountId, clientId });
  const { missingOIDCScope, missingResourceScopes } = missingScopes(interaction);
  if (missingOIDCScope.length > 0) grant.addOIDCScope(missingOIDCScope.join(' '));
  for (const [indicator, scopes] of Object.entries(missingResourceScopes)) grant.addResourceScope(indicator, scopes.join(' '));
  return grant.save();
}

/** Hands the result to the provider, which answers 303 to the authorization endpoint itself. */
async function finish(
  ctx: AppContext,
  provider: Provider,
  result: Parameters<Provider['interactionFinished']>[2],
  merge: boolean,
): Promise<Outcome> {
  await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: merge });
  ctx.respond = false;
  return SENT;
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

/**
 * The names of each interaction's app, remembered per process by interaction id: an interaction's
 * app never changes, so a refusal can render its page without reading the interaction.
 */
const namesByInteraction = new LRUCache<string, ClientNames>({ max: 10_000, ttl: 60 * 60 * 1000 });

/** The app's name, and the service it registered for the login page (src/oauth/apps.ts). */
async function clientNamesOf(provider: Provider, interaction: Interaction): Promise<ClientNames> {
  const clientId = String(interaction.params['client_id'] ?? '');
  const client = await provider.Client.find(clientId);
  const serviceName = client?.[SERVICE_NAME];
  const names = { clientName: client?.clientName ?? clientId, serviceName: typeof serviceName === 'string' ? serviceName : undefined };
  namesByInteraction.set(interaction.uid, names);
  return names;
}

/** The names of the request's interaction: remembered when this process showed its page, else read. */
async function namesOf(req: PageRequest, deps: LoginDeps): Promise<ClientNames> {
  return namesByInteraction.get(req.param('uid')) ?? clientNamesOf(deps.provider, await interactionOf(req.ctx, deps.provider));
}

/**
 * The login, consent and cancel pages of oidc-provider's interactions:
 *   GET  /v1/oauth/interaction/:uid          the login or consent page
 *   POST /v1/oauth/interaction/:uid/login    email + password
 *   POST /v1/oauth/interaction/:uid/sign-in-code[/send]  a soft-locked account's mailed code (or another one)
 *   GET|POST /v1/oauth/interaction/:uid/second-factor  the second step: the app's code, or a recovery code
 *   POST /v1/oauth/interaction/:uid/passkey[/options]  a passkey: its ceremony's options (JSON), then its answer
 *   POST /v1/oauth/interaction/:uid/confirm  allow or deny the requested scopes
 *   POST /v1/oauth/interaction/:uid/data-update  the details the school asked the student to check
 *   POST /v1/oauth/interaction/:uid/abort    cancel the sign-in
 * In the app's language when it asked for one (ui_locales, or lang) and the person chose none.
 */
export const loginRoutes: RouteTable<LoginDeps> = {
  access: 'anyone',
  csrf: interactionForms,
  // Each request reads its interaction once and saves it as one known to exist (src/oauth/adapter.ts).
  frame: withInteractionMemo,
  narrow: true,
  oauth: true,
  prefix: OAUTH_PATHS.interaction,
  langHints: async (ctx, deps) => {
    const interaction = await interactionOf(ctx, deps.provider).catch(() => undefined);
    return [interaction?.params['ui_locales'], interaction?.params['lang']];
  },
  routes: [
    { method: 'GET', path: `${OAUTH_PATHS.interaction}/:uid`, handler: loginStep(showInteraction) },
    { method: 'POST', path: `${OAUTH_PATHS.interaction}/:uid/login`, handler: submitLogin },
    { method: 'POST', path: `${OAUTH_PATHS.interaction}/:uid/sign-in-code`, handler: loginStep(submitSignInCode) },
    { method: 'POST', path: `${OAUTH_PATHS.interaction}/:uid/sign-in-code/send`, handler: loginStep(sendSignInCode) },
    { method: 'GET', path: `${OAUTH_PATHS.interaction}/:uid/second-factor`, handler: loginStep(showSecondFactor) },
    { method: 'POST', path: `${OAUTH_PATHS.interaction}/:uid/second-factor`, handler: loginStep(submitSecondFactor) },
    { method: 'POST', path: `${OAUTH_PATHS.interaction}/:uid/passkey/options`, handler: loginStep(passkeyOptions) },
    { method: 'POST', path: `${OAUTH_PATHS.interaction}/:uid/passkey`, handler: loginStep(submitPasskey) },
    { method: 'POST', path: `${OAUTH_PATHS.interaction}/:uid/confirm`, handler: loginStep(submitConsent) },
    { method: 'POST', path: `${OAUTH_PATHS.interaction}/:uid/data-update`, handler: loginStep(submitDataUpdate) },
    { method: 'POST', path: `${OAUTH_PATHS.interaction}/:uid/abort`, handler: loginStep(abort) },
  ],
};
