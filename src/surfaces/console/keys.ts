import Router from '@koa/router';
import { addDays, todayIn } from '../../calendar.js';
import {
  API_SCOPES,
  ApiKeyCommandError,
  MAX_ACTIVE_KEYS_PER_ACCOUNT,
  MAX_KEY_LABEL_LENGTH,
  MAX_ROTATION_GRACE_SECONDS,
  type ApiKeySummary,
  type ApiScope,
} from '../../data/api-keys.js';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { html, type Html } from '../../http/web/html.js';
import type { Lang } from '../../http/web/lang.js';
import type { WebKit } from '../web/index.js';
import { fillDays, usageChart } from './chart.js';
import { consoleShell, notFound, pageRenderer, redirectWithFlash, when } from './nav.js';
import type { ConsoleServices } from './services.js';
import { choices, csrfField, errorSummary, field, type FieldError } from './ui.js';

/** Days the usage chart shows, today included. */
const CHART_DAYS = 30;
const MAX_GRACE_HOURS = MAX_ROTATION_GRACE_SECONDS / 3600;

const SCOPE_TEXT: Record<ApiScope, { ko: string; en: string }> = {
  STUDENT_READ: { ko: '학생 정보 (/v1/students)', en: 'Students (/v1/students)' },
  CLUB_READ: { ko: '동아리 (/v1/clubs)', en: 'Clubs (/v1/clubs)' },
  PROJECT_READ: { ko: '프로젝트 (/v1/projects)', en: 'Projects (/v1/projects)' },
  NEIS_READ: { ko: '급식·학사일정·시간표 (/v1/neis/*)', en: 'Meals, calendar, timetables (/v1/neis/*)' },
};

const TEXT = {
  ko: {
    title: 'API 키',
    intro: (n: number) =>
      `데이터 API를 부를 때 X-API-KEY 헤더에 넣는 키입니다. 키는 30일 동안 유효하고, 한 계정에 활성 키를 ${n}개까지 둘 수 있습니다.`,
    create: '새 키 만들기',
    label: '이름 (무엇에 쓰는 키인지)',
    labelHint: '예: 급식 알림 앱',
    scopes: '권한 (scope)',
    noScope: '권한을 하나 이상 고르세요.',
    tooMany: (n: number) => `활성 키는 ${n}개까지입니다. 쓰지 않는 키를 폐기한 뒤 만드세요.`,
    labelTooLong: `이름은 ${MAX_KEY_LABEL_LENGTH}자 이하여야 합니다.`,
    createButton: '키 만들기',
    none: '아직 키가 없습니다.',
    prefix: '키 앞부분',
    state: '상태',
    lastUsed: '마지막 사용',
    expires: '만료',
    details: '자세히',
    states: { active: '사용 중', expired: '만료됨', revoked: '폐기됨' },
    created: '키를 만들었습니다.',
    newKey: '새 API 키',
    keyTitle: (label: string) => `API 키: ${label}`,
    unnamed: '(이름 없음)',
    createdAt: '만든 날',
    graceUntil: (prefix: string, until: string) => `이전 값 ${prefix}…은(는) ${until}까지 계속 쓸 수 있습니다.`,
    renew: '30일 연장',
    renewHint: '같은 값을 지금부터 30일 동안 쓸 수 있게 합니다.',
    renewed: '키를 연장했습니다.',
    rotate: '새 값으로 교체',
    rotateHint: '새 값을 발급합니다. 유예 시간 동안은 이전 값도 계속 작동하므로 앱을 끊김 없이 바꿀 수 있습니다.',
    grace: `이전 값 유예 시간 (0~${MAX_GRACE_HOURS}시간)`,
    graceHint: '0이면 이전 값은 바로 멈춥니다.',
    badGrace: `유예 시간은 0부터 ${MAX_GRACE_HOURS}까지의 정수(시간)여야 합니다.`,
    rotated: '키를 새 값으로 교체했습니다.',
    rotatedKey: '교체된 API 키',
    revoke: '폐기',
    revokeHint: '이 키(유예 중인 이전 값 포함)는 바로 멈추고 되살릴 수 없습니다.',
    revoked: '키를 폐기했습니다.',
    usage: '사용량',
    inactive: '폐기된 키는 연장하거나 교체할 수 없습니다.',
    back: 'API 키 목록',
  },
  en: {
    title: 'API keys',
    intro: (n: number) =>
      `Send a key in the X-API-KEY header when you call the data API. A key is valid for 30 days; an account may hold up to ${n} active keys.`,
    create: 'Create a key',
    label: 'Label (what the key is for)',
    labelHint: 'e.g. Lunch menu app',
    scopes: 'Scopes',
    noScope: 'Choose at least one scope.',
    tooMany: (n: number) => `You may hold at most ${n} active keys. Revoke one you no longer use first.`,
    labelTooLong: `The label must be at most ${MAX_KEY_LABEL_LENGTH} characters.`,
    createButton: 'Create the key',
    none: 'No keys yet.',
    prefix: 'Prefix',
    state: 'State',
    lastUsed: 'Last used',
    expires: 'Expires',
    details: 'Details',
    states: { active: 'active', expired: 'expired', revoked: 'revoked' },
    created: 'The key has been created.',
    newKey: 'New API key',
    keyTitle: (label: string) => `API key: ${label}`,
    unnamed: '(no label)',
    createdAt: 'Created',
    graceUntil: (prefix: string, until: string) => `The previous value ${prefix}… keeps working until ${until}.`,
    renew: 'Extend by 30 days',
    renewHint: 'The same value keeps working for 30 days from now.',
    renewed: 'The key has been extended.',
    rotate: 'Rotate to a new value',
    rotateHint:
      'Issues a new value. During the grace period the previous value keeps working too, so your app can switch without an outage.',
    grace: `Grace period of the previous value (0 to ${MAX_GRACE_HOURS} hours)`,
    graceHint: '0 stops the previous value at once.',
    badGrace: `The grace period must be a whole number of hours from 0 to ${MAX_GRACE_HOURS}.`,
    rotated: 'The key has been rotated.',
    rotatedKey: 'Rotated API key',
    revoke: 'Revoke',
    revokeHint: 'The key (and a previous value in its grace period) stops at once, for good.',
    revoked: 'The key has been revoked.',
    usage: 'Usage',
    inactive: 'A revoked key cannot be extended or rotated.',
    back: 'All API keys',
  },
} as const;

