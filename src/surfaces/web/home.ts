import { isStaffRole } from '../../auth/policy.js';
import { html } from './html.js';
import { page, type Handler, type RouteTable } from './routes.js';
import { WEB_PATHS, type Web } from './web.js';

/**
 * GET /: the front door. What the service is, and the way to everything a newcomer looks for:
 * sign-in, the developer console, the admin console, the status page, the API reference and the
 * service's health.
 */
const home: Handler<Web> = async (req, web) => {
  const { t } = req;
  const person = await web.identify(req.ctx);
  const school = web.config.schoolName[req.lang];
  const health = `${web.config.urls.base === web.config.urls.auth ? '' : web.config.urls.base}/v1/health`;
  const door = (href: string, title: string, hint: string, extra = '') =>
    html`<li class="card door${extra}">
      <h3><a href="${href}">${title}</a></h3>
      <p>${hint}</p>
    </li>`;
  return page(
    t.home.title,
    html`<p class="lead">${t.home.lead(school)}</p>
      ${person ? html`<p role="status">${t.home.signedIn(person.email)}</p>` : ''}
      <section aria-labelledby="start">
        <h2 id="start">${t.home.start}</h2>
        <ul class="cards">
          ${person ? '' : door(`${WEB_PATHS.signIn}?next=/console`, t.home.signIn, t.home.signInHint, ' primary')}
          ${door(web.links.console, t.home.console, t.home.consoleHint)}
          ${!person || isStaffRole(person.role) ? door(web.links.admin, t.home.admin, t.home.adminHint) : ''}
          ${door('/status', t.home.status, t.home.statusHint)} ${door(web.links.docs, t.home.docs, t.home.docsHint)}
          ${door(health, t.home.health, t.home.healthHint)}
        </ul>
      </section>
      <section aria-labelledby="developers">
        <h2 id="developers">${t.home.forDevelopers}</h2>
        <p>${t.home.developers}</p>
      </section>`,
  );
};

/** The front door's table (the page of `/` only: every other unknown path is the app's 404 page). */
export function homeRoutes(web: Web): RouteTable<Web> {
  return { access: 'anyone', csrf: web.anonymousForms, routes: [{ method: 'GET', path: '/', handler: home }] };
}
