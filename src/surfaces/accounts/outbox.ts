import { NotFoundError } from '../../errors/index.js';
import { isLoopback } from '../../http/tls.js';
import { ACCOUNT_PATHS } from '../../oauth/constants.js';
import type { Outbox } from '../../oauth/mail.js';
import { formatDateTime } from '../web/components.js';
import { html } from '../web/html.js';
import { page, type Handler, type RouteTable } from '../web/routes.js';
import type { Web } from '../web/web.js';

export interface OutboxDeps {
  /** The outbox of a process without SMTP_URL; undefined when mail is really sent. */
  readonly outbox: Outbox | undefined;
  readonly timeZone: string;
}

/**
 * GET /dev/outbox: the mails of a process without SMTP_URL (development and tests; production
 * refuses to start without it), so the sign-up works with no mail server. Only for a browser on
 * this machine: the connection must come from a loopback address and not through a proxy (a
 * proxy on this machine would make every visitor look local). Anything else is a 404.
 */
const outboxPage: Handler<OutboxDeps> = async (req, deps) => {
  const { ctx, t } = req;
  const direct = !ctx.get('x-forwarded-for') && !ctx.get('forwarded');
  if (!deps.outbox || !direct || !isLoopback(ctx.req.socket.remoteAddress ?? '')) throw new NotFoundError();
  const mails = deps.outbox.list();
  return page(
    t.outbox.title,
    html`<p class="hint">${t.outbox.intro}</p>
      ${mails.length === 0 ? html`<p>${t.outbox.none}</p>` : ''}
      ${mails.map(
        (mail) =>
          html`<article class="card mail">
            <h2>${mail.subject}</h2>
            <p class="muted">${t.outbox.to}: ${mail.to} · ${formatDateTime(t, mail.at, deps.timeZone)}</p>
            <pre>${mail.text}</pre>
          </article>`,
      )}`,
  );
};

export function outboxRoutes(web: Web): RouteTable<OutboxDeps> {
  return { access: 'anyone', csrf: web.anonymousForms, routes: [{ method: 'GET', path: ACCOUNT_PATHS.outbox, handler: outboxPage }] };
}
