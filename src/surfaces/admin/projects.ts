import { z } from 'zod';
import { ProjectStatus } from '../../data/__generated__/enums.js';
import { splitList } from '../../data/school/columns.js';
import { CLUB_STATUS_LABELS, PROJECT_STATUS_LABELS, labelOf } from '../../data/school/labels.js';
import { NotFoundError } from '../../errors/index.js';
import {
  anyOption,
  csrfField,
  errorSummary,
  field,
  linkButton,
  listPage,
  select,
  table,
  textArea,
  type FieldError,
} from '../web/components.js';
import { oneOf, parseForm, text, textOrNull } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import type { Lang } from '../web/lang.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
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
import type { AdminDeps } from './deps.js';
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
import { atInputs, formLabel, formValues, idParam, intField, language, queryInt, recordActions, saveRecord, unconfirmed } from './ui.js';

const PAGE_SIZE = 50;
const LIST = '/admin/projects';
const INPUTS = ['name', 'description', 'clubId', 'participants', 'startYear', 'status', 'endYear'];
type Values = Readonly<Record<string, string>>;
type ClubChoice = AdminClubChoicesQuery['clubs']['clubs'][number];
type Project = AdminProjectQuery['projects']['projects'][number];

/** The project form's fields (also a student's proposal: src/surfaces/console/projects.ts). */
export const projectForm = (lang: Lang) =>
  z.object({
    name: textOrNull(),
    description: text(),
    clubId: intField(lang, 'clubId'),
    startYear: intField(lang, 'startYear'),
    status: oneOf(Object.values(ProjectStatus)),
    endYear: intField(lang, 'endYear'),
    participants: text({ trim: false }).transform(splitList),
  });

/** The mutation input of a submitted form (participants sent only when changed, on an edit). */
function projectInput(form: z.infer<ReturnType<typeof projectForm>>, shown?: Values): ProjectInput {
  const { participants, ...input } = form;
  const changed = !shown || participants.join('\n') !== splitList(shown['participants'] ?? '').join('\n');
  return changed ? { ...input, participants } : input;
}

export const projectList: Handler<AdminDeps> = async (req, deps) => {
  const { t, lang } = req;
  const p = t.admin.projects;
  const q = req.query('q');
  const status = Object.values(ProjectStatus).find((v) => v === req.query('status')) ?? null;
  const clubId = queryInt(req, 'clubId', 1, Number.MAX_SAFE_INTEGER);
  const pageNumber = queryInt(req, 'page', 0, 100000) ?? 0;
  const filter: ProjectFilter = { ...(q ? { projectName: q } : {}), ...(status ? { status } : {}), ...(clubId ? { clubId } : {}) };
  const [data, clubs] = await Promise.all([
    deps.school.run<AdminProjectsQuery, AdminProjectsQueryVariables>(req, ADMIN_PROJECTS, { filter, page: pageNumber, size: PAGE_SIZE }),
    clubChoices(req, deps),
  ]);
  return page(
    p.title,
    listPage(t, {
      path: LIST,
      before: html`<p>${linkButton('/admin/projects/new', p.add)}</p>`,
      filters: [
        field({ name: 'q', label: p.search, value: q, type: 'search' }),
        select({
          name: 'clubId',
          label: formLabel('clubId', lang),
          value: clubId,
          options: anyOption(
            t,
            clubs.map((c) => ({ value: String(c.id), label: c.name })),
          ),
        }),
        select({
          name: 'status',
          label: formLabel('status', lang),
          value: status,
          options: anyOption(
            t,
            Object.values(ProjectStatus).map((v) => ({ value: v, label: PROJECT_STATUS_LABELS[v][lang] })),
          ),
        }),
      ],
      status: p.count(data.projects.totalElements),
      table: projectTable(req, data.projects.projects),
      page: pageNumber,
      totalPages: data.projects.totalPages,
      params: { q, status, clubId },
    }),
  );
};

async function clubChoices(req: PageRequest, deps: AdminDeps): Promise<readonly ClubChoice[]> {
  return (await deps.school.run<AdminClubChoicesQuery, AdminClubChoicesQueryVariables>(req, ADMIN_CLUB_CHOICES, {})).clubs.clubs;
}

