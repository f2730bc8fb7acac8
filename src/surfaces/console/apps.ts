import { z } from 'zod';
import { NotFoundError } from '../../errors/index.js';
import {
  AppValidationError,
  MAX_APPS_PER_ACCOUNT,
  MAX_APP_NAME_LENGTH,
  machineUsageId,
  type AppProblem,
  type AppSummary,
} from '../../oauth/apps.js';
import { APP_GRANTS, type AppGrant } from '../../data/apps/store.js';
import { LogoutNoticeStore } from '../../data/events/logout-notices.js';
import { API_SCOPES, MAX_PURPOSE_LENGTH, scopeStatesOf } from '../../data/keys/store.js';
import { addDays, todayIn } from '../../calendar.js';
import { OAUTH_PATHS } from '../../oauth/constants.js';
import { fillDays, usageChart } from './chart.js';
import { rowOf, scopeTags } from './keys.js';
import { SELF_READ } from '../../oauth/constants.js';
import type { UpdateAppInput } from '../../oauth/apps.js';
import type { ApiScope } from '../../data/__generated__/enums.js';
import { LOGIN_SCOPES } from '../../oauth/login-scopes.js';
import {
  actionCard,
  choices,
  csrfField,
  errorSummary,
  facts,
  field,
  type FieldError,
  linkButton,
  snippet,
  table,
  textArea,
  when,
} from '../web/components.js';
import { list, text, ticked } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type { Texts } from '../web/texts/index.js';
import { appSnippets, DEV_CALLBACK_PATH, discoveryUrl, exampleCommand, exampleLabel } from './first-hour.js';
import type { ConsoleDeps } from './deps.js';

/** The form field each refusal belongs to. */
const FIELD_OF: Record<AppProblem, string> = {
  unknown_client: 'name',
  reserved_name: 'name',
  name: 'name',
  service_name: 'serviceName',
  redirect_uri_missing: 'redirectUris',
  redirect_uri_invalid: 'redirectUris',
  redirect_uri_fragment: 'redirectUris',
  redirect_uri_not_https: 'redirectUris',
  too_many_redirect_uris: 'redirectUris',
  scopes: 'scopes',
  pkce: 'type',
  public_has_no_secret: 'type',
  too_many_apps: 'name',
  grants: 'grants',
  data_scopes: 'dataScopes',
  purpose: 'dataPurpose',
  backchannel_logout_uri: 'backchannelLogoutUri',
};

/** The register and edit form (every rule is the client service's: its refusals show at their fields). */
const appForm = z.object({
  name: text(),
  serviceName: text(),
  redirectUris: text(),
  type: text().transform((v) => (v === 'public' ? ('public' as const) : ('confidential' as const))),
  scopes: list(),
  // How the app gets tokens, and its machine tokens' data scopes with the purpose (src/oauth/machine-tokens.ts).
  grants: list(),
  dataScopes: list(),
  dataPurpose: text(),
  backchannelLogoutUri: text(),
});
type AppForm = z.infer<typeof appForm>;

const accountOf = (req: PageRequest) => req.account?.accountId ?? 0;
const owner = (req: PageRequest) => ({ ownerAccountId: accountOf(req) });

/** The non-empty lines of a text area. */
function lines(value: string): string[] {
  return value
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}

function problemError(t: Texts, err: AppValidationError): FieldError {
  return { field: FIELD_OF[err.problem], message: t.console.apps.problems(err.detail ?? '')[err.problem] };
}

/** Days the machine tokens' usage chart shows, today included (as a key's). */
const CHART_DAYS = 30;

