import { z } from 'zod';
import { hasAcceptedFactor, needsPasskey, needsSecondFactor } from '../../auth/policy.js';
import { NotFoundError } from '../../errors/index.js';
import { ACCOUNT_PATHS } from '../../oauth/constants.js';
import { MfaLimited } from '../../oauth/second-factor.js';
import { SelfServiceError } from '../../oauth/self-service.js';
import { choices, csrfField, errorSummary, facts, field, type FieldError } from '../web/components.js';
import { text, ticked } from '../web/forms.js';
import { html } from '../web/html.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import { WEB_CLIENT_ID } from '../web/signin.js';
import { WEB_PATHS } from '../web/web.js';
import type { ConsoleDeps } from './deps.js';
import { passkeySection } from './passkeys.js';
import { refusal } from './refusal.js';

const accountOf = (req: PageRequest) => req.account?.accountId ?? 0;

/** My account: the account's facts, change password, sign out everywhere, delete the account. */
async function accountPage(
  req: PageRequest,
  deps: ConsoleDeps,
  errors: { password?: FieldError[]; delete?: FieldError[]; mfa?: FieldError[] } = {},
  status = 200,
): Promise<Outcome> {
  const { t } = req;
  const a = t.console.account;
  const doc = await deps.accounts.findById(accountOf(req));
  if (!doc) throw new NotFoundError('No such account.');
  const account = await deps.accounts.summarize(doc);
  const mfa = await deps.mfa.status(doc._id);
  const passkeys = await passkeySection(req, deps);
  const passwordErrors = errors.password ?? [];
  const mfaErrors = errors.mfa ?? [];
  const deleteErrors = errors.delete ?? [];
  return page(
    a.title,
    html`<div class="card">
        ${facts([
          [a.email, account.email],
          [a.role, t.roles[account.role]],
          [a.student, account.isStudent ? a.linked : a.notLinked],
          ...(account.approval
            ? [[a.teacher, `${account.name ?? ''} · ${account.department ?? ''} · ${a.approval[account.approval]}`] as const]
            : []),
        ])}
      </div>
      <section class="card" aria-labelledby="second-factor">
        <h2 id="second-factor">${t.mfa.section}</h2>
        ${
          mfa.active
            ? html`<p role="status">${t.mfa.on(mfa.recoveryLeft)}</p>`
            : html`${
                  needsFactor(req, deps) && !needsPasskey(account.role, deps.config.policy)
                    ? html`<p class="notice" role="status">${t.mfa.neededForRole(t.roles[account.role])} ${t.passkeys.orPasskey}</p>`
                    : ''
                }
                <p class="hint">${t.mfa.offHint}</p>
                ${errorSummary(t, mfaErrors)}
                <form method="post" action="/console/account/second-factor" novalidate>
                  ${csrfField(req.csrf)}
                  <input type="hidden" name="username" value="${account.email}" autocomplete="username" />
                  ${field({ name: 'mfaPassword', label: a.currentPassword, type: 'password', required: true, autocomplete: 'current-password', hint: t.mfa.confirmPassword, errors: mfaErrors })}
                  <button type="submit">${t.mfa.start}</button>
                </form>`
        }
      </section>
      ${passkeys}
      <section class="card" aria-labelledby="password">
        <h2 id="password">${a.changePassword}</h2>
        <p class="hint">${a.changeHint}</p>
        ${errorSummary(t, passwordErrors)}
        <form method="post" action="/console/account/password" novalidate>
          ${csrfField(req.csrf)}
          <input type="hidden" name="username" value="${account.email}" autocomplete="username" />
          ${field({ name: 'currentPassword', label: a.currentPassword, type: 'password', required: true, autocomplete: 'current-password', errors: passwordErrors })}
          ${field({ name: 'password', label: a.newPassword, type: 'password', required: true, autocomplete: 'new-password', maxlength: 100, hint: t.accounts.passwordHint, errors: passwordErrors })}
          <div class="actions"><button type="submit">${a.changePassword}</button></div>
        </form>
      </section>
      <section class="card" aria-labelledby="everywhere">
        <h2 id="everywhere">${a.signOutAll}</h2>
        <p class="hint">${a.signOutAllHint}</p>
        <form method="post" action="/console/account/sign-out-everywhere">
          ${csrfField(req.csrf)}
          <button type="submit" class="secondary">${a.signOutAll}</button>
        </form>
      </section>
      <section class="card" aria-labelledby="delete">
        <h2 id="delete">${a.deleteTitle}</h2>
        <p class="hint">${a.deleteHint}</p>
        ${errorSummary(t, deleteErrors)}
        <form method="post" action="/console/account/delete" novalidate>
          ${csrfField(req.csrf)}
          ${field({ name: 'deletePassword', label: a.deletePassword, type: 'password', required: true, autocomplete: 'current-password', errors: deleteErrors })}
          ${choices({ name: 'confirm', legend: a.deleteTitle, type: 'checkbox', options: [{ value: 'yes', label: a.deleteConfirm }], checked: [], errors: deleteErrors })}
          <div class="actions"><button type="submit" class="danger">${a.deleteButton}</button></div>
        </form>
      </section>`,
    status,
  );
}

