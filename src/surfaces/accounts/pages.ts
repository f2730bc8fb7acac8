import { z } from 'zod';
import { ACCOUNT_PATHS } from '../../oauth/constants.js';
import { CODE_DIGITS } from '../../oauth/email-codes.js';
import { MAX_TEACHER_FIELD, SelfServiceError, type SelfService } from '../../oauth/self-service.js';
import { csrfField, errorSummary, field, linkButton, withQuery, type FieldError } from '../web/components.js';
import { text, ticked } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import { page, redirect, type Handler, type Outcome, type PageRequest, type RouteTable } from '../web/routes.js';
import type { Texts } from '../web/texts/index.js';
import { WEB_PATHS, type Web } from '../web/web.js';

/**
 * The sign-up and password-reset pages (linked from the login page). Each step is a form posting
 * to itself; a refusal shows the form again with the error at its field, a success redirects
 * (303) to the next step with a flash.
 */
export interface AccountPagesDeps {
  readonly service: SelfService;
  /** The email domain sign-up is open to. */
  readonly domain: string;
}

/** A login page of ours that the sign-up and reset pages may send the person back to. */
const RETURN_PATH = /^\/v1\/oauth\/interaction\/[A-Za-z0-9_-]{1,64}$/;

const SIGN_UP = ACCOUNT_PATHS.signUpPage;
const RESET = ACCOUNT_PATHS.resetPage;

const emailForm = z.object({ email: text(), return: text() });
const signUpForm = z.object({
  email: text(),
  code: text(),
  password: text({ trim: false }),
  teacher: ticked(),
  name: text(),
  department: text(),
  return: text(),
});
const resetForm = z.object({ email: text(), code: text(), password: text({ trim: false }), return: text() });

type SignUpValues = z.infer<typeof signUpForm>;
type ResetValues = z.infer<typeof resetForm>;

/** The login page to go back to: `?return=` or the form's field, only a path of our login pages. */
function returnOf(req: PageRequest, value?: string): string | undefined {
  const candidate = value || req.query('return');
  return RETURN_PATH.test(candidate) ? candidate : undefined;
}

function hiddenReturn(back: string | undefined): Html {
  return back ? html`<input type="hidden" name="return" value="${back}" />` : html``;
}

/**
 * A refusal of the self-service: the form again with the error at its field (429 with its
 * Retry-After), or a page of its own when the mail could not be sent.
 */
function refused(
  req: PageRequest,
  deps: AccountPagesDeps,
  err: unknown,
  fallbackField: string,
  again: (errors: FieldError[], status: number) => Outcome,
): Outcome {
  const { t } = req;
  if (err instanceof SelfServiceError) {
    const retryAfter = err.retryAfterSeconds ?? 60;
    const limited = err.status === 429 || err.status === 503;
    if (limited) req.ctx.set('Retry-After', String(retryAfter));
    const message = t.accounts.problems(deps.domain, Math.max(1, Math.ceil(retryAfter / 60)))[err.problem];
    return again([{ field: err.field ?? fallbackField, message }], limited ? err.status : 422);
  }
  if (err instanceof Error && 'status' in err && err.status === 503) {
    req.ctx.set('Retry-After', '60');
    return page(t.accounts.unavailableTitle, html`<p role="alert">${t.accounts.unavailable}</p>`, 503);
  }
  throw err;
}

/** Step 1 of sign-up and of reset: the email a code goes to. */
/** The email step of sign-up or of a password reset (`action`), in that flow's words. */
function emailPage(
  req: PageRequest,
  deps: AccountPagesDeps,
  action: typeof SIGN_UP | typeof RESET,
  email: string,
  errors: FieldError[] = [],
  status?: number,
): Outcome {
  const { t } = req;
  const words =
    action === SIGN_UP
      ? { title: t.accounts.signUpTitle, intro: t.accounts.signUpIntro(deps.domain), label: t.accounts.email }
      : { title: t.accounts.resetTitle, intro: t.accounts.resetIntro, label: t.accounts.accountEmail };
  return emailStep(req, { action, ...words, email, errors, ...(status === undefined ? {} : { status }) });
}

