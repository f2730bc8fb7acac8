import Router from '@koa/router';
import { STAFF_ROLES } from '../../auth/principal.js';
import { ProjectStatus } from '../../data/__generated__/enums.js';
import { splitList } from '../../data/school/columns.js';
import { CLUB_STATUS_LABELS, PROJECT_STATUS_LABELS, labelOf, type Lang } from '../../data/school/labels.js';
import { NotFoundError } from '../../errors/index.js';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { html, type Html } from '../../http/web/html.js';
import type { WebKit } from '../web/index.js';
import type {
  AdminClubChoicesQuery,
  AdminClubChoicesQueryVariables,
  AdminProjectQuery,
  AdminProjectQueryVariables,
  AdminProjectsQuery,
  AdminProjectsQueryVariables,
  CreateProjectMutation,
  CreateProjectMutationVariables,
  DeleteProjectMutation,
  DeleteProjectMutationVariables,
  EndProjectMutation,
  EndProjectMutationVariables,
  ProjectFilter,
  ProjectInput,
  ReopenProjectMutation,
  ReopenProjectMutationVariables,
  UpdateProjectMutation,
  UpdateProjectMutationVariables,
} from './__generated__/operations.js';
import { adminShell } from './nav.js';
import { ADMIN_CLUB_CHOICES } from './operations/students.js';
import {
  ADMIN_PROJECT,
  ADMIN_PROJECTS,
  CREATE_PROJECT,
  DELETE_PROJECT,
  END_PROJECT,
  REOPEN_PROJECT,
  UPDATE_PROJECT,
} from './operations/projects.js';
import {
  anyOption,
  csrfField,
  doneFlash,
  errorsByField,
  errorSummary,
  type FieldMessage,
  formInts,
  formLabel,
  idParam,
  inputField,
  language,
  listPage,
  listTable,
  op,
  queryInt,
  queryText,
  recordActions,
  seeOther,
  selectField,
  textareaField,
  unconfirmed,
  withFlash,
} from './ui.js';

const PAGE_SIZE = 50;

const TEXT = {
  ko: {
    title: '프로젝트',
    newTitle: '프로젝트 추가',
    editTitle: (name: string) => `프로젝트: ${name}`,
    add: '프로젝트 추가',
    search: '프로젝트 이름',
    count: (n: number) => `${n}개`,
    columns: ['이름', '동아리', '상태', '기간', '참여자 수'],
    noClub: '동아리 없음',
    participantsHint: '한 줄에 한 명씩: 이메일, 네 자리 학번 또는 #ID',
    endYearHint: '종료된 프로젝트만; 시작연도보다 앞설 수 없습니다',
    save: '저장',
    create: '추가',
    actions: '상태 바꾸기',
    end: '종료',
    endHint: '종료연도(비우면 올해)와 함께 종료로 바꿉니다.',
    reopen: '다시 진행',
    reopenHint: '진행 중으로 되돌리고 종료연도를 지웁니다.',
    delete: '삭제',
    deleteHint: '프로젝트를 지웁니다. 변경 기록에서 되돌릴 수 있습니다.',
    history: '이 프로젝트의 변경 기록',
    back: '프로젝트 목록',
    done: {
      created: '프로젝트를 추가했습니다.',
      updated: '저장했습니다.',
      unchanged: '바뀐 것이 없습니다.',
      ended: '프로젝트를 종료했습니다.',
      reopened: '프로젝트를 다시 진행합니다.',
      deleted: '프로젝트를 삭제했습니다.',
    },
  },
  en: {
    title: 'Projects',
    newTitle: 'Add a project',
    editTitle: (name: string) => `Project: ${name}`,
    add: 'Add a project',
    search: 'Project name',
    count: (n: number) => `${n} ${n === 1 ? 'project' : 'projects'}`,
    columns: ['Name', 'Club', 'Status', 'Years', 'Participants'],
    noClub: 'No club',
    participantsHint: 'One per line: an email, a four-digit student number or #id',
    endYearHint: 'Ended projects only; not before the start year',
    save: 'Save',
    create: 'Add',
    actions: 'Change the status',
    end: 'End',
    endHint: 'Marks the project ended in the given year (empty: this year).',
    reopen: 'Reopen',
    reopenHint: 'Makes the project active again and clears its end year.',
    delete: 'Delete',
    deleteHint: 'Deletes the project. It can be undone from the audit log.',
    history: "This project's changes",
    back: 'All projects',
    done: {
      created: 'The project was added.',
      updated: 'Saved.',
      unchanged: 'Nothing changed.',
      ended: 'The project has ended.',
      reopened: 'The project is active again.',
      deleted: 'The project was deleted.',
    },
  },
} as const;

