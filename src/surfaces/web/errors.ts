import type { AccountPrincipal } from '../../auth/principal.js';
import { isStaffRole } from '../../auth/policy.js';
import type { AccountRole } from '../../data/__generated__/enums.js';
import { ForbiddenError, type AppError } from '../../errors/index.js';
import type { AppContext } from '../../http/context.js';
import { html, type Html } from './html.js';
import type { Texts } from './texts/index.js';

/** A post without a valid CSRF token, or from another site: refused with the same page everywhere (./csrf.ts). */
export class ForgedFormError extends ForbiddenError {
  constructor() {
    super('The form could not be verified: reload the page and try again.');
  }
}

/** A signed-in account without a role a page needs (the guard of ./web.ts). */
export class RoleRequiredError extends ForbiddenError {
  constructor(readonly roles: readonly AccountRole[]) {
    super(`This page needs the role ${roles.join(' or ')}.`);
  }
}

/**
 * The paths of the machine-facing surfaces: their errors stay JSON (the data envelope, OAuth
 * JSON) whatever the client accepts. The login pages live under /v1/oauth/interaction/ and are pages.
 */
const API_PATH = /^\/(?:v1|graphql|metrics|livez|readyz|\.well-known)(?:\/|$)/;
const LOGIN_PAGES = /^\/v1\/oauth\/interaction\//;

/** True when an error of this request should be a page: a page's path, and a client that prefers HTML to JSON. */
export function wantsPage(ctx: Pick<AppContext, 'path' | 'accepts'>): boolean {
  if (API_PATH.test(ctx.path) && !LOGIN_PAGES.test(ctx.path)) return false;
  return ctx.accepts('html', 'json') === 'html';
}

/** The title and body of an error page. */
export function errorView(
  t: Texts,
  error: AppError,
  person: AccountPrincipal | undefined,
  requestId: string,
  links: { home: string; console: string; admin: string; signIn: string },
): { title: string; content: Html } {
  const e = t.errors;
  const [title, text] = ((): [string, string] => {
    if (error instanceof ForgedFormError) return [e.forgedTitle, e.forged];
    if (error instanceof RoleRequiredError && person)
      return [
        e.forbiddenTitle,
        e.forbidden(
          person.email,
          error.roles.map((r) => t.roles[r]),
        ),
      ];
    switch (error.status) {
      case 403:
        return [e.forbiddenTitle, person ? e.forbidden(person.email, []) : e.forbiddenTitle];
      case 404:
      case 405:
        return [e.notFoundTitle, e.notFound];
      case 413:
        return [e.tooLargeTitle, e.tooLarge];
      case 429:
        return [e.tooManyTitle, e.tooMany];
      case 503:
        return [e.unavailableTitle, e.unavailable];
      default:
        return error.status >= 500 ? [e.serverTitle, e.server] : [e.badRequestTitle, e.badRequest];
    }
  })();
  // A refusal's own words add what the status cannot say (which parameter, which record).
  const detail = error.status === 400 || error.status === 409 ? error.safeMessage : undefined;
  return {
    title,
    content: html`<p role="alert">${text}</p>
      ${detail ? html`<p class="muted">${e.detail}: <span lang="en">${detail}</span></p>` : ''}
      ${error.status >= 500 ? html`<p class="muted">${e.requestId}: <code>${requestId}</code></p>` : ''} ${wayBack(t, person, links)}`,
  };
}

/** Where to go from an error page: home, and the consoles for a signed-in person, or sign-in. */
export function wayBack(
  t: Texts,
  person: AccountPrincipal | undefined,
  links: { home: string; console: string; admin: string; signIn: string },
): Html {
  return html`<nav class="way-back" aria-label="${t.errors.wayBack}">
    <ul>
      <li><a href="${links.home}">${t.shell.home}</a></li>
      ${
        person
          ? html`<li><a href="${links.console}">${t.shell.console}</a></li>
              ${isStaffRole(person.role) ? html`<li><a href="${links.admin}">${t.shell.admin}</a></li>` : ''}`
          : html`<li><a href="${links.signIn}">${t.shell.signIn}</a></li>`
      }
    </ul>
  </nav>`;
}
