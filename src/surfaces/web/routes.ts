import type { AccountPrincipal } from '../../auth/principal.js';
import type { PageRule } from '../../auth/policy.js';
import type { AppContext } from '../../http/context.js';
import type { CsrfBinding } from './csrf.js';
import type { Flash } from './flash.js';
import type { FormFields } from './forms.js';
import type { Html } from './html.js';
import type { Lang } from './lang.js';
import type { Texts } from './texts/index.js';

/**
 * A page is a handler, a view, a line of a route table and its texts (docs/web.md). The handler
 * reads the request and its dependencies and answers an Outcome; the table's runner (./web.ts)
 * turns it into the response: a page in the shell, a redirect with its flash, a file, or JSON for
 * the page's own script.
 */

/** What a handler answers. */
export type Outcome =
  | { readonly kind: 'page'; readonly status: number; readonly title: string; readonly content: Html }
  | { readonly kind: 'redirect'; readonly location: string; readonly flash?: Flash | undefined }
  | { readonly kind: 'file'; readonly name: string; readonly type: string; readonly body: Buffer }
  /** JSON for a page's own script (the passkey options: web/assets/passkeys.js), never cached. */
  | { readonly kind: 'json'; readonly status: number; readonly body: unknown }
  /** The response is already written (oidc-provider answers an interaction's end itself). */
  | { readonly kind: 'sent' };

/** A page in the shell of the route's table. */
export function page(title: string, content: Html, status = 200): Outcome {
  return { kind: 'page', status, title, content };
}

/** A 303 to `location` (post/redirect/get), with a message for the page it leads to. */
export function redirect(location: string, flash?: Flash): Outcome {
  return { kind: 'redirect', location, flash };
}

/** A file to download under `name` (Koa's `ctx.attachment` writes its Content-Disposition, Korean letters kept). */
export function download(name: string, type: string, body: Buffer): Outcome {
  return { kind: 'file', name, type, body };
}

/** JSON for a page's own script. */
export function json(body: unknown, status = 200): Outcome {
  return { kind: 'json', status, body };
}

export const SENT: Outcome = { kind: 'sent' };

/** What a handler knows of its request. */
export interface PageRequest {
  readonly ctx: AppContext;
  readonly lang: Lang;
  /** The catalogue of the page's language. */
  readonly t: Texts;
  /** The CSRF token for this page's forms (bound as the table says). */
  readonly csrf: string;
  /** The signed-in account (tables that require one always have it). */
  readonly account: AccountPrincipal | undefined;
  /** The submitted form (POST), as text fields; parse it with a zod schema (./forms.ts). */
  readonly form: FormFields;
  /** A path parameter ('' when absent). */
  param(name: string): string;
  /** A query parameter as trimmed text ('' when absent; at most 200 characters). */
  query(name: string): string;
}

export type Handler<D> = (req: PageRequest, deps: D) => Promise<Outcome>;

/** One line of a route table. */
export interface Route<D> {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly handler: Handler<D>;
  /** The form carries a file (multipart/form-data, ./multipart.ts). */
  readonly upload?: boolean;
  /** Who may open it, when not the table's rule. */
  readonly access?: PageRule;
  /** Its entry in the section's navigation (GET routes of a console), in the table's order. */
  readonly nav?: (t: Texts) => string;
}

/**
 * The pages of a kind of record kept through forms (see recordRoutes); a page left out is not
 * served. The admin console's `record.forms` (src/surfaces/admin/records.ts) gives the four of a form.
 */
export interface RecordPages<D> {
  /** The list, at the base path. */
  readonly list: Handler<D>;
  /** The list's entry in the section's navigation. */
  readonly nav?: (t: Texts) => string;
  /** A new record's empty form (GET `base/new`). */
  readonly blank?: Handler<D>;
  /** The creation a new record's form posts (POST `base`). */
  readonly create?: Handler<D>;
  /** One record's page (GET `base/:id`). */
  readonly detail?: Handler<D>;
  /** The update its form posts (POST `base/:id`). */
  readonly update?: Handler<D>;
  /** Its actions, each posted to `base/:id/<name>`. */
  readonly actions?: Readonly<Record<string, Handler<D>>>;
}

/**
 * The route lines of a kind of record at `base`: the list, the empty form, the creation, a
 * record's page, its update and its actions, in that order (`base/new` is tried before `base/:id`
 * reads `new` as an id).
 */
export function recordRoutes<D>(base: string, pages: RecordPages<D>): Route<D>[] {
  const { list, nav, blank, create, detail, update, actions = {} } = pages;
  const one = `${base}/:id`;
  const line = (method: Route<D>['method'], path: string, handler?: Handler<D>): Route<D>[] => (handler ? [{ method, path, handler }] : []);
  return [
    { method: 'GET', path: base, handler: list, nav },
    ...line('GET', `${base}/new`, blank),
    ...line('POST', base, create),
    ...line('GET', one, detail),
    ...line('POST', one, update),
    ...Object.entries(actions).flatMap(([name, handler]) => line('POST', `${one}/${name}`, handler)),
  ];
}

/** The pages of one family (a console, the sign-up pages, the login pages), and what they share. */
export interface RouteTable<D> {
  /** Who may open its pages (src/auth/policy.ts, PAGE_RULES), unless a route says otherwise. */
  readonly access: PageRule;
  /** What the CSRF token of its forms is bound to (the console session, a browser's anonymous forms, a login in progress). */
  readonly csrf: CsrfBinding;
  /** The section's name and home in the shell; its navigation is the routes that name a `nav` entry. */
  readonly section?: { readonly label: (t: Texts) => string; readonly home: string };
  /** Its pages are one small form each (a narrow column, no menu). */
  readonly narrow?: boolean;
  /** Hints of the page's language besides the person's choice and the browser's (an OAuth app's ui_locales). */
  readonly langHints?: (ctx: AppContext, deps: D) => Promise<readonly unknown[]>;
  /** Runs around each request of the table, its language hints and handler included (the login pages' interaction memo). */
  readonly frame?: <T>(run: () => Promise<T>) => Promise<T>;
  /** Its forms end in a redirect to an app (login, consent): the page's CSP allows that. */
  readonly oauth?: boolean;
  /**
   * Every other path under this prefix is a 404 page (after the access check, so a person who is
   * not signed in is sent to sign in first).
   */
  readonly prefix?: string;
  readonly routes: readonly Route<D>[];
}