/** The fields of registering and editing an app (the kind is chosen once, at registration). */
function appFields(req: PageRequest, deps: ConsoleDeps, values: AppForm, errors: FieldError[], withType: boolean): Html {
  const { t } = req;
  const a = t.console.apps;
  return html`${field({ name: 'name', label: a.name, value: values.name, required: true, maxlength: MAX_APP_NAME_LENGTH, errors })}
    ${field({ name: 'serviceName', label: a.serviceName, value: values.serviceName, hint: a.serviceHint, maxlength: MAX_APP_NAME_LENGTH, errors })}
    ${choices({
      name: 'grants',
      legend: a.grants,
      type: 'checkbox',
      options: APP_GRANTS.map((grant) => ({ value: grant, label: a.grantText[grant], hint: grant })),
      checked: values.grants,
      errors,
    })}
    ${textArea({ name: 'redirectUris', label: a.redirectUris, value: values.redirectUris, hint: a.redirectHint, rows: 3, errors })}
    ${
      withType
        ? choices({
            name: 'type',
            legend: a.type,
            type: 'radio',
            options: [
              { value: 'confidential', label: a.confidential },
              { value: 'public', label: a.public },
            ],
            checked: [values.type],
            errors,
          })
        : ''
    }
    ${choices({
      name: 'scopes',
      legend: a.scopes,
      type: 'checkbox',
      options: LOGIN_SCOPES.map((scope) => ({
        value: scope.name,
        label: `${scope.name} · ${a.scopeText[scope.name] ?? ''}`,
        hint: scope.shown.map((f) => (t.locale === 'en-US' ? f.en : f.ko)).join(', '),
      })),
      checked: values.scopes,
      errors,
    })}
    <p class="hint">${a.approvalHint}</p>
    ${dataScopeFields(req, deps, values, errors)}
    ${field({ name: 'backchannelLogoutUri', label: a.logoutUri, value: values.backchannelLogoutUri, hint: a.logoutHint, type: 'url', maxlength: 2000, errors })}`;
}

/**
 * The data scopes of the app's machine tokens, each with what the viewer's role gives (as on the
 * key form: src/auth/policy.ts, one policy for keys and apps), and the purpose a scope awaiting
 * approval needs.
 */
function dataScopeFields(req: PageRequest, deps: ConsoleDeps, values: AppForm, errors: FieldError[]): Html {
  const { t } = req;
  const a = t.console.apps;
  const k = t.console.keys;
  const policy = rowOf(req, deps);
  const standing = (scope: string) =>
    (policy.granted as readonly string[]).includes(scope)
      ? k.policy.granted
      : (policy.approval as readonly string[]).includes(scope)
        ? k.policy.approval
        : k.policy.none;
  return html`${choices({
      name: 'dataScopes',
      legend: a.dataScopes,
      type: 'checkbox',
      options: API_SCOPES.map((scope) => ({ value: scope, label: scope, hint: `${t.console.scopes[scope]} · ${standing(scope)}` })),
      checked: values.dataScopes,
      errors,
    })}
    <p class="hint">${a.dataScopesHint}</p>
    ${field({ name: 'dataPurpose', label: a.dataPurpose, value: values.dataPurpose, hint: k.purposeHint, maxlength: MAX_PURPOSE_LENGTH, errors })}`;
}

/** The logout tokens sent to the app's server, latest first (src/data/events/logout-notices.ts). */
async function logoutSection(req: PageRequest, deps: ConsoleDeps, app: AppSummary): Promise<Html> {
  const { t } = req;
  const a = t.console.apps;
  if (!app.backchannelLogoutUri) return html``;
  const notices = await new LogoutNoticeStore(deps.db).listFor(app.id, LOGOUT_NOTICES_SHOWN);
  return html`<section class="card" aria-labelledby="logouts">
    <h2 id="logouts">${a.logouts}</h2>
    <p class="hint">${a.logoutsIntro(LOGOUT_NOTICES_SHOWN)} <code>${app.backchannelLogoutUri}</code></p>
    ${table(t, {
      columns: a.logoutColumns,
      rows: notices,
      empty: a.logoutsNone,
      cells: (notice) => {
        const last = notice.attempts.at(-1);
        return [
          { content: when(deps, t, notice.createdAt), rowHeader: true },
          a.causes[notice.cause],
          html`<code>${notice.sub}</code>`,
          notice.sid ? html`<code>${notice.sid}</code>` : '—',
          html`<span class="tag" data-state="${notice.state}">${a.states[notice.state]}</span>`,
          last ? `${last.status ?? a.noAnswer} ${last.response}`.trim() : '—',
        ];
      },
    })}
  </section>`;
}

/** How many of an app's logout notices the console shows. */
const LOGOUT_NOTICES_SHOWN = 20;

