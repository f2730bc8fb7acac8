import type { AppContext } from '../../http/context.js';
import { cookieName } from '../../oauth/constants.js';

/** Pages are Korean first, English on request. */
export type Lang = 'ko' | 'en';
export const LANGS: readonly Lang[] = ['ko', 'en'];

/** The cookie that remembers a person's choice (set by `?lang=` on any page). */
export const LANG_COOKIE = 'campus_lang';
/** A choice is remembered for a school year. */
const LANG_COOKIE_MAX_AGE_MS = 365 * 24 * 3600 * 1000;

/** `ko`, `en`, or a BCP 47 tag of one (`en-US`); else undefined. */
export function asLang(value: unknown): Lang | undefined {
  if (typeof value !== 'string') return undefined;
  const primary = value.trim().split('-')[0]?.toLowerCase();
  return primary === 'ko' || primary === 'en' ? primary : undefined;
}

/**
 * The language of a page, in this order: the page's own `?lang=` (the language switch; it is then
 * remembered in a cookie, so the choice follows the person to every page), the remembered choice,
 * the hints of the request (an OAuth app's `ui_locales` or `lang`, space-separated tags in order of
 * preference), the browser's Accept-Language (Koa's `ctx.acceptsLanguages`), Korean.
 */
export function chooseLang(ctx: AppContext, secure: boolean, hints: readonly unknown[] = []): Lang {
  const explicit = asLang(ctx.query['lang']);
  if (explicit) {
    ctx.cookies.set(cookieName(LANG_COOKIE, secure), explicit, {
      httpOnly: true,
      sameSite: 'lax',
      secure,
      path: '/',
      maxAge: LANG_COOKIE_MAX_AGE_MS,
      overwrite: true,
    });
    return explicit;
  }
  const remembered = asLang(ctx.cookies.get(cookieName(LANG_COOKIE, secure)));
  if (remembered) return remembered;
  for (const hint of hints) {
    const tags = typeof hint === 'string' ? hint.split(/\s+/) : [];
    const hinted = tags.map(asLang).find(Boolean);
    if (hinted) return hinted;
  }
  return asLang(ctx.acceptsLanguages('ko', 'en')) ?? 'ko';
}

/** The same address in the other language (the switch in the header). */
export function otherLangHref(path: string, querystring: string, lang: Lang): string {
  const query = new URLSearchParams(querystring);
  query.set('lang', lang === 'ko' ? 'en' : 'ko');
  return `${path}?${query.toString()}`;
}
