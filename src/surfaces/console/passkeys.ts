import { z } from 'zod';
import { needsPasskey } from '../../auth/policy.js';
import { NotFoundError } from '../../errors/index.js';
import { MfaLimited } from '../../oauth/second-factor.js';
import { MAX_PASSKEY_NAME_LENGTH, MAX_PASSKEYS_PER_ACCOUNT, PasskeyRefused, type PasskeySummary } from '../../oauth/passkeys.js';
import { SelfServiceError } from '../../oauth/self-service.js';
import { csrfField, errorSummary, field, linkButton, table, when, type FieldError } from '../web/components.js';
import { parseForm, text } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import type { Texts } from '../web/texts/index.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import { passkeyScripts } from '../web/shell.js';
import { passkeyProblem } from '../web/texts/passkeys.js';
import type { ConsoleDeps } from './deps.js';
import { refusal } from './refusal.js';

/*
 * Passkeys in /console/account: the list (name, when added and last used, synced or not, flagged),
 * adding one (the password or the TOTP app's code typed again, a name, then the browser's
 * ceremony: web/assets/passkeys.js) and removing one. The checks live in src/oauth/passkeys.ts.
 */

const ACCOUNT = '/console/account';
const NEW = '/console/account/passkeys/new';

/** The section of /console/account: the person's passkeys, and the way to add one. */
export async function passkeySection(req: PageRequest, deps: ConsoleDeps): Promise<Html> {
  const { t } = req;
  const p = t.passkeys;
  const principal = req.account;
  const passkeys = principal ? await deps.passkeys.list(principal.accountId) : [];
  const available = deps.passkeys.relyingParty !== null;
  // A role whose privilege takes only a passkey (ADMIN_MFA=passkey) and has none: what to do next, first.
  const needed = principal !== undefined && needsPasskey(principal.role, deps.config.policy) && principal.standing.passkey !== true;
  return html`<section class="card" aria-labelledby="passkeys">
    <h2 id="passkeys">${p.section}</h2>
    ${needed && principal ? html`<p class="notice" role="status">${p.neededForRole(t.roles[principal.role])}</p>` : ''}
    <p class="hint">${p.intro}</p>
    ${available ? '' : html`<p class="notice">${p.unavailableHere}</p>`}
    ${table(t, {
      columns: p.columns,
      caption: p.section,
      empty: p.none,
      rows: passkeys,
      cells: (key) => [
        ...passkeyCells(deps, t, key),
        html`<form method="post" action="${ACCOUNT}/passkeys/${key.id}/remove" class="inline">
          ${csrfField(req.csrf)}
          <button type="submit" class="secondary" aria-label="${p.removeLabel(key.name)}">${p.remove}</button>
        </form>`,
      ],
    })}
    <p class="hint">${p.count(passkeys.length, MAX_PASSKEYS_PER_ACCOUNT)}</p>
    ${available && passkeys.length < MAX_PASSKEYS_PER_ACCOUNT ? html`<p>${linkButton(NEW, p.add)}</p>` : ''}
  </section>`;
}

/** GET /console/account/passkeys/new: a name, and the password (or the TOTP app's code) typed again. */
export const newPasskey: Handler<ConsoleDeps> = async (req, deps) => newPasskeyPage(req, deps, { name: '' }, []);

async function newPasskeyPage(
  req: PageRequest,
  deps: ConsoleDeps,
  values: { name: string },
  errors: FieldError[],
  status = 200,
): Promise<Outcome> {
  const { t } = req;
  const p = t.passkeys;
  const principal = req.account;
  if (!principal || deps.passkeys.relyingParty === null) return redirect(ACCOUNT, { kind: 'error', text: p.problems.unavailable });
  const totp = await deps.mfa.isActive(principal.accountId);
  return page(
    p.add,
    html`<section class="card">
      <p>${p.intro}</p>
      ${errorSummary(t, errors, ['name', 'current'])}
      <form method="post" action="${ACCOUNT}/passkeys" novalidate>
        ${csrfField(req.csrf)}
        <input type="hidden" name="username" value="${principal.email}" autocomplete="username" />
        ${field({ name: 'name', label: p.name, hint: p.nameHint, value: values.name, required: true, maxlength: MAX_PASSKEY_NAME_LENGTH, autofocus: true, errors })}
        ${field({ name: 'current', label: totp ? p.currentOrCode : p.current, hint: p.currentHint, type: 'password', autocomplete: 'current-password', required: true, maxlength: 1024, errors })}
        <div class="actions">
          <button type="submit" class="primary">${p.next}</button>
          ${linkButton(ACCOUNT, p.backToAccount, 'secondary')}
        </div>
      </form>
    </section>`,
    status,
  );
}

/**
 * POST /console/account/passkeys: after the password (or a code of the TOTP app) typed again (a
 * session left open on a shared computer must not be enough to tie the account to someone else's
 * device), the page that runs the browser's ceremony, with its options (challenge stored, 5 minutes).
 */