export const newProject: Handler<AdminDeps> = async (req, deps) =>
  projectPage(req, { values: { status: 'ACTIVE' }, errors: [], project: null, clubs: await clubChoices(req, deps) });

export const createProject: Handler<AdminDeps> = async (req, deps) =>
  saveRecord(req, {
    schema: projectForm(req.lang),
    save: async (form) => {
      const result = await deps.school.run<CreateProjectMutation, CreateProjectMutationVariables>(req, CREATE_PROJECT, {
        input: projectInput(form),
        lang: language(req.lang),
      });
      return { errors: result.createProject.errors, id: result.createProject.project?.id ?? null, changed: true };
    },
    list: LIST,
    done: req.t.admin.projects.done.created,
    again: async (errors) => projectPage(req, { values: formValues(req), errors, project: null, clubs: await clubChoices(req, deps) }, 422),
  });

async function loadProject(req: PageRequest, deps: AdminDeps): Promise<{ project: Project; clubs: readonly ClubChoice[] }> {
  const data = await deps.school.run<AdminProjectQuery, AdminProjectQueryVariables>(req, ADMIN_PROJECT, { id: idParam(req) });
  const [project] = data.projects.projects;
  if (!project) throw new NotFoundError('No such project.');
  return { project, clubs: data.clubs.clubs };
}

export const projectDetail: Handler<AdminDeps> = async (req, deps) => {
  const { project, clubs } = await loadProject(req, deps);
  return projectPage(req, { values: valuesOf(project), errors: [], project, clubs });
};

export const updateProject: Handler<AdminDeps> = async (req, deps) => {
  const { project, clubs } = await loadProject(req, deps);
  return saveRecord(req, {
    schema: projectForm(req.lang),
    save: async (form) => {
      const result = await deps.school.run<UpdateProjectMutation, UpdateProjectMutationVariables>(req, UPDATE_PROJECT, {
        id: project.id,
        input: projectInput(form, valuesOf(project)),
        lang: language(req.lang),
      });
      return { errors: result.updateProject.errors, id: project.id, changed: Boolean(result.updateProject.batchId) };
    },
    list: LIST,
    done: req.t.admin.projects.done.updated,
    unchanged: req.t.admin.projects.done.unchanged,
    again: (errors) => projectPage(req, { values: formValues(req), errors, project, clubs }, 422),
  });
};

export const endProject: Handler<AdminDeps> = async (req, deps) => {
  const { lang } = req;
  const { project, clubs } = await loadProject(req, deps);
  const form = parseForm(z.object({ endedIn: intField(lang, 'endYear') }), req.form);
  let errors: FieldError[] = form.ok ? [] : atInputs(form.errors, { endedIn: 'endYear' });
  if (form.ok) {
    const result = await deps.school.run<EndProjectMutation, EndProjectMutationVariables>(req, END_PROJECT, {
      id: project.id,
      endYear: form.value.endedIn,
      lang: language(lang),
    });
    if (result.endProject.errors.length === 0)
      return redirect(`/admin/projects/${project.id}`, { kind: 'ok', text: req.t.admin.projects.done.ended });
    errors = atInputs(result.endProject.errors);
  }
  return projectPage(req, { values: valuesOf(project), errors, project, clubs }, 422);
};

export const reopenProject: Handler<AdminDeps> = async (req, deps) => {
  const { project, clubs } = await loadProject(req, deps);
  const result = await deps.school.run<ReopenProjectMutation, ReopenProjectMutationVariables>(req, REOPEN_PROJECT, {
    id: project.id,
    lang: language(req.lang),
  });
  if (result.reopenProject.errors.length === 0)
    return redirect(`/admin/projects/${project.id}`, { kind: 'ok', text: req.t.admin.projects.done.reopened });
  return projectPage(req, { values: valuesOf(project), errors: atInputs(result.reopenProject.errors), project, clubs }, 422);
};

export const deleteProject: Handler<AdminDeps> = async (req, deps) => {
  const { project, clubs } = await loadProject(req, deps);
  let errors = unconfirmed(req.t, req);
  if (errors.length === 0) {
    errors = atInputs(
      (
        await deps.school.run<DeleteProjectMutation, DeleteProjectMutationVariables>(req, DELETE_PROJECT, {
          id: project.id,
          lang: language(req.lang),
        })
      ).deleteProject.errors,
    );
    if (errors.length === 0) return redirect(LIST, { kind: 'ok', text: req.t.admin.projects.done.deleted });
  }
  return projectPage(req, { values: valuesOf(project), errors, project, clubs }, 422);
};

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

