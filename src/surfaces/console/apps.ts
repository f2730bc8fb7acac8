import Router from '@koa/router';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { html, type Html } from '../../http/web/html.js';
import type { Lang } from '../../http/web/lang.js';
import {
  ClientValidationError,
  MAX_APPS_PER_ACCOUNT,
  MAX_CLIENT_NAME_LENGTH,
  MAX_REDIRECT_URIS,
  type ClientProblem,
  type ClientSummary,
} from '../../oauth/clients.js';
import { OAUTH_SCOPES, OPENID, SELF_READ } from '../../oauth/constants.js';
import type { WebKit } from '../web/index.js';
import { formValues } from './keys.js';
import { consoleShell, notFound, pageRenderer, redirectWithFlash, when } from './nav.js';
import type { ConsoleServices } from './services.js';
import { choices, csrfField, errorSummary, field, textArea, type FieldError } from './ui.js';

const TEXT = {
  ko: {
    title: 'OAuth 앱',
    intro: (n: number) => `"학교 계정으로 로그인"을 쓰는 앱을 등록합니다. 한 계정에 앱을 ${n}개까지 등록할 수 있습니다.`,
    register: '새 앱 등록',
    none: '등록한 앱이 없습니다.',
    name: '앱 이름',
    serviceName: '서비스 이름 (로그인 화면에 보임)',
    serviceHint: '예: "GSM 동아리 출석부". 비워 두면 앱 이름이 보입니다.',
    redirectUris: `리디렉션 주소 (한 줄에 하나, 최대 ${MAX_REDIRECT_URIS}개)`,
    redirectHint: '정확히 같은 문자열만 허용됩니다. 운영 환경에서는 https (또는 127.0.0.1의 http)만 쓸 수 있습니다.',
    type: '앱 종류',
    confidential: '기밀 클라이언트 (서버가 있는 앱: 비밀 값을 보관할 수 있음)',
    public: '공개 클라이언트 (모바일·브라우저 앱: 비밀 값 없이 PKCE만 사용)',
    scopes: '요청할 수 있는 권한',
    scopeText: { [SELF_READ]: '내 학생 정보 읽기 (userinfo)', [OPENID]: '로그인 확인 (ID 토큰)' } as Record<string, string>,
    registerButton: '등록하기',
    registered: '앱을 등록했습니다.',
    secretLabel: '클라이언트 비밀 값 (client_secret)',
    clientId: '클라이언트 ID (client_id)',
    granted: '허용한 계정 수',
    createdAt: '등록한 날',
    typeShort: { confidential: '기밀', public: '공개' },
    edit: '설정 바꾸기',
    save: '저장',
    saved: '설정을 저장했습니다.',
    rotate: '비밀 값 다시 발급',
    rotateHint: '새 비밀 값을 발급하면 이전 값은 바로 멈춥니다. 앱 서버의 값을 함께 바꾸세요.',
    rotated: '새 비밀 값을 발급했습니다.',
    newSecret: '새 클라이언트 비밀 값',
    delete: '앱 삭제',
    deleteHint: '앱과, 이 앱에 허용된 모든 로그인·토큰이 바로 삭제됩니다.',
    deleteConfirm: '이 앱과 그 토큰을 모두 삭제하는 것을 이해했습니다',
    confirmNeeded: '삭제하려면 확인란을 선택하세요.',
    deleted: '앱을 삭제했습니다.',
    back: '앱 목록',
    problems: {
      unknown_client: '앱을 찾을 수 없습니다.',
      name: `앱 이름을 1~${MAX_CLIENT_NAME_LENGTH}자로 입력하세요.`,
      service_name: `서비스 이름은 ${MAX_CLIENT_NAME_LENGTH}자 이하여야 합니다.`,
      redirect_uri_missing: '리디렉션 주소를 하나 이상 입력하세요.',
      redirect_uri_invalid: (uri: string) => `${uri}: http(s)로 시작하는 완전한 주소여야 합니다.`,
      redirect_uri_fragment: (uri: string) => `${uri}: # 뒷부분(fragment)이 있으면 안 됩니다.`,
      redirect_uri_not_https: (uri: string) => `${uri}: 운영 환경에서는 https 주소(또는 127.0.0.1의 http)만 쓸 수 있습니다.`,
      too_many_redirect_uris: `리디렉션 주소는 ${MAX_REDIRECT_URIS}개까지입니다.`,
      scopes: '권한을 하나 이상 고르세요.',
      pkce: 'PKCE 설정이 올바르지 않습니다.',
      public_has_no_secret: '공개 클라이언트에는 비밀 값이 없습니다.',
      too_many_apps: `앱은 ${MAX_APPS_PER_ACCOUNT}개까지 등록할 수 있습니다. 쓰지 않는 앱을 삭제한 뒤 등록하세요.`,
    },
  },
  en: {
    title: 'OAuth apps',
    intro: (n: number) => `Register the apps that use "Sign in with the school". An account may register up to ${n} apps.`,
    register: 'Register an app',
    none: 'No apps registered yet.',
    name: 'App name',
    serviceName: 'Service name (shown on the login page)',
    serviceHint: 'e.g. "GSM club attendance". When empty, the app name is shown.',
    redirectUris: `Redirect addresses (one per line, at most ${MAX_REDIRECT_URIS})`,
    redirectHint: 'Matched as exact strings. In production only https (or http on 127.0.0.1) is allowed.',
    type: 'Kind of app',
    confidential: 'Confidential client (an app with a server: it can keep a secret)',
    public: 'Public client (a mobile or browser app: no secret, PKCE only)',
    scopes: 'Scopes it may ask for',
    scopeText: { [SELF_READ]: 'Read the user’s own student record (userinfo)', [OPENID]: 'Confirm who signed in (an ID token)' } as Record<
      string,
      string
    >,
    registerButton: 'Register',
    registered: 'The app has been registered.',
    secretLabel: 'Client secret (client_secret)',
    clientId: 'Client ID (client_id)',
    granted: 'Accounts that allowed it',
    createdAt: 'Registered',
    typeShort: { confidential: 'confidential', public: 'public' },
    edit: 'Settings',
    save: 'Save',
    saved: 'The settings have been saved.',
    rotate: 'Issue a new secret',
    rotateHint: 'The previous secret stops working at once. Update it on your app’s server too.',
    rotated: 'A new secret has been issued.',
    newSecret: 'New client secret',
    delete: 'Delete the app',
    deleteHint: 'The app, and every sign-in and token given to it, are deleted at once.',
    deleteConfirm: 'I understand that the app and all its tokens will be deleted',
    confirmNeeded: 'Tick the box to delete the app.',
    deleted: 'The app has been deleted.',
    back: 'All apps',
    problems: {
      unknown_client: 'The app does not exist.',
      name: `Enter an app name of 1 to ${MAX_CLIENT_NAME_LENGTH} characters.`,
      service_name: `The service name must be at most ${MAX_CLIENT_NAME_LENGTH} characters.`,
      redirect_uri_missing: 'Enter at least one redirect address.',
      redirect_uri_invalid: (uri: string) => `${uri}: must be a complete address starting with http(s).`,
      redirect_uri_fragment: (uri: string) => `${uri}: must not have a # fragment.`,
      redirect_uri_not_https: (uri: string) => `${uri}: production allows only https (or http on 127.0.0.1).`,
      too_many_redirect_uris: `At most ${MAX_REDIRECT_URIS} redirect addresses are allowed.`,
      scopes: 'Choose at least one scope.',
      pkce: 'The PKCE setting is not valid.',
      public_has_no_secret: 'A public client has no secret.',
      too_many_apps: `You may register at most ${MAX_APPS_PER_ACCOUNT} apps. Delete one you no longer use first.`,
    },
  },
} as const;