export const myAccount: Handler<ConsoleDeps> = async (req, deps) => accountPage(req, deps);

/** The enrolment page: the key for the authenticator app (text and otpauth:// link), then a code from it. */
function enrolPage(req: PageRequest, key: { secret: string; uri: string }, errors: FieldError[] = [], status = 200): Outcome {
  const { t } = req;
  const grouped = key.secret.match(/.{1,4}/g)?.join(' ') ?? key.secret;
  return page(
    t.mfa.enrolTitle,
    html`<section class="card">
      <p>${t.mfa.step1}</p>
      ${facts([[t.mfa.key, html`<code class="secret" translate="no">${grouped}</code>`]])}
      <p><a href="${key.uri}">${t.mfa.openInApp}</a></p>
      <p>${t.mfa.step2}</p>
      ${errorSummary(t, errors)}
      <form method="post" action="/console/account/second-factor/confirm" novalidate>
        ${csrfField(req.csrf)}
        ${field({ name: 'code', label: t.mfa.code, inputmode: 'numeric', autocomplete: 'one-time-code', required: true, maxlength: 6, autofocus: true, errors })}
        <div class="actions"><button type="submit" class="primary">${t.mfa.confirm}</button></div>
      </form>
    </section>`,
    status,
  );
}

/**
 * POST /console/account/second-factor: starts (or restarts) an enrolment, after the password is
 * typed again (a session left open on a shared computer must not be enough to tie the account to
 * someone else's phone); the factor is not asked until confirmed.
 */
export const startSecondFactor: Handler<ConsoleDeps> = async (req, deps) => {
  const doc = await deps.accounts.findById(accountOf(req));
  if (!doc) throw new NotFoundError('No such account.');
  // An active factor is replaced only by the operators' reset (`campus accounts mfa reset`).
  if ((await deps.mfa.status(doc._id)).active) return redirect('/console/account');
  const password = z.object({ mfaPassword: text({ trim: false }) }).parse(req.form).mfaPassword;
  try {
    await deps.selfService.confirmPassword(doc._id, password);
  } catch (err) {
    if (!(err instanceof SelfServiceError)) throw err;
    const { error, status } = refusal(req, deps, err, 'mfaPassword');
    return accountPage(req, deps, { mfa: [error] }, status);
  }
  const enrolment = await deps.mfa.enrol(doc._id, doc.email, { active: false });
  req.ctx.state.log.info({ event: 'account.mfa_enrolment_started', accountId: doc._id }, 'second-factor enrolment started');
  return enrolPage(req, enrolment);
};

