import type { AppMiddleware } from '../../http/context.js';
import { html } from '../../http/web/html.js';
import { isLoopback } from '../../http/tls.js';
import { ACCOUNT_PATHS } from '../../oauth/constants.js';
import type { Outbox } from '../../oauth/mail.js';
import { formatDateTime } from '../console/ui.js';
import type { WebKit } from '../web/index.js';

/**
 * GET /dev/outbox: the mails of a process without SMTP_URL (development and tests; production
 * refuses to start without it), so the sign-up works with no mail server. Only for a browser on
 * this machine: the connection must come from a loopback address and not through a proxy (a
 * proxy on this machine would make every visitor look local). Anything else is a 404.
 */
export function outboxPage(outbox: Outbox | undefined, kit: WebKit, timeZone: string): AppMiddleware {
  return async (ctx, next) => {
    if (ctx.path !== ACCOUNT_PATHS.outbox || ctx.method !== 'GET') return next();
    const direct = !ctx.get('x-forwarded-for') && !ctx.get('forwarded');
    if (!outbox || !direct || !isLoopback(ctx.req.socket.remoteAddress ?? '')) return next();
    const lang = kit.lang(ctx);
    const ko = lang === 'ko';
    const mails = outbox.list();
    kit.page(ctx, 200, {
      product: { href: '/console', label: ko ? '캠퍼스 데이터 서비스' : 'Campus Data Service' },
      nav: [],
      title: ko ? '개발용 메일함' : 'Development outbox',
      content: html`<p class="hint">
          ${
            ko
              ? 'SMTP_URL이 설정되지 않아 메일을 보내지 않고 여기에 보관합니다 (최근 50통, 이 컴퓨터에서만 보임).'
              : 'SMTP_URL is not set, so mails are kept here instead of being sent (the last 50, visible on this machine only).'
          }
        </p>
        ${mails.length === 0 ? html`<p>${ko ? '메일이 없습니다.' : 'No mail yet.'}</p>` : ''}
        ${mails.map(
          (mail) =>
            html`<article class="card mail">
              <h2>${mail.subject}</h2>
              <p class="muted">${ko ? '받는 사람' : 'To'}: ${mail.to} · ${formatDateTime(lang, mail.at, timeZone, { ko: '', en: '' })}</p>
              <pre>${mail.text}</pre>
            </article>`,
        )}`,
    });
  };
}