/** The form field each refusal belongs to. */
const FIELD_OF: Record<ClientProblem, string> = {
  unknown_client: 'name',
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
};

interface AppForm {
  name: string;
  serviceName: string;
  redirectUris: string;
  type: string;
  scopes: string[];
}

/** The developer console's OAuth apps: register, edit, rotate the secret, delete; how many accounts granted each. */
export function appPages(kit: WebKit, services: ConsoleServices): AppMiddleware {
  const router = new Router<RequestState>({ prefix: '/console/apps' });
  const render = pageRenderer(kit, services, consoleShell);
  const signedIn = kit.requireAccount();
  const accountId = (ctx: AppContext) => ctx.state.account?.accountId ?? 0;
  const owner = (ctx: AppContext) => ({ ownerAccountId: accountId(ctx) });

  router.get('/', signedIn, async (ctx) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const apps = await services.clients.listOwnedBy(accountId(ctx));
    const granted = await Promise.all(apps.map((app) => services.clients.grantingAccounts(app.id)));
    render(
      ctx,
      200,
      t.title,
      html`<p>${t.intro(MAX_APPS_PER_ACCOUNT)}</p>
        <p>
          <a class="button" href="/console/apps/new">${t.register}</a> <span class="muted">${apps.length} / ${MAX_APPS_PER_ACCOUNT}</span>
        </p>
        ${
          apps.length === 0
            ? html`<p>${t.none}</p>`
            : html`<div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">${t.name}</th>
                      <th scope="col">${t.serviceName.split(' (')[0]}</th>
                      <th scope="col">${t.type}</th>
                      <th scope="col">${t.granted}</th>
                      <th scope="col">${t.createdAt}</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${apps.map(
                      (app, i) =>
                        html`<tr>
                          <td><a href="/console/apps/${app.id}">${app.name}</a></td>
                          <td>${app.serviceName ?? '—'}</td>
                          <td>${t.typeShort[app.type]}</td>
                          <td>${String(granted[i] ?? 0)}</td>
                          <td>${when(services, lang, app.createdAt)}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </div>`
        }`,
    );
  });

  const newPage = (ctx: AppContext, status: number, values: AppForm, errors: FieldError[] = []) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    render(
      ctx,
      status,
      t.register,
      html`<p><a href="/console/apps">← ${t.back}</a></p>
        ${errorSummary(lang, errors)}
        <form method="post" action="/console/apps" class="card">
          ${csrfField(kit.csrf(ctx))} ${appFields(lang, values, errors, true)}
          <div class="actions"><button type="submit">${t.registerButton}</button></div>
        </form>`,
    );
  };
  router.get('/new', signedIn, async (ctx) =>
    newPage(ctx, 200, { name: '', serviceName: '', redirectUris: '', type: 'confidential', scopes: [SELF_READ] }),
  );

  router.post('/', signedIn, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const values = readForm(ctx);
    try {
      const created = await services.clients.createOwned(accountId(ctx), {
        name: values.name,
        serviceName: values.serviceName,
        redirectUris: lines(values.redirectUris),
        scopes: values.scopes,
        public: values.type === 'public',
      });
      ctx.state.log.info({ event: 'console.app_registered', clientId: created.client.id }, 'OAuth app registered in the console');
      redirectWithFlash(ctx, services, `/console/apps/${created.client.id}`, {
        kind: 'ok',
        text: t.registered,
        ...(created.secret ? { secret: { label: t.secretLabel, value: created.secret } } : {}),
      });
    } catch (err) {
      if (!(err instanceof ClientValidationError)) throw err;
      newPage(ctx, 422, values, [problemError(lang, err)]);
    }
  });

  const detailPage = async (ctx: AppContext, status: number, app: ClientSummary, values?: AppForm, errors: FieldError[] = []) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const granted = await services.clients.grantingAccounts(app.id);
    const base = `/console/apps/${app.id}`;
    const form = values ?? {
      name: app.name,
      serviceName: app.serviceName ?? '',
      redirectUris: app.redirectUris.join('\n'),
      type: app.type,
      scopes: app.scopes,
    };
    render(
      ctx,
      status,
      app.name,
      html`<p><a href="/console/apps">← ${t.back}</a></p>
        <div class="card">
          <dl class="facts">
            <dt>${t.clientId}</dt>
            <dd><code id="client-id">${app.id}</code></dd>
            <dt>${t.type}</dt>
            <dd>${t.typeShort[app.type]}</dd>
            <dt>${t.granted}</dt>
            <dd>${String(granted)}</dd>
            <dt>${t.createdAt}</dt>
            <dd>${when(services, lang, app.createdAt)}</dd>
          </dl>
        </div>
        <section class="card" aria-labelledby="edit">
          <h2 id="edit">${t.edit}</h2>
          ${errorSummary(lang, errors)}
          <form method="post" action="${base}">
            ${csrfField(kit.csrf(ctx))} ${appFields(lang, form, errors, false)}
            <div class="actions"><button type="submit">${t.save}</button></div>
          </form>
        </section>
        ${
          app.type === 'confidential'
            ? html`<section class="card" aria-labelledby="rotate">
                <h2 id="rotate">${t.rotate}</h2>
                <p class="hint">${t.rotateHint}</p>
                <form method="post" action="${base}/secret">
                  ${csrfField(kit.csrf(ctx))}
                  <button type="submit" class="secondary">${t.rotate}</button>
                </form>
              </section>`
            : ''
        }
        <section class="card" aria-labelledby="delete">
          <h2 id="delete">${t.delete}</h2>
          <p class="hint">${t.deleteHint}</p>
          <form method="post" action="${base}/delete">
            ${csrfField(kit.csrf(ctx))}
            ${choices({ name: 'confirm', legend: t.delete, type: 'checkbox', options: [{ value: 'yes', label: t.deleteConfirm }], checked: [], errors })}
            <div class="actions"><button type="submit" class="danger">${t.delete}</button></div>
          </form>
        </section>`,
    );
  };

  /** The signed-in account's app of the address, or a 404 page (another's app reads the same). */
  const ownApp = async (ctx: AppContext): Promise<ClientSummary | undefined> => {
    try {
      return await services.clients.get(String(ctx.params['id'] ?? ''), owner(ctx));
    } catch (err) {
      if (!(err instanceof ClientValidationError)) throw err;
      notFound(render, ctx, kit.lang(ctx));
      return undefined;
    }
  };

  router.get('/:id', signedIn, async (ctx) => {
    const app = await ownApp(ctx);
    if (app) await detailPage(ctx, 200, app);
  });

  router.post('/:id', signedIn, kit.form, async (ctx) => {
    const app = await ownApp(ctx);
    if (!app) return;
    const lang = kit.lang(ctx);
    const values = { ...readForm(ctx), type: app.type };
    try {
      await services.clients.update(
        app.id,
        { name: values.name, serviceName: values.serviceName, redirectUris: lines(values.redirectUris), scopes: values.scopes },
        owner(ctx),
      );
      redirectWithFlash(ctx, services, `/console/apps/${app.id}`, { kind: 'ok', text: TEXT[lang].saved });
    } catch (err) {
      if (!(err instanceof ClientValidationError)) throw err;
      await detailPage(ctx, 422, app, values, [problemError(lang, err)]);
    }
  });

  router.post('/:id/secret', signedIn, kit.form, async (ctx) => {
    const app = await ownApp(ctx);
    if (!app) return;
    const t = TEXT[kit.lang(ctx)];
    const rotated = await services.clients.rotateSecret(app.id, owner(ctx));
    ctx.state.log.info({ event: 'console.app_secret_rotated', clientId: app.id }, 'OAuth app secret rotated in the console');
    redirectWithFlash(ctx, services, `/console/apps/${app.id}`, {
      kind: 'ok',
      text: t.rotated,
      secret: { label: t.newSecret, value: rotated.secret },
    });
  });

  router.post('/:id/delete', signedIn, kit.form, async (ctx) => {
    const app = await ownApp(ctx);
    if (!app) return;
    const lang = kit.lang(ctx);
    if (kit.fields(ctx)['confirm'] !== 'yes')
      return detailPage(ctx, 422, app, undefined, [{ field: 'confirm', message: TEXT[lang].confirmNeeded }]);
    const deleted = await services.clients.delete(app.id, owner(ctx));
    ctx.state.log.info({ event: 'console.app_deleted', clientId: app.id, revoked: deleted.revoked }, 'OAuth app deleted in the console');
    redirectWithFlash(ctx, services, '/console/apps', { kind: 'ok', text: TEXT[lang].deleted });
  });

  const routes = router.routes();
  return (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next);
}

/** The fields of registering and editing an app (the kind is chosen once, at registration). */
function appFields(lang: Lang, values: AppForm, errors: FieldError[], withType: boolean): Html {
  const t = TEXT[lang];
  return html`${field({ name: 'name', label: t.name, value: values.name, required: true, maxlength: MAX_CLIENT_NAME_LENGTH, errors })}
  ${field({ name: 'serviceName', label: t.serviceName, value: values.serviceName, hint: t.serviceHint, maxlength: MAX_CLIENT_NAME_LENGTH, errors })}
  ${textArea({ name: 'redirectUris', label: t.redirectUris, value: values.redirectUris, hint: t.redirectHint, required: true, rows: 3, errors })}
  ${
    withType
      ? choices({
          name: 'type',
          legend: t.type,
          type: 'radio',
          options: [
            { value: 'confidential', label: t.confidential },
            { value: 'public', label: t.public },
          ],
          checked: [values.type],
          errors,
        })
      : ''
  }
  ${choices({
    name: 'scopes',
    legend: t.scopes,
    type: 'checkbox',
    options: OAUTH_SCOPES.map((scope) => ({ value: scope, label: scope, hint: t.scopeText[scope] ?? '' })),
    checked: values.scopes,
    errors,
  })}`;
}

function readForm(ctx: AppContext): AppForm {
  const body: unknown = ctx.request.body;
  const text = (name: string) => {
    const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
    return typeof value === 'string' ? value : '';
  };
  return {
    name: text('name'),
    serviceName: text('serviceName'),
    redirectUris: text('redirectUris'),
    type: text('type') === 'public' ? 'public' : 'confidential',
    scopes: formValues(ctx, 'scopes'),
  };
}

/** The non-empty lines of a text area. */
function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}

function problemError(lang: Lang, err: ClientValidationError): FieldError {
  const message = TEXT[lang].problems[err.problem];
  return { field: FIELD_OF[err.problem], message: typeof message === 'function' ? message(err.detail ?? '') : message };
}