export const startPasskey: Handler<ConsoleDeps> = async (req, deps) => {
  const { t } = req;
  const p = t.passkeys;
  const principal = req.account;
  if (!principal) throw new NotFoundError('No such account.');
  const form = parseForm(
    z.object({
      name: text().pipe(z.string().min(1, p.nameMissing).max(MAX_PASSKEY_NAME_LENGTH, p.nameTooLong)),
      current: text({ trim: false }).pipe(z.string().min(1, p.currentMissing)),
    }),
    req.form,
  );
  const name = typeof req.form['name'] === 'string' ? req.form['name'].slice(0, MAX_PASSKEY_NAME_LENGTH * 2) : '';
  if (!form.ok) return newPasskeyPage(req, deps, { name }, form.errors, 422);
  const proven = await confirmed(req, deps, form.value.current);
  if (proven !== true) return newPasskeyPage(req, deps, { name }, [proven.error], proven.status);
  let options: unknown;
  try {
    options = await deps.passkeys.registrationOptions({ id: principal.accountId, email: principal.email }, form.value.name);
  } catch (err) {
    if (!(err instanceof PasskeyRefused)) throw err;
    return newPasskeyPage(req, deps, { name }, [{ field: 'name', message: passkeyProblem(p, err.problem) }], 422);
  }
  req.ctx.state.log.info({ event: 'account.passkey_started', accountId: principal.accountId }, 'passkey creation started');
  return page(
    p.createTitle,
    html`<section class="card">
        <p>${p.createIntro(form.value.name)}</p>
        <div data-passkey-offer hidden>
          <form
            method="post"
            action="${ACCOUNT}/passkeys/verify"
            data-passkey="create"
            data-options-json="${JSON.stringify(options)}"
            data-working="${p.working}"
            data-cancelled="${p.cancelled}"
            data-duplicate="${p.problems.duplicate}"
          >
            ${csrfField(req.csrf)}
            <input type="hidden" name="response" value="" />
            <button type="button" class="primary" id="f-passkey" data-passkey-start>${p.create}</button>
            <p class="hint" role="status" data-passkey-status></p>
          </form>
        </div>
        <p class="notice" data-passkey-unsupported>${p.unsupported}</p>
        <p>${linkButton(ACCOUNT, p.backToAccount, 'secondary')}</p>
      </section>
      ${passkeyScripts()}`,
  );
};

/**
 * The password typed again, or (an account with the TOTP app) a 6-digit code of the app: true, or
 * the refusal at the field. A password is at least 8 characters, so six digits are never one.
 */
async function confirmed(req: PageRequest, deps: ConsoleDeps, current: string): Promise<true | { error: FieldError; status: number }> {
  const { t } = req;
  const accountId = req.account?.accountId ?? 0;
  if (/^\d{6}$/.test(current.trim()) && (await deps.mfa.isActive(accountId))) {
    try {
      if ((await deps.mfa.verify(accountId, current.trim())) === 'totp') return true;
    } catch (err) {
      if (!(err instanceof MfaLimited)) throw err;
      req.ctx.set('Retry-After', String(err.retryAfterSeconds));
      return { error: { field: 'current', message: t.mfa.throttled(Math.max(1, Math.ceil(err.retryAfterSeconds / 60))) }, status: 429 };
    }
    return { error: { field: 'current', message: t.passkeys.wrongCode }, status: 422 };
  }
  try {
    await deps.selfService.confirmPassword(accountId, current);
    return true;
  } catch (err) {
    if (!(err instanceof SelfServiceError)) throw err;
    return refusal(req, deps, err, 'current');
  }
}

/** POST /console/account/passkeys/verify: the browser's answer; the passkey is stored and the account page says so. */
export const finishPasskey: Handler<ConsoleDeps> = async (req, deps) => {
  const p = req.t.passkeys;
  const principal = req.account;
  if (!principal) throw new NotFoundError('No such account.');
  const response = z.object({ response: text({ trim: false }) }).parse(req.form).response;
  try {
    const added = await deps.passkeys.register(principal, response);
    req.ctx.state.log.info({ event: 'account.passkey_added', accountId: principal.accountId }, 'passkey added');
    return redirect(`${ACCOUNT}#passkeys`, { kind: 'ok', text: p.added(added.name) });
  } catch (err) {
    if (!(err instanceof PasskeyRefused)) throw err;
    req.ctx.state.log.info({ event: 'account.passkey_refused', accountId: principal.accountId, problem: err.problem }, err.message);
    return redirect(`${ACCOUNT}#passkeys`, { kind: 'error', text: passkeyProblem(p, err.problem) });
  }
};

/** POST /console/account/passkeys/:id/remove: one of the person's passkeys goes. */
export const removePasskey: Handler<ConsoleDeps> = async (req, deps) => {
  const principal = req.account;
  if (!principal) throw new NotFoundError('No such account.');
  const removed = await deps.passkeys.remove(principal, req.param('id'));
  if (!removed) throw new NotFoundError('No such passkey.');
  req.ctx.state.log.info({ event: 'account.passkey_removed', accountId: principal.accountId }, 'passkey removed');
  return redirect(`${ACCOUNT}#passkeys`, { kind: 'ok', text: req.t.passkeys.removed(removed.name) });
};

/** A passkey's row as the console and the admin console show it: name, added, last used, and its state. */
export function passkeyCells(
  deps: Parameters<typeof when>[0],
  t: Texts,
  key: PasskeySummary,
): (string | Html | { content: string; rowHeader: true })[] {
  const p = t.passkeys;
  return [
    { content: key.name, rowHeader: true },
    when(deps, t, key.createdAt),
    when(deps, t, key.lastUsedAt),
    key.flaggedAt ? html`<span class="tag">${p.flagged}</span>` : key.synced ? p.synced : p.device,
  ];
}