function emailStep(
  req: PageRequest,
  o: { action: string; intro: string; label: string; title: string; email: string; errors: FieldError[]; status?: number },
): Outcome {
  const { t } = req;
  const back = returnOf(req);
  return page(
    o.title,
    html`${errorSummary(t, o.errors)}
      <p>${o.intro}</p>
      <form method="post" action="${o.action}" class="card" novalidate>
        ${csrfField(req.csrf)} ${hiddenReturn(back)}
        ${field({ name: 'email', label: o.label, type: 'email', value: o.email, errors: o.errors, required: true, autocomplete: 'email', maxlength: 254, autofocus: true })}
        <div class="actions"><button type="submit">${t.accounts.sendCode}</button></div>
      </form>
      <p>${t.accounts.haveCode} <a href="${withQuery(`${o.action}/verify`, { return: back })}">${t.accounts.enterCode}</a></p>
      ${back ? html`<p><a href="${back}">${t.accounts.backToSignIn}</a></p>` : ''}`,
    o.status,
  );
}

/** The code field of step 2 (sign-up and reset). */
function codeField(t: Texts, value: string, errors: FieldError[], focus: boolean): Html {
  return field({
    name: 'code',
    label: t.accounts.code,
    value,
    errors,
    required: true,
    autocomplete: 'one-time-code',
    inputmode: 'numeric',
    maxlength: CODE_DIGITS,
    pattern: `[0-9]{${CODE_DIGITS}}`,
    hint: t.accounts.codeHint,
    autofocus: focus,
  });
}

function signUpVerifyPage(req: PageRequest, values: Partial<SignUpValues>, errors: FieldError[] = [], status = 200): Outcome {
  const { t } = req;
  const back = returnOf(req, values.return);
  const email = values.email ?? '';
  return page(
    t.accounts.verifyTitle,
    html`${errorSummary(t, errors)}
      <form method="post" action="${SIGN_UP}/verify" class="card" novalidate>
        ${csrfField(req.csrf)} ${hiddenReturn(back)}
        ${field({ name: 'email', label: t.accounts.email, type: 'email', value: email, errors, required: true, autocomplete: 'email', maxlength: 254 })}
        ${codeField(t, values.code ?? '', errors, Boolean(email))}
        ${field({ name: 'password', label: t.accounts.password, type: 'password', errors, required: true, autocomplete: 'new-password', maxlength: 100, hint: t.accounts.passwordHint })}
        <fieldset>
          <legend>${t.accounts.teacherLegend}</legend>
          <label class="check" for="f-teacher"
            ><input id="f-teacher" type="checkbox" name="teacher" value="yes" ${values.teacher ? html`checked` : ''} />
            <span>${t.accounts.teacher}</span></label
          >
          ${field({ name: 'name', label: t.accounts.name, value: values.name, errors, autocomplete: 'name', maxlength: MAX_TEACHER_FIELD, hint: t.accounts.teacherHint })}
          ${field({ name: 'department', label: t.accounts.department, value: values.department, errors, autocomplete: 'organization-title', maxlength: MAX_TEACHER_FIELD })}
        </fieldset>
        <div class="actions"><button type="submit">${t.accounts.create}</button></div>
      </form>
      <form method="post" action="${SIGN_UP}">
        ${csrfField(req.csrf)} ${hiddenReturn(back)}
        <input type="hidden" name="email" value="${email}" />
        <button type="submit" class="secondary">${t.accounts.resend}</button>
      </form>`,
    status,
  );
}

function resetVerifyPage(req: PageRequest, values: Partial<ResetValues>, errors: FieldError[] = [], status = 200): Outcome {
  const { t } = req;
  const back = returnOf(req, values.return);
  return page(
    t.accounts.resetTitle,
    html`${errorSummary(t, errors)}
      <form method="post" action="${RESET}/verify" class="card" novalidate>
        ${csrfField(req.csrf)} ${hiddenReturn(back)}
        ${field({ name: 'email', label: t.accounts.accountEmail, type: 'email', value: values.email, errors, required: true, autocomplete: 'username', maxlength: 254 })}
        ${codeField(t, values.code ?? '', errors, Boolean(values.email))}
        ${field({ name: 'password', label: t.accounts.newPassword, type: 'password', errors, required: true, autocomplete: 'new-password', maxlength: 100, hint: t.accounts.passwordHint })}
        <p class="hint">${t.accounts.resetWarning}</p>
        <div class="actions"><button type="submit">${t.accounts.setPassword}</button></div>
      </form>`,
    status,
  );
}

/** The page at the end of sign-up or reset: what happened, and the way to sign in. */
function donePage(req: PageRequest, title: string, lines: Html): Outcome {
  const back = returnOf(req);
  return page(
    title,
    html`${lines}
      <p>${linkButton(back ?? `${WEB_PATHS.signIn}?next=/console`, req.t.accounts.continueSignIn)}</p>`,
  );
}

const signUpStart: Handler<AccountPagesDeps> = async (req, deps) => emailPage(req, deps, SIGN_UP, req.query('email'));