const INPUTS = ['name', 'description', 'clubId', 'participants', 'startYear', 'status', 'endYear'];
type Values = Readonly<Record<string, string>>;
type ClubChoice = AdminClubChoicesQuery['clubs']['clubs'][number];
type Project = AdminProjectQuery['projects']['projects'][number];

/** The projects' pages: list, add, edit, end, reopen, delete. */
export function projectPages(kit: WebKit): AppMiddleware {
  const router = new Router<RequestState>();
  const staff = kit.requireAccount(STAFF_ROLES);

  router.get('/admin/projects', staff, async (ctx) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const q = queryText(ctx, 'q');
    const status = Object.values(ProjectStatus).find((v) => v === queryText(ctx, 'status')) ?? null;
    const clubId = queryInt(ctx, 'clubId', 1, Number.MAX_SAFE_INTEGER);
    const page = queryInt(ctx, 'page', 0, 100000) ?? 0;
    const filter: ProjectFilter = { ...(q ? { projectName: q } : {}), ...(status ? { status } : {}), ...(clubId ? { clubId } : {}) };
    const [data, choices] = await Promise.all([
      op<AdminProjectsQuery, AdminProjectsQueryVariables>(kit, ctx, ADMIN_PROJECTS, { filter, page, size: PAGE_SIZE }),
      op<AdminClubChoicesQuery, AdminClubChoicesQueryVariables>(kit, ctx, ADMIN_CLUB_CHOICES, {}),
    ]);
    kit.page(ctx, 200, {
      ...adminShell(lang),
      title: t.title,
      ...withFlash(doneFlash(ctx, t.done)),
      content: listPage(lang, {
        path: '/admin/projects',
        before: html`<p><a class="button" href="/admin/projects/new">${t.add}</a></p>`,
        filters: [
          inputField({ name: 'q', label: t.search, value: q, errors: new Map(), type: 'search' }),
          selectField({
            name: 'clubId',
            label: formLabel('clubId', lang),
            value: clubId,
            errors: new Map(),
            options: anyOption(
              lang,
              choices.clubs.clubs.map((c) => ({ value: String(c.id), label: c.name })),
            ),
          }),
          selectField({
            name: 'status',
            label: formLabel('status', lang),
            value: status,
            errors: new Map(),
            options: anyOption(
              lang,
              Object.values(ProjectStatus).map((v) => ({ value: v, label: PROJECT_STATUS_LABELS[v][lang] })),
            ),
          }),
        ],
        status: t.count(data.projects.totalElements),
        table: projectTable(lang, data.projects.projects),
        page,
        totalPages: data.projects.totalPages,
        params: { q, status, clubId },
      }),
    });
  });

  const clubChoices = async (ctx: AppContext) =>
    (await op<AdminClubChoicesQuery, AdminClubChoicesQueryVariables>(kit, ctx, ADMIN_CLUB_CHOICES, {})).clubs.clubs;

  router.get('/admin/projects/new', staff, async (ctx) => {
    renderForm(kit, ctx, 200, { values: { status: 'ACTIVE' }, errors: new Map(), project: null, clubs: await clubChoices(ctx) });
  });

  router.post('/admin/projects', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const values = kit.fields(ctx);
    const { input, errors } = projectInput(lang, values);
    if (errors.length === 0) {
      const result = await op<CreateProjectMutation, CreateProjectMutationVariables>(kit, ctx, CREATE_PROJECT, {
        input,
        lang: language(lang),
      });
      const created = result.createProject.project;
      if (result.createProject.errors.length === 0 && created) return seeOther(ctx, `/admin/projects/${created.id}?done=created`);
      errors.push(...result.createProject.errors);
    }
    renderForm(kit, ctx, 422, { values, errors: errorsByField(errors), project: null, clubs: await clubChoices(ctx) });
  });

  router.get('/admin/projects/:id', staff, async (ctx) => {
    const { project, clubs } = await loadProject(kit, ctx);
    renderForm(kit, ctx, 200, {
      values: valuesOf(project),
      errors: new Map(),
      project,
      clubs,
      flash: doneFlash(ctx, TEXT[kit.lang(ctx)].done),
    });
  });

  router.post('/admin/projects/:id', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const { project, clubs } = await loadProject(kit, ctx);
    const values = kit.fields(ctx);
    const { input, errors } = projectInput(lang, values, valuesOf(project));
    if (errors.length === 0) {
      const result = await op<UpdateProjectMutation, UpdateProjectMutationVariables>(kit, ctx, UPDATE_PROJECT, {
        id: project.id,
        input,
        lang: language(lang),
      });
      if (result.updateProject.errors.length === 0)
        return seeOther(ctx, `/admin/projects/${project.id}?done=${result.updateProject.batchId ? 'updated' : 'unchanged'}`);
      errors.push(...result.updateProject.errors);
    }
    renderForm(kit, ctx, 422, { values, errors: errorsByField(errors), project, clubs });
  });

  router.post('/admin/projects/:id/end', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const { project, clubs } = await loadProject(kit, ctx);
    let errors: FieldMessage[] = [];
    const year = formInts(lang, kit.fields(ctx), errors)('endedIn', 'endYear');
    if (errors.length === 0) {
      errors = (
        await op<EndProjectMutation, EndProjectMutationVariables>(kit, ctx, END_PROJECT, {
          id: project.id,
          endYear: year,
          lang: language(lang),
        })
      ).endProject.errors;
      if (errors.length === 0) return seeOther(ctx, `/admin/projects/${project.id}?done=ended`);
    }
    renderForm(kit, ctx, 422, { values: valuesOf(project), errors: errorsByField(errors), project, clubs });
  });

  router.post('/admin/projects/:id/reopen', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const { project, clubs } = await loadProject(kit, ctx);
    const errors = (
      await op<ReopenProjectMutation, ReopenProjectMutationVariables>(kit, ctx, REOPEN_PROJECT, { id: project.id, lang: language(lang) })
    ).reopenProject.errors;
    if (errors.length === 0) return seeOther(ctx, `/admin/projects/${project.id}?done=reopened`);
    renderForm(kit, ctx, 422, { values: valuesOf(project), errors: errorsByField(errors), project, clubs });
  });

  router.post('/admin/projects/:id/delete', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const { project, clubs } = await loadProject(kit, ctx);
    let errors = unconfirmed(lang, kit.fields(ctx));
    if (errors.length === 0) {
      errors = (
        await op<DeleteProjectMutation, DeleteProjectMutationVariables>(kit, ctx, DELETE_PROJECT, { id: project.id, lang: language(lang) })
      ).deleteProject.errors;
      if (errors.length === 0) return seeOther(ctx, '/admin/projects?done=deleted');
    }
    renderForm(kit, ctx, 422, { values: valuesOf(project), errors: errorsByField(errors), project, clubs });
  });

  const routes = router.routes();
  return (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next);
}