export const appList: Handler<ConsoleDeps> = async (req, deps) => {
  const { t } = req;
  const a = t.console.apps;
  const apps = await deps.clients.listOwnedBy(accountOf(req));
  const granted = await Promise.all(apps.map((app) => deps.clients.grantingAccounts(app.id)));
  const rows = apps.map((app, i) => ({ app, granted: granted[i] ?? 0 }));
  return page(
    a.title,
    html`<p>${a.intro(MAX_APPS_PER_ACCOUNT)}</p>
      <p>${linkButton('/console/apps/new', a.register)} <span class="muted">${apps.length} / ${MAX_APPS_PER_ACCOUNT}</span></p>
      ${table(t, {
        columns: [a.name, a.serviceNameShort, a.type, a.grants, a.state, a.granted, a.createdAt],
        rows,
        empty: a.none,
        cells: ({ app, granted: count }) => [
          { content: html`<a href="/console/apps/${app.id}">${app.name}</a>`, rowHeader: true },
          app.serviceName ?? '—',
          a.typeShort[app.type],
          app.grants.map((grant) => a.grantShort[grant]).join(', '),
          html`<span class="tag" data-state="${app.state}">${t.appStates[app.state]}</span>`,
          count,
          when(deps, t, app.createdAt),
        ],
      })}`,
  );
};

function newPage(req: PageRequest, deps: ConsoleDeps, values: AppForm, errors: FieldError[] = [], status = 200): Outcome {
  const { t } = req;
  return page(
    t.console.apps.register,
    html`<p><a href="/console/apps">← ${t.console.apps.back}</a></p>
      ${errorSummary(t, errors)}
      <form method="post" action="/console/apps" class="card" novalidate>
        ${csrfField(req.csrf)} ${appFields(req, deps, values, errors, true)}
        <div class="actions"><button type="submit">${t.console.apps.registerButton}</button></div>
      </form>`,
    status,
  );
}

export const newApp: Handler<ConsoleDeps> = async (req, deps) =>
  newPage(req, deps, {
    name: '',
    serviceName: '',
    redirectUris: '',
    type: 'confidential',
    scopes: [SELF_READ],
    grants: ['authorization_code'],
    dataScopes: [],
    dataPurpose: '',
    backchannelLogoutUri: '',
  });

/** The grants, data scopes and purpose of the form, as the app service takes them (its rules answer at the fields). */
function machineInput(values: AppForm): Pick<UpdateAppInput, 'grants' | 'dataScopes' | 'dataPurpose'> {
  const grants = values.grants.filter((g): g is AppGrant => (APP_GRANTS as readonly string[]).includes(g));
  return {
    // No box ticked: as before the choice existed (a person's sign-in when registering; unchanged when editing).
    ...(grants.length > 0 ? { grants } : {}),
    dataScopes: values.dataScopes.filter((s): s is ApiScope => (API_SCOPES as readonly string[]).includes(s)),
    dataPurpose: values.dataPurpose,
  };
}

export const createApp: Handler<ConsoleDeps> = async (req, deps) => {
  const { t } = req;
  const values = appForm.parse(req.form);
  try {
    const created = await deps.clients.createOwned(accountOf(req), {
      name: values.name,
      serviceName: values.serviceName,
      redirectUris: lines(values.redirectUris),
      scopes: values.scopes,
      public: values.type === 'public',
      ...machineInput(values),
      backchannelLogoutUri: values.backchannelLogoutUri,
    });
    req.ctx.state.log.info({ event: 'console.app_registered', clientId: created.client.id }, 'OAuth app registered in the console');
    return redirect(`/console/apps/${created.client.id}`, {
      kind: 'ok',
      text: t.console.apps.registered,
      ...(created.secret ? { secret: { label: t.console.apps.secretLabel, value: created.secret } } : {}),
      // The first hour: where the issuer is, the client id, and the example app started as this app.
      snippets: appSnippets(t, deps.config, created.client, created.secret),
    });
  } catch (err) {
    if (!(err instanceof AppValidationError)) throw err;
    return newPage(req, deps, values, [problemError(t, err)], 422);
  }
};

/** The signed-in account's app of the address; another's app is "not found" too. */
async function ownApp(req: PageRequest, deps: ConsoleDeps): Promise<AppSummary> {
  try {
    return await deps.clients.get(req.param('id'), owner(req));
  } catch (err) {
    if (!(err instanceof AppValidationError)) throw err;
    throw new NotFoundError('No such app.');
  }
}

