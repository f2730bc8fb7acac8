import type { AppContext } from '../../http/context.js';
import { html, type Html } from '../../http/web/html.js';
import type { Lang } from '../../http/web/lang.js';
import type { NavItem } from '../../http/web/page.js';
import type { WebKit } from '../web/index.js';
import type { Flash } from './flash.js';
import type { ConsoleServices } from './services.js';
import { formatDateTime, secretBox } from './ui.js';

/** The developer console's name and navigation. */
export function consoleShell(lang: Lang): { product: NavItem; nav: NavItem[] } {
  const ko = lang === 'ko';
  return {
    product: { href: '/console', label: ko ? '개발자 콘솔' : 'Developer console' },
    nav: [
      { href: '/console/keys', label: ko ? 'API 키' : 'API keys' },
      { href: '/console/apps', label: ko ? 'OAuth 앱' : 'OAuth apps' },
      { href: '/console/connected', label: ko ? '연결된 앱' : 'Connected apps' },
      { href: '/console/account', label: ko ? '내 계정' : 'My account' },
    ],
  };
}

/** Renders a page of a console with the flash of the redirect that led here (and a value shown once). */
export type PageRenderer = (ctx: AppContext, status: number, title: string, content: Html) => void;

export function pageRenderer(
  kit: WebKit,
  services: ConsoleServices,
  shell: (lang: Lang) => { product: NavItem; nav: NavItem[] },
): PageRenderer {
  return (ctx, status, title, content) => {
    const lang = kit.lang(ctx);
    const flash: Flash | undefined = services.flashes.take(ctx);
    kit.page(ctx, status, {
      ...shell(lang),
      title,
      content: html`${flash?.secret ? secretBox(lang, 'shown-once', flash.secret.label, flash.secret.value) : ''}${content}`,
      ...(flash ? { flash: { kind: flash.kind, text: flash.text } } : {}),
    });
  };
}

/** The 404 page of a console (an id that is not there, or not yours: the same answer). */
export function notFound(render: PageRenderer, ctx: AppContext, lang: Lang): void {
  render(
    ctx,
    404,
    lang === 'ko' ? '찾을 수 없습니다' : 'Not found',
    html`<p role="alert">${lang === 'ko' ? '없거나 내 것이 아닙니다.' : 'It does not exist, or it is not yours.'}</p>`,
  );
}

/** A 303 to `location` after a change, with its flash. */
export function redirectWithFlash(ctx: AppContext, services: ConsoleServices, location: string, flash: Flash): void {
  services.flashes.set(ctx, flash);
  ctx.status = 303;
  ctx.redirect(location);
}

/** Dates of the console, in the school's time zone. */
export function when(services: ConsoleServices, lang: Lang, date: Date | null | undefined): string {
  return formatDateTime(lang, date, services.config.schoolTimeZone, { ko: '없음', en: 'never' });
}