/** The developer console's API keys: create, list, renew, rotate with a grace period, revoke, and usage per day. */
export function keyPages(kit: WebKit, services: ConsoleServices): AppMiddleware {
  const router = new Router<RequestState>({ prefix: '/console/keys' });
  const render = pageRenderer(kit, services, consoleShell);
  const signedIn = kit.requireAccount();
  const accountId = (ctx: AppContext) => ctx.state.account?.accountId ?? 0;

  const listPage = async (ctx: AppContext, status: number, values: { label: string; scopes: string[] }, errors: FieldError[] = []) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const keys = await services.apiKeys.listOwnedBy(accountId(ctx), services.now());
    render(
      ctx,
      status,
      t.title,
      html`<p>${t.intro(MAX_ACTIVE_KEYS_PER_ACCOUNT)}</p>
        <section class="card" aria-labelledby="create-key">
          <h2 id="create-key">${t.create}</h2>
          ${errorSummary(lang, errors)}
          <form method="post" action="/console/keys">
            ${csrfField(kit.csrf(ctx))}
            ${field({ name: 'label', label: t.label, value: values.label, hint: t.labelHint, maxlength: MAX_KEY_LABEL_LENGTH, errors })}
            ${choices({
              name: 'scopes',
              legend: t.scopes,
              type: 'checkbox',
              options: API_SCOPES.map((scope) => ({ value: scope, label: scope, hint: SCOPE_TEXT[scope][lang] })),
              checked: values.scopes,
              errors,
            })}
            <div class="actions"><button type="submit">${t.createButton}</button></div>
          </form>
        </section>
        ${keys.length === 0 ? html`<p>${t.none}</p>` : keyTable(lang, keys, (k) => when(services, lang, k))}`,
    );
  };

  router.get('/', signedIn, async (ctx) => listPage(ctx, 200, { label: '', scopes: [] }));

  router.post('/', signedIn, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const fields = kit.fields(ctx);
    const scopes = formValues(ctx, 'scopes').filter((s): s is ApiScope => (API_SCOPES as readonly string[]).includes(s));
    const label = (fields['label'] ?? '').trim();
    const errors: FieldError[] = [];
    if (label.length > MAX_KEY_LABEL_LENGTH) errors.push({ field: 'label', message: t.labelTooLong });
    if (scopes.length === 0) errors.push({ field: 'scopes', message: t.noScope });
    if (errors.length === 0) {
      try {
        const issued = await services.apiKeys.issueOwned(accountId(ctx), { scopes, label: label || null }, services.now());
        ctx.state.log.info({ event: 'console.key_created', keyId: issued.summary.id }, 'API key created in the console');
        return redirectWithFlash(ctx, services, `/console/keys/${issued.summary.id}`, {
          kind: 'ok',
          text: t.created,
          secret: { label: t.newKey, value: issued.key },
        });
      } catch (err) {
        if (!(err instanceof ApiKeyCommandError)) throw err;
        errors.push({ field: 'label', message: t.tooMany(MAX_ACTIVE_KEYS_PER_ACCOUNT) });
      }
    }
    await listPage(ctx, 422, { label, scopes }, errors);
  });

  const detailPage = async (ctx: AppContext, status: number, key: ApiKeySummary, errors: FieldError[] = [], grace = '1') => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const today = todayIn(services.config.schoolTimeZone, services.now());
    const days = Array.from({ length: CHART_DAYS }, (_, i) => addDays(today, i - CHART_DAYS + 1));
    const first = days[0] ?? today;
    const usage = await services.apiKeys.usage(key.id, first, today);
    const base = `/console/keys/${key.id}`;
    const revoked = key.state === 'revoked';
    render(
      ctx,
      status,
      t.keyTitle(key.label ?? t.unnamed),
      html`<p><a href="/console/keys">← ${t.back}</a></p>
        <div class="card">
          <dl class="facts">
            <dt>${t.prefix}</dt>
            <dd><code>${key.prefix}…</code></dd>
            <dt>${t.scopes}</dt>
            <dd>${key.scopes.join(', ')}</dd>
            <dt>${t.state}</dt>
            <dd>${t.states[key.state]}</dd>
            <dt>${t.createdAt}</dt>
            <dd>${when(services, lang, key.createdAt)}</dd>
            <dt>${t.expires}</dt>
            <dd>${when(services, lang, key.expiresAt)}</dd>
            <dt>${t.lastUsed}</dt>
            <dd>${when(services, lang, key.lastUsedAt)}</dd>
          </dl>
          ${key.previous ? html`<p class="hint">${t.graceUntil(key.previous.prefix, when(services, lang, key.previous.expiresAt))}</p>` : ''}
        </div>
        <h2>${t.usage}</h2>
        ${usageChart(lang, fillDays(days, usage))}
        ${
          revoked
            ? html`<p class="hint">${t.inactive}</p>`
            : html`${errorSummary(lang, errors)}
                <section class="card" aria-labelledby="renew">
                  <h2 id="renew">${t.renew}</h2>
                  <p class="hint">${t.renewHint}</p>
                  <form method="post" action="${base}/renew">
                    ${csrfField(kit.csrf(ctx))}
                    <button type="submit" class="secondary">${t.renew}</button>
                  </form>
                </section>
                <section class="card" aria-labelledby="rotate">
                  <h2 id="rotate">${t.rotate}</h2>
                  <p class="hint">${t.rotateHint}</p>
                  <form method="post" action="${base}/rotate">
                    ${csrfField(kit.csrf(ctx))}
                    ${field({ name: 'graceHours', label: t.grace, type: 'number', value: grace, min: 0, max: MAX_GRACE_HOURS, required: true, inputmode: 'numeric', hint: t.graceHint, errors })}
                    <div class="actions"><button type="submit">${t.rotate}</button></div>
                  </form>
                </section>
                <section class="card" aria-labelledby="revoke">
                  <h2 id="revoke">${t.revoke}</h2>
                  <p class="hint">${t.revokeHint}</p>
                  <form method="post" action="${base}/revoke">
                    ${csrfField(kit.csrf(ctx))}
                    <button type="submit" class="danger">${t.revoke}</button>
                  </form>
                </section>`
        }`,
    );
  };

  /** The signed-in account's key of the address, or a 404 page (another's key reads the same). */
  const ownKey = async (ctx: AppContext): Promise<ApiKeySummary | undefined> => {
    const key = await services.apiKeys.get(String(ctx.params['id'] ?? ''), { ownerAccountId: accountId(ctx) }, services.now());
    if (!key) notFound(render, ctx, kit.lang(ctx));
    return key ?? undefined;
  };

  router.get('/:id', signedIn, async (ctx) => {
    const key = await ownKey(ctx);
    if (key) await detailPage(ctx, 200, key);
  });

  router.post('/:id/renew', signedIn, kit.form, async (ctx) => {
    const key = await ownKey(ctx);
    if (!key) return;
    const t = TEXT[kit.lang(ctx)];
    try {
      await services.apiKeys.renew(key.id, undefined, services.now(), { ownerAccountId: accountId(ctx) });
    } catch (err) {
      if (!(err instanceof ApiKeyCommandError)) throw err;
      return redirectWithFlash(ctx, services, `/console/keys/${key.id}`, { kind: 'error', text: t.inactive });
    }
    redirectWithFlash(ctx, services, `/console/keys/${key.id}`, { kind: 'ok', text: t.renewed });
  });

  router.post('/:id/rotate', signedIn, kit.form, async (ctx) => {
    const key = await ownKey(ctx);
    if (!key) return;
    const t = TEXT[kit.lang(ctx)];
    const raw = (kit.fields(ctx)['graceHours'] ?? '').trim();
    const hours = /^\d{1,2}$/.test(raw) ? Number(raw) : NaN;
    if (!(hours >= 0 && hours <= MAX_GRACE_HOURS)) return detailPage(ctx, 422, key, [{ field: 'graceHours', message: t.badGrace }], raw);
    try {
      const rotated = await services.apiKeys.rotate(key.id, services.now(), { ownerAccountId: accountId(ctx), graceSeconds: hours * 3600 });
      ctx.state.log.info({ event: 'console.key_rotated', keyId: key.id, graceHours: hours }, 'API key rotated in the console');
      redirectWithFlash(ctx, services, `/console/keys/${key.id}`, {
        kind: 'ok',
        text: t.rotated,
        secret: { label: t.rotatedKey, value: rotated.key },
      });
    } catch (err) {
      if (!(err instanceof ApiKeyCommandError)) throw err;
      redirectWithFlash(ctx, services, `/console/keys/${key.id}`, { kind: 'error', text: t.inactive });
    }
  });

  router.post('/:id/revoke', signedIn, kit.form, async (ctx) => {
    const key = await ownKey(ctx);
    if (!key) return;
    await services.apiKeys.revoke(key.id, services.now(), { ownerAccountId: accountId(ctx) });
    ctx.state.log.info({ event: 'console.key_revoked', keyId: key.id }, 'API key revoked in the console');
    redirectWithFlash(ctx, services, `/console/keys/${key.id}`, { kind: 'ok', text: TEXT[kit.lang(ctx)].revoked });
  });

  const routes = router.routes();
  return (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next);
}