async function detailPage(
  req: PageRequest,
  deps: ConsoleDeps,
  app: AppSummary,
  values?: AppForm,
  errors: FieldError[] = [],
): Promise<Outcome> {
  const { t } = req;
  const a = t.console.apps;
  const granted = await deps.clients.grantingAccounts(app.id);
  const base = `/console/apps/${app.id}`;
  const form = values ?? {
    name: app.name,
    serviceName: app.serviceName ?? '',
    redirectUris: app.redirectUris.join('\n'),
    type: app.type,
    scopes: [...app.scopes],
    grants: [...app.grants],
    dataScopes: [...app.dataScopes],
    dataPurpose: app.dataPurpose ?? '',
    backchannelLogoutUri: app.backchannelLogoutUri ?? '',
  };
  const machine = app.grants.includes('client_credentials');
  const signsIn = app.grants.includes('authorization_code');
  return page(
    app.name,
    html`<p><a href="/console/apps">← ${a.back}</a></p>
      <div class="card">
        ${facts([
          [a.clientId, html`<code id="client-id">${app.id}</code>`],
          [a.type, a.typeShort[app.type]],
          [a.grants, app.grants.map((grant) => a.grantShort[grant]).join(', ')],
          [a.state, html`<span class="tag" data-state="${app.state}">${t.appStates[app.state]}</span>`],
          [a.granted, granted],
          [a.createdAt, when(deps, t, app.createdAt)],
        ])}
      </div>
      ${machine ? await machineSection(req, deps, app) : ''}
      <section class="card" aria-labelledby="get-started">
        <h2 id="get-started">${t.firstHour.getStarted}</h2>
        ${facts([[t.firstHour.discovery, html`<code>${discoveryUrl(deps.config)}</code>`]])}
        <p class="hint">${signsIn ? t.firstHour.exampleHint : t.firstHour.machineExampleHint}</p>
        ${snippet(t, 'example-command', exampleLabel(t, app), exampleCommand(t, deps.config, app, null))}
        ${deps.config.isProduction || !signsIn ? '' : html`<p class="hint">${t.firstHour.devCallback(`${deps.config.urls.auth}${DEV_CALLBACK_PATH}`)}</p>`}
      </section>
      <section class="card" aria-labelledby="edit">
        <h2 id="edit">${a.edit}</h2>
        ${errorSummary(t, errors)}
        <form method="post" action="${base}" novalidate>
          ${csrfField(req.csrf)} ${appFields(req, deps, form, errors, false)}
          <div class="actions"><button type="submit">${a.save}</button></div>
        </form>
      </section>
      ${await logoutSection(req, deps, app)}
      ${
        app.type === 'confidential'
          ? actionCard({ id: 'rotate', title: a.rotate, hint: a.rotateHint, action: `${base}/secret`, csrf: req.csrf, kind: 'secondary' })
          : ''
      }
      ${actionCard({
        id: 'delete',
        title: a.delete,
        hint: a.deleteHint,
        action: `${base}/delete`,
        csrf: req.csrf,
        kind: 'danger',
        fields: choices({
          name: 'confirm',
          legend: a.delete,
          type: 'checkbox',
          options: [{ value: 'yes', label: a.deleteConfirm }],
          checked: [],
          errors,
        }),
      })}`,
    errors.length > 0 ? 422 : 200,
  );
}

/**
 * An app's machine tokens: where each data scope stands now (its owner's policy: approved,
 * awaiting approval, refused), the token request, their requests per day (as a key's), and
 * revoking them all.
 */
