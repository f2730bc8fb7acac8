import type { AppContext } from '../../http/context.js';
import { secretBox, snippet } from './components.js';
import type { Flash } from './flash.js';
import { html, type Html } from './html.js';
import type { Lang } from './lang.js';
import type { Texts } from './texts/index.js';

/**
 * The one shell of every page (the front door, the login pages, sign-up, both consoles, the error
 * pages): a header with the school's name, the signed-in person's navigation and the language
 * switch; the section's navigation (a console's pages); the page's heading, its flash and its
 * content. One stylesheet, one small script on the pages that show a value once (its copy
 * button), and the passkey scripts on the pages that offer passkeys (passkeyScripts), all served
 * by us (./assets.ts): the Content-Security-Policy allows no inline code.
 */

export interface NavItem {
  readonly href: string;
  readonly label: string;
}

/** A family of pages with a home and a navigation of its own (a console). */
export interface Section {
  readonly label: string;
  readonly home: string;
  readonly nav: readonly NavItem[];
}

/** Where the shell's links go (absolute addresses when the surfaces are served at different origins). */
export interface SiteLinks {
  readonly home: string;
  readonly console: string;
  readonly admin: string;
  readonly docs: string;
  readonly signIn: string;
  readonly signOut: string;
}

export interface ShellInput {
  readonly lang: Lang;
  readonly t: Texts;
  readonly schoolName: string;
  readonly links: SiteLinks;
  /** The page's heading and title. */
  readonly title: string;
  /** The current path: its navigation entry is marked as the current page. */
  readonly path: string;
  /** The same page in the other language. */
  readonly switchLangHref: string;
  readonly section?: Section | undefined;
  /** The signed-in person (their menu and the sign-out form with its CSRF token); none on the login pages. */
  readonly person?: { readonly email: string; readonly staff: boolean; readonly signOutCsrf: string } | undefined;
  /** Pages of one small form (sign-in, consent, sign-up) sit in a narrow column; no menu is shown. */
  readonly narrow?: boolean | undefined;
  readonly flash?: Flash | undefined;
  readonly content: Html;
}

/** Renders a whole page. */
export function renderShell(input: ShellInput): string {
  const { t, links } = input;
  const current = (href: string, home: string) => input.path === href || (href !== home && input.path.startsWith(`${href}/`));
  const ariaCurrent = (on: boolean) => (on ? html`aria-current="page"` : '');
  const other: Lang = input.lang === 'ko' ? 'en' : 'ko';
  const person = input.person
    ? html`<li><a href="${links.console}">${t.shell.console}</a></li>
        ${input.person.staff ? html`<li><a href="${links.admin}">${t.shell.admin}</a></li>` : ''}
        <li><a href="${links.docs}">${t.shell.docs}</a></li>
        <li class="who"><span class="visually-hidden">${t.shell.signedInAs}</span> ${input.person.email}</li>
        <li>
          <form method="post" action="${links.signOut}">
            <input type="hidden" name="csrf" value="${input.person.signOutCsrf}" />
            <button type="submit" class="link">${t.shell.signOut}</button>
          </form>
        </li>`
    : html`<li><a href="${links.docs}">${t.shell.docs}</a></li>
        <li><a href="${links.signIn}">${t.shell.signIn}</a></li>`;
  const section = input.section;
  const flash = input.flash;
  return html`<!doctype html>
    <html lang="${input.lang}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${input.title} · ${section ? `${section.label} · ` : ''}${input.schoolName}</title>
        <link rel="icon" href="/favicon.ico" sizes="any" />
        <link rel="stylesheet" href="${ASSETS_PATH}/web.css" />
        ${flash?.secret ? html`<script src="${ASSETS_PATH}/web.js" defer></script>` : ''}
      </head>
      <body>
        <a class="skip" href="#content">${t.shell.skip}</a>
        <header class="top">
          <div class="bar">
            <a class="brand" href="${links.home}"
              ><span class="school">${input.schoolName}</span> <span class="service">${t.service}</span></a
            >
            ${
              input.narrow
                ? ''
                : html`<nav class="person" aria-label="${t.shell.personNav}">
                    <ul>
                      ${person}
                    </ul>
                  </nav>`
            }
            <a class="lang" href="${input.switchLangHref}" lang="${other}" hreflang="${other}">${t.shell.switchTo}</a>
          </div>
        </header>
        ${
          section
            ? html`<nav class="section" aria-label="${t.shell.sectionNav(section.label)}">
                <div class="inner">
                  <a class="section-home" href="${section.home}" ${ariaCurrent(input.path === section.home)}>${section.label}</a>
                  <ul>
                    ${section.nav.map((item) => html`<li><a href="${item.href}" ${ariaCurrent(current(item.href, section.home))}>${item.label}</a></li>`)}
                  </ul>
                </div>
              </nav>`
            : ''
        }
        <main id="content" tabindex="-1" ${input.narrow ? html`class="narrow"` : ''}>
          <h1>${input.title}</h1>
          ${
            flash
              ? html`<p class="flash ${flash.kind}" role="${flash.kind === 'error' ? 'alert' : 'status'}">${flash.text}</p>
                  ${flash.secret ? secretBox(t, 'shown-once', flash.secret.label, flash.secret.value) : ''}
                  ${(flash.snippets ?? []).map((s, i) => snippet(t, `snippet-${i}`, s.label, s.code))}`
              : ''
          }
          ${input.content}
        </main>
      </body>
    </html>`.text;
}

/** Where the shared assets are served (./assets.ts). */
export const ASSETS_PATH = '/assets';

/** The passkey scripts (./assets.ts): @simplewebauthn/browser's bundle, and ours (web/assets/passkeys.js), which uses it. */
export const PASSKEY_SCRIPTS = { webauthn: `${ASSETS_PATH}/webauthn.js`, page: `${ASSETS_PATH}/passkeys.js` } as const;

/** The tags of the passkey scripts, for a page that offers passkeys (they run in this order, after the page is read). */
export function passkeyScripts(): Html {
  return html`<script src="${PASSKEY_SCRIPTS.webauthn}" defer></script>
    <script src="${PASSKEY_SCRIPTS.page}" defer></script>`;
}

/**
 * Headers of every page: only our own stylesheet and script, no framing (clickjacking), nothing
 * cached, no Referer to other sites (the login pages' addresses carry interaction ids; a
 * same-origin Referer keeps the Origin header of our own form posts, which the CSRF check reads).
 * Forms post only to ourselves, except on the OAuth pages (login, consent, logout), whose posts
 * end in a redirect to the app, which `form-action` would block in browsers that apply it to
 * redirects; their one script is the passkey sign-in's, which fetches its options from us.
 */
export function setPageHeaders(ctx: Pick<AppContext, 'set'>, oauth = false): void {
  const scriptsAndForms = oauth ? "script-src 'self'; connect-src 'self'; " : "script-src 'self'; form-action 'self'; ";
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'self'; img-src 'self' data:; ${scriptsAndForms}frame-ancestors 'none'; base-uri 'none'`,
  );
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('Cache-Control', 'no-store');
}

/** Writes a rendered page. */
export function sendPage(ctx: AppContext, status: number, page: string, oauth = false): void {
  setPageHeaders(ctx, oauth);
  ctx.status = status;
  ctx.type = 'html';
  ctx.body = page;
}