/** The keys as a table: label, prefix, scopes, state, last use, expiry. */
function keyTable(lang: Lang, keys: readonly ApiKeySummary[], at: (date: Date | null) => string): Html {
  const t = TEXT[lang];
  return html`<div class="table-wrap">
    <table>
      <thead>
        <tr>
          <th scope="col">${t.label.split(' (')[0]}</th>
          <th scope="col">${t.prefix}</th>
          <th scope="col">${t.scopes}</th>
          <th scope="col">${t.state}</th>
          <th scope="col">${t.lastUsed}</th>
          <th scope="col">${t.expires}</th>
        </tr>
      </thead>
      <tbody>
        ${keys.map(
          (k) =>
            html`<tr class="${k.state === 'active' ? '' : 'inactive'}">
              <td><a href="/console/keys/${k.id}">${k.label ?? t.unnamed}</a></td>
              <td class="nowrap"><code>${k.prefix}…</code></td>
              <td>${k.scopes.join(', ')}</td>
              <td class="nowrap">${t.states[k.state]}</td>
              <td class="nowrap">${at(k.lastUsedAt)}</td>
              <td class="nowrap">${at(k.expiresAt)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** Every value of a repeated form field (checkboxes). */
export function formValues(ctx: AppContext, name: string): string[] {
  const body: unknown = ctx.request.body;
  if (typeof body !== 'object' || body === null) return [];
  const value: unknown = (body as Record<string, unknown>)[name];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