async function machineSection(req: PageRequest, deps: ConsoleDeps, app: AppSummary): Promise<Html> {
  const { t } = req;
  const a = t.console.apps;
  const scopes = (await deps.clients.dataScopeStates([app])).get(app.id);
  const today = todayIn(deps.config.schoolTimeZone, deps.now());
  const days = Array.from({ length: CHART_DAYS }, (_, i) => addDays(today, i - CHART_DAYS + 1));
  const usage = await deps.apiKeys.usage(machineUsageId(app.id), days[0] ?? today, today);
  const tokenEndpoint = `${deps.config.urls.auth}${OAUTH_PATHS.token}`;
  return html`<section class="card" aria-labelledby="machine-tokens">
    <h2 id="machine-tokens">${a.machine}</h2>
    ${facts([
      [a.dataScopes, scopes ? scopeTags(t, { scopeStates: scopeStatesOf(scopes) }) : '—'],
      ...(app.dataPurpose ? ([[a.dataPurpose, app.dataPurpose]] as [string, string][]) : []),
      [a.tokenEndpoint, html`<code class="break">${tokenEndpoint}</code>`],
    ])}
    <p class="hint">${a.machineHint}</p>
    ${snippet(
      t,
      'machine-token-command',
      a.tokenRequest,
      `curl -s ${tokenEndpoint} -u '${app.id}:${t.firstHour.secretPlaceholder}' -d grant_type=client_credentials`,
    )}
    <h3>${a.usage}</h3>
    ${usageChart(t, fillDays(days, usage))}
    <form method="post" action="/console/apps/${app.id}/tokens/revoke">
      ${csrfField(req.csrf)}
      <p class="hint">${a.revokeTokensHint}</p>
      <button type="submit" class="secondary">${a.revokeTokens}</button>
    </form>
  </section>`;
}

export const appDetail: Handler<ConsoleDeps> = async (req, deps) => detailPage(req, deps, await ownApp(req, deps));

/** POST /console/apps/:id/tokens/revoke: every machine token of the app stops at once. */
export const revokeAppTokens: Handler<ConsoleDeps> = async (req, deps) => {
  const app = await ownApp(req, deps);
  const a = req.t.console.apps;
  try {
    await deps.clients.revokeMachineTokens(app.id, owner(req));
  } catch (err) {
    if (!(err instanceof AppValidationError)) throw err;
    return redirect(`/console/apps/${app.id}`, { kind: 'error', text: a.problems('')[err.problem] });
  }
  req.ctx.state.log.info({ event: 'console.app_tokens_revoked', clientId: app.id }, 'machine tokens revoked in the console');
  return redirect(`/console/apps/${app.id}`, { kind: 'ok', text: a.tokensRevoked });
};

export const updateApp: Handler<ConsoleDeps> = async (req, deps) => {
  const app = await ownApp(req, deps);
  const values = { ...appForm.parse(req.form), type: app.type };
  try {
    const updated = await deps.clients.update(
      app.id,
      {
        name: values.name,
        serviceName: values.serviceName,
        redirectUris: lines(values.redirectUris),
        scopes: values.scopes,
        ...machineInput(values),
        backchannelLogoutUri: values.backchannelLogoutUri,
      },
      owner(req),
    );
    // A new redirect address or scope needing approval sends an approved app back to review (AppService.update): said.
    const backInReview = app.state === 'active' && updated.state === 'testing';
    return redirect(`/console/apps/${app.id}`, {
      kind: 'ok',
      text: backInReview ? req.t.console.apps.backInReview : req.t.console.apps.saved,
    });
  } catch (err) {
    if (!(err instanceof AppValidationError)) throw err;
    return detailPage(req, deps, app, values, [problemError(req.t, err)]);
  }
};

export const rotateAppSecret: Handler<ConsoleDeps> = async (req, deps) => {
  const app = await ownApp(req, deps);
  const a = req.t.console.apps;
  const rotated = await deps.clients.rotateSecret(app.id, owner(req));
  req.ctx.state.log.info({ event: 'console.app_secret_rotated', clientId: app.id }, 'OAuth app secret rotated in the console');
  return redirect(`/console/apps/${app.id}`, { kind: 'ok', text: a.rotated, secret: { label: a.newSecret, value: rotated.secret } });
};

export const deleteApp: Handler<ConsoleDeps> = async (req, deps) => {
  const app = await ownApp(req, deps);
  const a = req.t.console.apps;
  if (!z.object({ confirm: ticked() }).parse(req.form).confirm)
    return detailPage(req, deps, app, undefined, [{ field: 'confirm', message: a.confirmNeeded }]);
  const deleted = await deps.clients.delete(app.id, owner(req));
  req.ctx.state.log.info({ event: 'console.app_deleted', clientId: app.id, revoked: deleted.revoked }, 'OAuth app deleted in the console');
  return redirect('/console/apps', { kind: 'ok', text: a.deleted });
};