function projectTable(req: PageRequest, projects: AdminProjectsQuery['projects']['projects']): Html {
  const { t, lang } = req;
  return table(t, {
    columns: t.admin.projects.columns,
    rows: projects,
    cells: (p) => [
      { content: html`<a href="/admin/projects/${p.id}">${p.name}</a>`, rowHeader: true },
      p.club?.name ?? '—',
      labelOf(PROJECT_STATUS_LABELS, p.status, lang),
      `${p.startYear ?? '?'}–${p.endYear ?? ''}`,
      p.participants.length,
    ],
  });
}

function projectPage(
  req: PageRequest,
  form: { values: Values; errors: readonly FieldError[]; project: Project | null; clubs: readonly ClubChoice[] },
  status = 200,
): Outcome {
  const { t, lang } = req;
  const p = t.admin.projects;
  const v = form.values;
  const errors = form.errors;
  const label = (name: string) => formLabel(name, lang);
  const project = form.project;
  const clubOptions = [
    { value: '', label: p.noClub },
    ...form.clubs.map((c) => ({
      value: String(c.id),
      label: c.status === 'ACTIVE' ? c.name : `${c.name} (${labelOf(CLUB_STATUS_LABELS, c.status, lang)})`,
    })),
  ];
  const mainForm = html`<form method="post" action="${project ? `/admin/projects/${project.id}` : LIST}" class="card" novalidate>
    ${csrfField(req.csrf)} ${field({ name: 'name', label: label('name'), value: v['name'], errors, required: true, hint: p.nameHint })}
    ${textArea({ name: 'description', label: label('description'), value: v['description'], errors, rows: 4, hint: p.descriptionHint })}
    ${select({ name: 'clubId', label: label('clubId'), value: v['clubId'], errors, options: clubOptions })}
    ${textArea({ name: 'participants', label: label('participants'), value: v['participants'], errors, rows: 5, hint: p.participantsHint })}
    ${field({ name: 'startYear', label: label('startYear'), value: v['startYear'], errors, type: 'number', inputmode: 'numeric', min: 1900, max: 2100 })}
    ${select({ name: 'status', label: label('status'), value: v['status'], errors, options: Object.values(ProjectStatus).map((x) => ({ value: x, label: PROJECT_STATUS_LABELS[x][lang] })) })}
    ${field({ name: 'endYear', label: label('endYear'), value: v['endYear'], errors, type: 'number', inputmode: 'numeric', min: 1900, max: 2100, hint: p.endYearHint })}
    <div class="actions"><button type="submit">${project ? p.save : p.create}</button></div>
  </form>`;
  const states = project
    ? recordActions(req, {
        path: `/admin/projects/${project.id}`,
        entity: 'PROJECT',
        recordId: project.id,
        heading: p.actions,
        body:
          project.status === 'ACTIVE'
            ? html`<form method="post" action="/admin/projects/${project.id}/end" novalidate>
                ${csrfField(req.csrf)}
                <p class="hint">${p.endHint}</p>
                ${field({ name: 'endedIn', label: label('endYear'), value: '', type: 'number', inputmode: 'numeric', min: 1900, max: 2100 })}
                <div class="actions"><button type="submit" class="secondary">${p.end}</button></div>
              </form>`
            : html`<form method="post" action="/admin/projects/${project.id}/reopen">
                ${csrfField(req.csrf)}
                <p class="hint">${p.reopenHint}</p>
                <div class="actions"><button type="submit" class="secondary">${p.reopen}</button></div>
              </form>`,
        deleteLabel: p.delete,
        deleteHint: p.deleteHint,
        history: p.history,
      })
    : '';
  return page(
    project ? p.editTitle(project.name) : p.newTitle,
    html`<p><a href="${LIST}">← ${p.back}</a></p>
      ${errorSummary(t, errors, INPUTS)} ${mainForm} ${states}`,
    status,
  );
}