const NOT_FOUND = 'No such project.';

async function loadProject(kit: WebKit, ctx: AppContext): Promise<{ project: Project; clubs: ClubChoice[] }> {
  const data = await op<AdminProjectQuery, AdminProjectQueryVariables>(kit, ctx, ADMIN_PROJECT, { id: idParam(ctx, NOT_FOUND) });
  const [project] = data.projects.projects;
  if (!project) throw new NotFoundError(NOT_FOUND);
  return { project, clubs: data.clubs.clubs };
}

function valuesOf(p: Project): Values {
  const text = (v: string | number | null | undefined) => (v == null ? '' : String(v));
  return {
    name: p.name,
    description: p.description,
    clubId: text(p.club?.id),
    participants: p.participants.map((s) => s.email).join('\n'),
    startYear: text(p.startYear),
    status: p.status,
    endYear: text(p.endYear),
  };
}

/** The mutation input of a submitted form (participants sent only when changed, on an edit). */
export function projectInput(lang: Lang, v: Values, shown?: Values): { input: ProjectInput; errors: FieldMessage[] } {
  const errors: FieldMessage[] = [];
  const int = formInts(lang, v, errors);
  const input: ProjectInput = {
    name: (v['name'] ?? '').trim() || null,
    description: (v['description'] ?? '').trim(),
    clubId: int('clubId'),
    startYear: int('startYear'),
    status: Object.values(ProjectStatus).find((s) => s === v['status']) ?? null,
    endYear: int('endYear'),
  };
  const participants = splitList(v['participants'] ?? '');
  if (!shown || participants.join('\n') !== splitList(shown['participants'] ?? '').join('\n')) input.participants = participants;
  return { input, errors };
}

