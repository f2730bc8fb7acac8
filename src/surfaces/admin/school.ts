import Router from '@koa/router';
import compose from 'koa-compose';
import { STAFF_ROLES } from '../../auth/principal.js';
import { ACTION_LABELS, STATUS_LABELS } from '../../data/school/labels.js';
import { AppError } from '../../errors/index.js';
import type { AppMiddleware, RequestState } from '../../http/context.js';
import { html } from '../../http/web/html.js';
import type { AppDeps } from '../types.js';
import type { WebKit } from '../web/index.js';
import type { AdminHomeQuery, AdminHomeQueryVariables } from './__generated__/operations.js';
import { auditPages } from './audit.js';
import { clubPages } from './clubs.js';
import { adminShell } from './nav.js';
import { ADMIN_HOME } from './operations/counts.js';
import { projectPages } from './projects.js';
import { schoolYearPages } from './school-year.js';
import { studentPages } from './students.js';
import { transferPages } from './transfer.js';
import { op } from './ui.js';

const TEXT = {
  ko: {
    students: '학생',
    enrolled: '재학생',
    byGrade: (g1: number, g2: number, g3: number) => `1학년 ${g1} · 2학년 ${g2} · 3학년 ${g3}`,
    graduates: '졸업생',
    withdrawn: '자퇴생',
    clubs: '동아리',
    active: '활동',
    abolished: '폐지',
    projects: '프로젝트',
    running: '진행',
    ended: '종료',
    manage: '관리',
    recent: '최근 변경',
    noChanges: '아직 변경이 없습니다.',
    tasks: '할 일',
    links: [
      ['/admin/import', '스프레드시트 가져오기 (미리 보기 후 적용)'],
      ['/admin/export', '스프레드시트로 내보내기'],
      ['/admin/school-year', '학년도 전환'],
      ['/admin/audit', '변경 기록 보기'],
      ['/admin/accounts', '계정 관리'],
      ['/admin/keys', 'API 키 관리'],
    ],
    errorTitle: '요청을 처리할 수 없습니다',
    notFoundTitle: '찾을 수 없습니다',
    notFound: '그런 학생, 동아리 또는 프로젝트가 없습니다.',
  },
  en: {
    students: 'Students',
    enrolled: 'Enrolled',
    byGrade: (g1: number, g2: number, g3: number) => `Grade 1: ${g1} · grade 2: ${g2} · grade 3: ${g3}`,
    graduates: 'Graduates',
    withdrawn: 'Withdrawn',
    clubs: 'Clubs',
    active: 'Active',
    abolished: 'Abolished',
    projects: 'Projects',
    running: 'Active',
    ended: 'Ended',
    manage: 'Manage',
    recent: 'Recent changes',
    noChanges: 'No changes yet.',
    tasks: 'Tasks',
    links: [
      ['/admin/import', 'Import a spreadsheet (preview, then apply)'],
      ['/admin/export', 'Export as a spreadsheet'],
      ['/admin/school-year', 'Roll over to a new school year'],
      ['/admin/audit', 'Read the audit log'],
      ['/admin/accounts', 'Manage accounts'],
      ['/admin/keys', 'Manage API keys'],
    ],
    errorTitle: 'The request could not be handled',
    notFoundTitle: 'Not found',
    notFound: 'There is no such student, club or project.',
  },
} as const;

/**
 * The school data part of the admin console (/admin): the home with counts and links, students,
 * clubs and projects, import and export, the school year, the audit log. Every page reads and
 * writes through the typed GraphQL operations of ./operations (the mutations of
 * schema/school-admin.graphql), as the signed-in ADMIN or ROOT account.
 */
export function schoolPages(_deps: AppDeps, kit: WebKit): AppMiddleware {
  const router = new Router<RequestState>();
  router.get('/admin', kit.requireAccount(STAFF_ROLES), async (ctx) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const data = await op<AdminHomeQuery, AdminHomeQueryVariables>(kit, ctx, ADMIN_HOME, {});
    const c = data.schoolCounts;
    kit.page(ctx, 200, {
      ...adminShell(lang),
      title: adminShell(lang).product.label,
      content: html`<div class="tiles">
          <section class="card tile" aria-labelledby="tile-students">
            <h2 id="tile-students">${t.students}</h2>
            <p class="big"><span data-count="enrolled">${c.enrolled}</span> <span class="muted">${t.enrolled}</span></p>
            <p>${t.byGrade(c.grade1, c.grade2, c.grade3)}</p>
            <p>${t.graduates} ${c.graduates} · ${t.withdrawn} ${c.withdrawn}</p>
            <p><a href="/admin/students">${t.manage}: ${t.students}</a></p>
          </section>
          <section class="card tile" aria-labelledby="tile-clubs">
            <h2 id="tile-clubs">${t.clubs}</h2>
            <p class="big"><span data-count="clubs">${c.activeClubs}</span> <span class="muted">${t.active}</span></p>
            <p>${t.abolished} ${c.abolishedClubs}</p>
            <p><a href="/admin/clubs">${t.manage}: ${t.clubs}</a></p>
          </section>
          <section class="card tile" aria-labelledby="tile-projects">
            <h2 id="tile-projects">${t.projects}</h2>
            <p class="big"><span data-count="projects">${c.activeProjects}</span> <span class="muted">${t.running}</span></p>
            <p>${t.ended} ${c.endedProjects}</p>
            <p><a href="/admin/projects">${t.manage}: ${t.projects}</a></p>
          </section>
        </div>
        <section aria-labelledby="tasks">
          <h2 id="tasks">${t.tasks}</h2>
          <ul>
            ${t.links.map(([href, label]) => html`<li><a href="${href}">${label}</a></li>`)}
          </ul>
        </section>
        <section aria-labelledby="recent">
          <h2 id="recent">${t.recent}</h2>
          ${
            data.auditBatches.length === 0
              ? html`<p>${t.noChanges}</p>`
              : html`<ul>
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
    });
  });
  const routes = router.routes();
  return compose([
    errorPages(kit),
    (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next),
    studentPages(kit),
    clubPages(kit),
    projectPages(kit),
    transferPages(kit),
    schoolYearPages(kit),
    auditPages(kit),
  ]);
}

/**
 * The school pages' refusals as pages (the app's boundary would answer JSON): a record that does
 * not exist is a 404 page, another refusal its own status with its message. Failures of ours go
 * on to the boundary, which logs them.
 */
/** The paths of the school pages (the accounts and keys pages handle their own). */
const SCHOOL_PATHS = /^\/admin(?:$|\/(?:students|clubs|projects|import|export|school-year|audit)(?:\/|$))/;

function errorPages(kit: WebKit): AppMiddleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500 || !SCHOOL_PATHS.test(ctx.path) || !ctx.state.account) throw err;
      const lang = kit.lang(ctx);
      const t = TEXT[lang];
      const notFound = err.status === 404;
      kit.page(ctx, err.status, {
        ...adminShell(lang),
        title: notFound ? t.notFoundTitle : t.errorTitle,
        content: html`<p role="alert">${notFound ? t.notFound : err.safeMessage}</p>`,
      });
    }
  };
}