/** POST /console/account/second-factor/confirm: a code from the app turns it on; the recovery codes are shown once. */
export const confirmSecondFactor: Handler<ConsoleDeps> = async (req, deps) => {
  const { t } = req;
  const doc = await deps.accounts.findById(accountOf(req));
  if (!doc) throw new NotFoundError('No such account.');
  const pending = await deps.mfa.pendingSecret(doc._id, doc.email);
  if (!pending) return redirect('/console/account');
  const code = z.object({ code: text() }).parse(req.form).code;
  if (!code) return enrolPage(req, pending, [{ field: 'code', message: t.mfa.missing }], 400);
  let recoveryCodes: readonly string[] | null;
  try {
    recoveryCodes = await deps.mfa.confirm(doc._id, code.slice(0, 12));
  } catch (err) {
    if (!(err instanceof MfaLimited)) throw err;
    req.ctx.set('Retry-After', String(err.retryAfterSeconds));
    return enrolPage(req, pending, [{ field: 'code', message: t.mfa.throttled(Math.max(1, Math.ceil(err.retryAfterSeconds / 60))) }], 429);
  }
  if (!recoveryCodes) return enrolPage(req, pending, [{ field: 'code', message: t.mfa.wrongConfirm }], 422);
  req.ctx.state.log.info({ event: 'account.mfa_enrolled', accountId: doc._id }, 'second factor turned on');
  return page(
    t.mfa.doneTitle,
    html`<section class="card">
      <p role="status">${t.mfa.recoveryShown}</p>
      <ul class="recovery-codes" translate="no">
        ${recoveryCodes.map((c) => html`<li><code>${c}</code></li>`)}
      </ul>
      <p><a class="button" href="/console/account">${t.mfa.backToAccount}</a></p>
    </section>`,
  );
};

const passwordForm = z.object({ currentPassword: text({ trim: false }), password: text({ trim: false }) });

export const changePassword: Handler<ConsoleDeps> = async (req, deps) => {
  const form = passwordForm.parse(req.form);
  try {
    await deps.selfService.changePassword(
      accountOf(req),
      { currentPassword: form.currentPassword, newPassword: form.password },
      { clientId: WEB_CLIENT_ID, keepGrantId: deps.web.session(req.ctx)?.grantId ?? '' },
    );
  } catch (err) {
    if (!(err instanceof SelfServiceError)) throw err;
    const { error, status } = refusal(req, deps, err, err.field ?? 'currentPassword');
    return accountPage(req, deps, { password: [error] }, status);
  }
  return redirect('/console/account', { kind: 'ok', text: req.t.console.account.changed });
};

export const signOutEverywhere: Handler<ConsoleDeps> = async (req, deps) => {
  await deps.selfService.signOutEverywhere(accountOf(req), WEB_CLIENT_ID);
  deps.web.sessions.clear(req.ctx);
  return redirect(WEB_PATHS.signedOut);
};

const deleteForm = z.object({ deletePassword: text({ trim: false }), confirm: ticked() });

export const deleteAccount: Handler<ConsoleDeps> = async (req, deps) => {
  const form = deleteForm.parse(req.form);
  if (!form.confirm) return accountPage(req, deps, { delete: [{ field: 'confirm', message: req.t.console.account.confirmNeeded }] }, 422);
  try {
    await deps.selfService.deleteAccount(accountOf(req), form.deletePassword);
  } catch (err) {
    if (!(err instanceof SelfServiceError)) throw err;
    const { error, status } = refusal(req, deps, err, 'deletePassword');
    return accountPage(req, deps, { delete: [error] }, status);
  }
  deps.web.sessions.clear(req.ctx);
  return redirect(ACCOUNT_PATHS.deletedPage);
};

/** Whether the viewer's role needs a second factor it has not enrolled (src/auth/policy.ts): the page says what to do next. */
export function needsFactor(req: PageRequest, deps: ConsoleDeps): boolean {
  const standing = req.account?.standing;
  return standing !== undefined && needsSecondFactor(standing.role, deps.config.policy) && !hasAcceptedFactor(standing, deps.config.policy);
}