function projectTable(lang: Lang, projects: AdminProjectsQuery['projects']['projects']): Html {
  return listTable(
    lang,
    'list',
    TEXT[lang].columns,
    projects,
    (p) =>
      html`<tr>
        <th scope="row"><a href="/admin/projects/${p.id}">${p.name}</a></th>
        <td>${p.club?.name ?? '—'}</td>
        <td>${labelOf(PROJECT_STATUS_LABELS, p.status, lang)}</td>
        <td>${p.startYear ?? '?'}–${p.endYear ?? ''}</td>
        <td>${p.participants.length}</td>
      </tr>`,
  );
}

function renderForm(
  kit: WebKit,
  ctx: AppContext,
  status: number,
  form: {
    values: Values;
    errors: ReadonlyMap<string, string[]>;
    project: Project | null;
    clubs: readonly ClubChoice[];
    flash?: { kind: 'ok'; text: string } | undefined;
  },
): void {
  const lang = kit.lang(ctx);
  const t = TEXT[lang];
  const v = form.values;
  const e = form.errors;
  const label = (field: string) => formLabel(field, lang);
  const project = form.project;
  const clubOptions = [
    { value: '', label: t.noClub },
    ...form.clubs.map((c) => ({
      value: String(c.id),
      label: c.status === 'ACTIVE' ? c.name : `${c.name} (${labelOf(CLUB_STATUS_LABELS, c.status, lang)})`,
    })),
  ];
  const mainForm = html`<form
    method="post"
    action="${project ? `/admin/projects/${project.id}` : '/admin/projects'}"
    class="card"
    novalidate
  >
    ${csrfField(kit, ctx)} ${inputField({ name: 'name', label: label('name'), value: v['name'], errors: e, required: true, hint: '1~100' })}
    ${textareaField({ name: 'description', label: label('description'), value: v['description'], errors: e, rows: 4, hint: lang === 'ko' ? '500자 이하' : 'At most 500 characters' })}
    ${selectField({ name: 'clubId', label: label('clubId'), value: v['clubId'], errors: e, options: clubOptions })}
    ${textareaField({ name: 'participants', label: label('participants'), value: v['participants'], errors: e, rows: 5, hint: t.participantsHint })}
    ${inputField({ name: 'startYear', label: label('startYear'), value: v['startYear'], errors: e, type: 'number', inputmode: 'numeric', min: 1900, max: 2100 })}
    ${selectField({ name: 'status', label: label('status'), value: v['status'], errors: e, options: Object.values(ProjectStatus).map((x) => ({ value: x, label: PROJECT_STATUS_LABELS[x][lang] })) })}
    ${inputField({ name: 'endYear', label: label('endYear'), value: v['endYear'], errors: e, type: 'number', inputmode: 'numeric', min: 1900, max: 2100, hint: t.endYearHint })}
    <div class="actions"><button type="submit">${project ? t.save : t.create}</button></div>
  </form>`;
  const states = project
    ? recordActions(kit, ctx, lang, {
        path: `/admin/projects/${project.id}`,
        entity: 'PROJECT',
        recordId: project.id,
        heading: t.actions,
        body:
          project.status === 'ACTIVE'
            ? html`<form method="post" action="/admin/projects/${project.id}/end" novalidate>
                ${csrfField(kit, ctx)}
                <p class="hint">${t.endHint}</p>
                ${inputField({ name: 'endedIn', label: label('endYear'), value: '', errors: new Map(), type: 'number', inputmode: 'numeric', min: 1900, max: 2100 })}
                <div class="actions"><button type="submit" class="secondary">${t.end}</button></div>
              </form>`
            : html`<form method="post" action="/admin/projects/${project.id}/reopen">
                ${csrfField(kit, ctx)}
                <p class="hint">${t.reopenHint}</p>
                <div class="actions"><button type="submit" class="secondary">${t.reopen}</button></div>
              </form>`,
        deleteLabel: t.delete,
        deleteHint: t.deleteHint,
        history: t.history,
      })
    : '';
  kit.page(ctx, status, {
    ...adminShell(lang),
    title: project ? t.editTitle(project.name) : t.newTitle,
    ...withFlash(form.flash),
    content: html`<p><a href="/admin/projects">← ${t.back}</a></p>
      ${errorSummary(lang, e, INPUTS)} ${mainForm} ${states}`,
  });
}
