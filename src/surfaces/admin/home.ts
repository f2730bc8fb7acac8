import { ACTION_LABELS, STATUS_LABELS } from '../../data/school/labels.js';
import { html } from '../web/html.js';
import { page, type Handler } from '../web/routes.js';
import type { AdminHomeQuery, AdminHomeQueryVariables } from './__generated__/operations.js';
import type { AdminDeps } from './deps.js';
import { ADMIN_HOME } from './operations/counts.js';
import { pendingKeyRequests } from './keys.js';
import { waitingProposals } from './proposals.js';

/** GET /admin: the school in numbers, the tasks, and the latest changes. */
export const adminHome: Handler<AdminDeps> = async (req, deps) => {
  const { t, lang } = req;
  const h = t.admin.home;
  const data = await deps.school.run<AdminHomeQuery, AdminHomeQueryVariables>(req, ADMIN_HOME, {});
  const c = data.schoolCounts;
  // What waits for an admin's decision comes first.
  const pending = await pendingKeyRequests(req, deps);
  // Teachers' sign-ups waiting for a decision, counted here (decided in /admin/accounts).
  const teachers = (await deps.accounts.search({ approval: 'PENDING', skip: 0, limit: 1 })).total;
  const proposals = await waitingProposals(deps);
  const links: readonly (readonly [string, string])[] = [
    ['/admin/import', h.links.import],
    ['/admin/export', h.links.export],
    ['/admin/school-year', h.links.schoolYear],
    ['/admin/audit', h.links.audit],
    ['/admin/accounts', h.links.accounts],
    ['/admin/keys', h.links.keys],
  ];
  return page(
    t.admin.title,
    html`${
        teachers > 0
          ? html`<p class="flash ok" role="status">
              <span data-count="teachers-waiting">${h.teachersWaiting(teachers)}</span>
              <a href="/admin/accounts?approval=PENDING">${h.reviewTeachers}</a>
            </p>`
          : ''
      }
      ${
        proposals > 0
          ? html`<p class="flash ok" role="status">
              <span data-count="proposals-waiting">${t.admin.proposals.waiting(proposals)}</span>
              <a href="/admin/proposals">${t.admin.proposals.review}</a>
            </p>`
          : ''
      }
      ${pending}
      <div class="tiles">
        <section class="card tile" aria-labelledby="tile-students">
          <h2 id="tile-students">${h.students}</h2>
          <p class="big"><span data-count="enrolled">${c.enrolled}</span> <span class="muted">${h.enrolled}</span></p>
          <p>${h.byGrade(c.grade1, c.grade2, c.grade3)}</p>
          <p>${h.graduates} ${c.graduates} · ${h.withdrawn} ${c.withdrawn}</p>
          <p><a href="/admin/students">${h.manage}: ${h.students}</a></p>
        </section>
        <section class="card tile" aria-labelledby="tile-clubs">
          <h2 id="tile-clubs">${h.clubs}</h2>
          <p class="big"><span data-count="clubs">${c.activeClubs}</span> <span class="muted">${h.active}</span></p>
          <p>${h.abolished} ${c.abolishedClubs}</p>
          <p><a href="/admin/clubs">${h.manage}: ${h.clubs}</a></p>
        </section>
        <section class="card tile" aria-labelledby="tile-projects">
          <h2 id="tile-projects">${h.projects}</h2>
          <p class="big"><span data-count="projects">${c.activeProjects}</span> <span class="muted">${h.running}</span></p>
          <p>${h.ended} ${c.endedProjects}</p>
          <p><a href="/admin/projects">${h.manage}: ${h.projects}</a></p>
        </section>
      </div>
      <section aria-labelledby="tasks">
        <h2 id="tasks">${h.tasks}</h2>
        <ul>
          ${links.map(([href, label]) => html`<li><a href="${href}">${label}</a></li>`)}
        </ul>
      </section>
      <section aria-labelledby="recent">
        <h2 id="recent">${h.recent}</h2>
        ${
          data.auditBatches.length === 0
            ? html`<p>${h.noChanges}</p>`
            : html`<ul class="recent">
                ${data.auditBatches.map(
                  (b) =>
                    html`<li>
                      <a href="/admin/audit?batchId=${b.id}">${b.at}</a> · ${b.actor} · ${ACTION_LABELS[b.action][lang]} ·
                      <span class="mono">${b.summary}</span> (${STATUS_LABELS[b.status][lang]})
                    </li>`,
                )}
              </ul>`
        }
      </section>`,
  );
};
