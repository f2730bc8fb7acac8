import { z } from 'zod';
import { ProjectStatus } from '../../data/__generated__/enums.js';
import { splitList } from '../../data/school/columns.js';
import { CLUB_STATUS_LABELS, PROJECT_STATUS_LABELS, labelOf } from '../../data/school/labels.js';
import { csrfField, field, linkButton, listPage, select, table, textArea } from '../web/components.js';
import { oneOf, parseForm, text, textOrNull } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import type { Lang } from '../web/lang.js';
import { page, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type * as Op from './__generated__/operations.js';
import type { AdminDeps } from './deps.js';
import {
  ADMIN_PROJECT,
  ADMIN_PROJECTS,
  CREATE_PROJECT,
  DELETE_PROJECT,
  END_PROJECT,
  REOPEN_PROJECT,
  UPDATE_PROJECT,
} from './operations/projects.js';
import * as record from './records.js';
import { atInputs, enumOptions, filterSelect, formLabel, intField, queryInt } from './ui.js';

const PAGE_SIZE = 50;
const LIST = '/admin/projects';
const INPUTS = ['name', 'description', 'clubId', 'participants', 'startYear', 'status', 'endYear'];
type Project = Op.AdminProjectQuery['projects']['projects'][number];

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
function projectInput(form: z.infer<ReturnType<typeof projectForm>>, shown?: record.Values): Op.ProjectInput {
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
  const filter: Op.ProjectFilter = { ...(q ? { projectName: q } : {}), ...(status ? { status } : {}), ...(clubId ? { clubId } : {}) };
  const [data, clubs] = await Promise.all([
    deps.school.run<Op.AdminProjectsQuery, Op.AdminProjectsQueryVariables>(req, ADMIN_PROJECTS, {
      filter,
      page: pageNumber,
      size: PAGE_SIZE,
    }),
    record.clubChoices(req, deps),
  ]);
  return page(
    p.title,
    listPage(t, {
      path: LIST,
      before: html`<p>${linkButton('/admin/projects/new', p.add)}</p>`,
      filters: [
        field({ name: 'q', label: p.search, value: q, type: 'search' }),
        filterSelect(
          req,
          'clubId',
          clubId,
          clubs.map((c) => ({ value: String(c.id), label: c.name })),
        ),
        filterSelect(req, 'status', status, enumOptions(Object.values(ProjectStatus), PROJECT_STATUS_LABELS, lang)),
      ],
      status: p.count(data.projects.totalElements),
      table: projectTable(req, data.projects.projects),
      page: pageNumber,
      totalPages: data.projects.totalPages,
      params: { q, status, clubId },
    }),
  );
};

/** A project's page offers the clubs. */
const pages: record.Pages<Project, readonly record.ClubChoice[], 'ended' | 'reopened' | 'deleted'> = {
  list: LIST,
  done: (t) => t.admin.projects.done,
  defaults: { status: 'ACTIVE' },
  choices: record.clubChoices,
  load: record.load(ADMIN_PROJECT, (data: Op.AdminProjectQuery) => ({ record: data.projects.projects[0], choices: data.clubs.clubs })),
  values: valuesOf,
  show: projectPage,
};

/** A project's form: its page, a new one's, and the create and update they post. */
export const projectForms = record.forms(pages, {
  form: (req) => projectForm(req.lang),
  create: async (req, deps, form) => {
    const { createProject: created } = await record.mutate<Op.CreateProjectMutation, Op.CreateProjectMutationVariables>(
      req,
      deps,
      CREATE_PROJECT,
      {
        input: projectInput(form),
      },
    );
    return { errors: created.errors, id: created.project?.id ?? null };
  },
  update: async (req, deps, project, form) =>
    (
      await record.mutate<Op.UpdateProjectMutation, Op.UpdateProjectMutationVariables>(req, deps, UPDATE_PROJECT, {
        id: project.id,
        input: projectInput(form, valuesOf(project)),
      })
    ).updateProject,
});
export const endProject = record.action(pages, 'ended', async (req, deps, id) => {
  const form = parseForm(z.object({ endedIn: intField(req.lang, 'endYear') }), req.form);
  if (!form.ok) return { errors: atInputs(form.errors, { endedIn: 'endYear' }) };
  return (
    await record.mutate<Op.EndProjectMutation, Op.EndProjectMutationVariables>(req, deps, END_PROJECT, {
      id,
      endYear: form.value.endedIn,
    })
  ).endProject;
});

export const reopenProject = record.action(pages, 'reopened', record.byId<Op.ReopenProjectMutation>(REOPEN_PROJECT, 'reopenProject'));

export const deleteProject = record.action(pages, 'deleted', record.byId<Op.DeleteProjectMutation>(DELETE_PROJECT, 'deleteProject'), {
  deletes: true,
});

function valuesOf(p: Project): record.Values {
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

function projectTable(req: PageRequest, projects: Op.AdminProjectsQuery['projects']['projects']): Html {
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
  { record: project, choices: clubs }: record.Shown<Project, readonly record.ClubChoice[]>,
  form: record.FormState,
  status?: number,
): Outcome {
  const { lang } = req;
  const p = req.t.admin.projects;
  const { values: v, errors } = form;
  const label = (name: string) => formLabel(name, lang);
  const clubOptions = [
    { value: '', label: p.noClub },
    ...clubs.map((c) => ({
      value: String(c.id),
      label: c.status === 'ACTIVE' ? c.name : `${c.name} (${labelOf(CLUB_STATUS_LABELS, c.status, lang)})`,
    })),
  ];
  return record.layout(
    req,
    {
      list: LIST,
      entity: 'PROJECT',
      texts: p,
      record: project,
      errors,
      inputs: INPUTS,
      fields: html`${field({ name: 'name', label: label('name'), value: v['name'], errors, required: true, hint: p.nameHint })}
      ${textArea({ name: 'description', label: label('description'), value: v['description'], errors, rows: 4, hint: p.descriptionHint })}
      ${select({ name: 'clubId', label: label('clubId'), value: v['clubId'], errors, options: clubOptions })}
      ${textArea({ name: 'participants', label: label('participants'), value: v['participants'], errors, rows: 5, hint: p.participantsHint })}
      ${field({ name: 'startYear', label: label('startYear'), value: v['startYear'], errors, type: 'number', inputmode: 'numeric', min: 1900, max: 2100 })}
      ${select({ name: 'status', label: label('status'), value: v['status'], errors, options: enumOptions(Object.values(ProjectStatus), PROJECT_STATUS_LABELS, lang) })}
      ${field({ name: 'endYear', label: label('endYear'), value: v['endYear'], errors, type: 'number', inputmode: 'numeric', min: 1900, max: 2100, hint: p.endYearHint })}`,
      actions: !project
        ? html``
        : project.status === 'ACTIVE'
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
    },
    status,
  );
}