/**
 * The email step posted (sign-up or a password reset): a code is mailed and the code step follows,
 * or the email step again with the refusal.
 */
function requestCode(action: typeof SIGN_UP | typeof RESET): Handler<AccountPagesDeps> {
  return async (req, deps) => {
    const { t } = req;
    const form = emailForm.parse(req.form);
    try {
      const sent =
        action === SIGN_UP
          ? await deps.service.requestSignupCode(form.email, req.ctx.ip)
          : await deps.service.requestPasswordReset(form.email, req.ctx.ip);
      return redirect(withQuery(`${action}/verify`, { email: sent.email, return: returnOf(req, form.return) }), {
        kind: 'ok',
        text: (action === SIGN_UP ? t.accounts.sent : t.accounts.resetSent)(sent.email),
      });
    } catch (err) {
      return refused(req, deps, err, 'email', (errors, status) => emailPage(req, deps, action, form.email, errors, status));
    }
  };
}

const signUpRequestCode = requestCode(SIGN_UP);

const signUpVerify: Handler<AccountPagesDeps> = async (req) => signUpVerifyPage(req, { email: req.query('email') });

const signUp: Handler<AccountPagesDeps> = async (req, deps) => {
  const form = signUpForm.parse(req.form);
  try {
    const account = await deps.service.signUp(
      {
        email: form.email,
        password: form.password,
        code: form.code,
        ...(form.teacher ? { teacher: { name: form.name, department: form.department } } : {}),
      },
      req.ctx.ip,
    );
    return redirect(
      withQuery(`${SIGN_UP}/done`, { pending: account.approval === 'PENDING' ? '1' : '', return: returnOf(req, form.return) }),
    );
  } catch (err) {
    return refused(req, deps, err, 'code', (errors, status) => signUpVerifyPage(req, { ...form, password: '' }, errors, status));
  }
};

const signUpDone: Handler<AccountPagesDeps> = async (req) =>
  donePage(
    req,
    req.t.accounts.doneTitle,
    html`<p role="status">${req.t.accounts.done}</p>
      ${req.query('pending') ? html`<p>${req.t.accounts.donePending}</p>` : ''}`,
  );

const resetStart: Handler<AccountPagesDeps> = async (req, deps) => emailPage(req, deps, RESET, req.query('email'));

const resetRequestCode = requestCode(RESET);

const resetVerify: Handler<AccountPagesDeps> = async (req) => resetVerifyPage(req, { email: req.query('email') });

const reset: Handler<AccountPagesDeps> = async (req, deps) => {
  const form = resetForm.parse(req.form);
  try {
    await deps.service.resetPassword({ email: form.email, code: form.code, newPassword: form.password }, req.ctx.ip);
    return redirect(withQuery(`${RESET}/done`, { return: returnOf(req, form.return) }));
  } catch (err) {
    return refused(req, deps, err, 'code', (errors, status) => resetVerifyPage(req, { ...form, password: '' }, errors, status));
  }
};

const resetDone: Handler<AccountPagesDeps> = async (req) =>
  donePage(req, req.t.accounts.resetDoneTitle, html`<p role="status">${req.t.accounts.resetDone}</p>`);

const deleted: Handler<AccountPagesDeps> = async (req) =>
  page(req.t.accounts.deletedTitle, html`<p role="status">${req.t.accounts.deleted}</p>`);

/** The self-service pages' table: open to anyone, their forms bound to the browser's anonymous-forms cookie. */
export function accountRoutes(web: Web): RouteTable<AccountPagesDeps> {
  return {
    access: 'anyone',
    csrf: web.anonymousForms,
    narrow: true,
    prefix: '/account',
    routes: [
      { method: 'GET', path: SIGN_UP, handler: signUpStart },
      { method: 'POST', path: SIGN_UP, handler: signUpRequestCode },
      { method: 'GET', path: `${SIGN_UP}/verify`, handler: signUpVerify },
      { method: 'POST', path: `${SIGN_UP}/verify`, handler: signUp },
      { method: 'GET', path: `${SIGN_UP}/done`, handler: signUpDone },
      { method: 'GET', path: RESET, handler: resetStart },
      { method: 'POST', path: RESET, handler: resetRequestCode },
      { method: 'GET', path: `${RESET}/verify`, handler: resetVerify },
      { method: 'POST', path: `${RESET}/verify`, handler: reset },
      { method: 'GET', path: `${RESET}/done`, handler: resetDone },
      { method: 'GET', path: ACCOUNT_PATHS.deletedPage, handler: deleted },
    ],
  };
}
