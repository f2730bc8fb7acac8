import { providerCookieNames } from '../../oauth/constants.js';
import type { SignIn } from '../../oauth/sign-ins.js';
import { actionCard, csrfField, table, when } from '../web/components.js';
import { html } from '../web/html.js';
import { page, redirect, type Handler, type PageRequest } from '../web/routes.js';
import { WEB_PATHS } from '../web/web.js';
import type { ConsoleDeps } from './deps.js';

const LIST = '/console/sessions';
const accountOf = (req: PageRequest) => req.account?.accountId ?? 0;

/**
 * The login session of the asking browser: oidc-provider's session cookie holds its id (`jti`).
 * Its signature is not checked here; it only marks a row, and a forged value matches no session.
 */
const currentCookie = (req: PageRequest, deps: ConsoleDeps) =>
  req.ctx.cookies.get(providerCookieNames(deps.web.secure).session) || undefined;

function deviceOf(t: PageRequest['t'], s: SignIn): string {
  const parts = [s.browser, s.os].filter((p): p is string => p !== null);
  return parts.length > 0 ? parts.join(' · ') : t.mySignIns.unknown;
}

/** GET /console/sessions: the person's sign-ins at the authorization server, this browser's marked. */
export const signInList: Handler<ConsoleDeps> = async (req, deps) => {
  const { t } = req;
  const m = t.mySignIns;
  const list = await deps.signIns.list(accountOf(req), currentCookie(req, deps));
  const others = list.filter((s) => !s.current).length;
  return page(
    m.title,
    html`<p>${m.intro}</p>
      ${table(t, {
        columns: [m.device, m.signedInAt, m.lastUsed, m.actions],
        rows: list,
        empty: m.none,
        cells: (s) => [
          {
            content: html`<span title="${s.userAgent ?? ''}">${deviceOf(t, s)}</span>
              ${s.current ? html`<br /><span class="tag" data-current="yes">${m.current}</span>` : ''}
              ${s.remembered ? html`<br /><span class="muted">${m.remembered}</span>` : ''}`,
            rowHeader: true,
          },
          when(deps, t, s.signedInAt ? new Date(s.signedInAt) : null),
          when(deps, t, s.lastUsedAt ? new Date(s.lastUsedAt) : null),
          html`<form method="post" action="${LIST}/${encodeURIComponent(s.id)}/end">
            ${csrfField(req.csrf)}
            <button type="submit" class="danger" aria-label="${m.endLabel(deviceOf(t, s))}">${m.end}</button>
          </form>`,
        ],
      })}
      ${
        others > 0
          ? actionCard({
              id: 'end-others',
              title: m.endOthers,
              hint: m.endOthersHint,
              action: `${LIST}/end-others`,
              csrf: req.csrf,
              kind: 'secondary',
            })
          : ''
      }`,
  );
};

/** POST /console/sessions/:id/end: ends one sign-in; ending this browser's also ends its console session. */
export const endSignIn: Handler<ConsoleDeps> = async (req, deps) => {
  const m = req.t.mySignIns;
  const id = req.param('id');
  const mine = await deps.signIns.list(accountOf(req), currentCookie(req, deps));
  const target = mine.find((s) => s.id === id);
  if (!target || !(await deps.signIns.end(accountOf(req), id))) return redirect(LIST, { kind: 'error', text: m.notFound });
  req.ctx.state.log.info(
    { event: 'account.sign_in_ended', accountId: accountOf(req), current: target.current },
    'a sign-in ended by its owner',
  );
  if (!target.current) return redirect(LIST, { kind: 'ok', text: m.ended });
  deps.web.sessions.clear(req.ctx);
  return redirect(WEB_PATHS.signedOut);
};

/** POST /console/sessions/end-others: ends every sign-in but this browser's. */
export const endOtherSignIns: Handler<ConsoleDeps> = async (req, deps) => {
  const ended = await deps.signIns.endOthers(accountOf(req), currentCookie(req, deps));
  req.ctx.state.log.info(
    { event: 'account.other_sign_ins_ended', accountId: accountOf(req), ended },
    'other sign-ins ended by their owner',
  );
  return redirect(LIST, { kind: 'ok', text: req.t.mySignIns.endedOthers(ended) });
};
