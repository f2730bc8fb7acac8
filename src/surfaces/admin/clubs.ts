import { z } from 'zod';
import { ClubStatus, ClubType } from '../../data/__generated__/enums.js';
import { splitList } from '../../data/school/columns.js';
import { CLUB_STATUS_LABELS, CLUB_TYPE_LABELS, labelOf } from '../../data/school/labels.js';
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
import { oneOf, text, textOrNull } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import type { Lang } from '../web/lang.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type {
  AbolishClubMutation,
  AbolishClubMutationVariables,
  AdminClubQuery,
  AdminClubQueryVariables,
  AdminClubsQuery,
  AdminClubsQueryVariables,
  ClubFilter,
  ClubInput,
  CreateClubMutation,
  CreateClubMutationVariables,
  DeleteClubMutation,
  DeleteClubMutationVariables,
  UpdateClubMutation,
  UpdateClubMutationVariables,
} from './__generated__/operations.js';
import type { AdminDeps } from './deps.js';
import { ABOLISH_CLUB, ADMIN_CLUB, ADMIN_CLUBS, CREATE_CLUB, DELETE_CLUB, UPDATE_CLUB } from './operations/clubs.js';
import { atInputs, formLabel, formValues, idParam, intField, language, queryInt, recordActions, saveRecord, unconfirmed } from './ui.js';

const PAGE_SIZE = 50;
const LIST = '/admin/clubs';
const INPUTS = ['name', 'type', 'status', 'leader', 'members', 'foundedYear'];
type Values = Readonly<Record<string, string>>;
type Club = AdminClubQuery['clubs']['clubs'][number];

const clubForm = (lang: Lang) =>
  z.object({
    name: textOrNull(),
    type: oneOf(Object.values(ClubType)),
    status: oneOf(Object.values(ClubStatus)),
    foundedYear: intField(lang, 'foundedYear'),
    leader: text(),
    members: text({ trim: false }).transform(splitList),
  });

/**
 * The mutation input of a submitted form. On an edit, the leader and members are sent only when
 * they differ from what the form showed, so saving a club whose recorded leader has graduated
 * does not clear that record by accident.
 */
export function clubInput(form: z.infer<ReturnType<typeof clubForm>>, shown?: Values): ClubInput {
  const input: ClubInput = { name: form.name, type: form.type, status: form.status, foundedYear: form.foundedYear };
  if (!shown || form.leader !== shown['leader']) input.leader = form.leader || null;
  if (!shown || form.members.join('\n') !== splitList(shown['members'] ?? '').join('\n')) input.members = form.members;
  if (input.status === 'ABOLISHED' && shown?.['status'] !== 'ABOLISHED') {
    // Abolishing through the form clears the leader and members as the abolish action does.
    delete input.leader;
    delete input.members;
  }
  return input;
}

export const clubList: Handler<AdminDeps> = async (req, deps) => {
  const { t, lang } = req;
  const c = t.admin.clubs;
  const q = req.query('q');
  const type = Object.values(ClubType).find((v) => v === req.query('type')) ?? null;
  const status = Object.values(ClubStatus).find((v) => v === req.query('status')) ?? null;
  const pageNumber = queryInt(req, 'page', 0, 100000) ?? 0;
  const filter: ClubFilter = {
    ...(q ? { clubName: q } : {}),
    ...(type ? { clubType: type } : {}),
    ...(status ? { clubStatus: status } : {}),
  };
  const data = await deps.school.run<AdminClubsQuery, AdminClubsQueryVariables>(req, ADMIN_CLUBS, {
    filter,
    page: pageNumber,
    size: PAGE_SIZE,
  });
  return page(
    c.title,
    listPage(t, {
      path: LIST,
      before: html`<p>${linkButton('/admin/clubs/new', c.add)}</p>`,
      filters: [
        field({ name: 'q', label: c.search, value: q, type: 'search' }),
        select({
          name: 'type',
          label: formLabel('type', lang),
          value: type,
          options: anyOption(
            t,
            Object.values(ClubType).map((v) => ({ value: v, label: CLUB_TYPE_LABELS[v][lang] })),
          ),
        }),
        select({
          name: 'status',
          label: formLabel('status', lang),
          value: status,
          options: anyOption(
            t,
            Object.values(ClubStatus).map((v) => ({ value: v, label: CLUB_STATUS_LABELS[v][lang] })),
          ),
        }),
      ],
      status: c.count(data.clubs.totalElements),
      table: clubTable(req, data.clubs.clubs),
      page: pageNumber,
      totalPages: data.clubs.totalPages,
      params: { q, type, status },
    }),
  );
};

export const newClub: Handler<AdminDeps> = async (req) => clubPage(req, { values: { type: '', status: 'ACTIVE' }, errors: [], club: null });

export const createClub: Handler<AdminDeps> = async (req, deps) =>
  saveRecord(req, {
    schema: clubForm(req.lang),
    save: async (form) => {
      const result = await deps.school.run<CreateClubMutation, CreateClubMutationVariables>(req, CREATE_CLUB, {
        input: clubInput(form),
        lang: language(req.lang),
      });
      return { errors: result.createClub.errors, id: result.createClub.club?.id ?? null, changed: true };
    },
    list: LIST,
    done: req.t.admin.clubs.done.created,
    again: (errors) => clubPage(req, { values: formValues(req), errors, club: null }, 422),
  });

async function loadClub(req: PageRequest, deps: AdminDeps): Promise<Club> {
  const [club] = (await deps.school.run<AdminClubQuery, AdminClubQueryVariables>(req, ADMIN_CLUB, { id: idParam(req) })).clubs.clubs;
  if (!club) throw new NotFoundError('No such club.');
  return club;
}

export const clubDetail: Handler<AdminDeps> = async (req, deps) => {
  const club = await loadClub(req, deps);
  return clubPage(req, { values: valuesOf(club), errors: [], club });
};

export const updateClub: Handler<AdminDeps> = async (req, deps) => {
  const club = await loadClub(req, deps);
  return saveRecord(req, {
    schema: clubForm(req.lang),
    save: async (form) => {
      const result = await deps.school.run<UpdateClubMutation, UpdateClubMutationVariables>(req, UPDATE_CLUB, {
        id: club.id,
        input: clubInput(form, valuesOf(club)),
        lang: language(req.lang),
      });
      return { errors: result.updateClub.errors, id: club.id, changed: Boolean(result.updateClub.batchId) };
    },
    list: LIST,
    done: req.t.admin.clubs.done.updated,
    unchanged: req.t.admin.clubs.done.unchanged,
    again: (errors) => clubPage(req, { values: formValues(req), errors, club }, 422),
  });
};

export const abolishClub: Handler<AdminDeps> = async (req, deps) => {
  const club = await loadClub(req, deps);
  const result = await deps.school.run<AbolishClubMutation, AbolishClubMutationVariables>(req, ABOLISH_CLUB, {
    id: club.id,
    lang: language(req.lang),
  });
  if (result.abolishClub.errors.length === 0)
    return redirect(`/admin/clubs/${club.id}`, { kind: 'ok', text: req.t.admin.clubs.done.abolished });
  return clubPage(req, { values: valuesOf(club), errors: atInputs(result.abolishClub.errors), club }, 422);
};

export const deleteClub: Handler<AdminDeps> = async (req, deps) => {
  const club = await loadClub(req, deps);
  let errors = unconfirmed(req.t, req);
  if (errors.length === 0) {
    errors = atInputs(
      (await deps.school.run<DeleteClubMutation, DeleteClubMutationVariables>(req, DELETE_CLUB, { id: club.id, lang: language(req.lang) }))
        .deleteClub.errors,
    );
    if (errors.length === 0) return redirect(LIST, { kind: 'ok', text: req.t.admin.clubs.done.deleted });
  }
  return clubPage(req, { values: valuesOf(club), errors, club }, 422);
};

function valuesOf(c: Club): Values {
  return {
    name: c.name,
    type: c.type,
    status: c.status,
    leader: c.recordedLeader?.email ?? '',
    members: c.members.map((m) => m.email).join('\n'),
    foundedYear: c.foundedYear == null ? '' : String(c.foundedYear),
  };
}

function clubTable(req: PageRequest, clubs: AdminClubsQuery['clubs']['clubs']): Html {
  const { t, lang } = req;
  return table(t, {
    columns: t.admin.clubs.columns,
    rows: clubs,
    cells: (c) => [
      { content: html`<a href="/admin/clubs/${c.id}">${c.name}</a>`, rowHeader: true },
      labelOf(CLUB_TYPE_LABELS, c.type, lang),
      `${labelOf(CLUB_STATUS_LABELS, c.status, lang)}${c.abolishedYear ? ` (${c.abolishedYear})` : ''}`,
      c.recordedLeader ? `${c.recordedLeader.name}${c.recordedLeader.studentNumber ? ` (${c.recordedLeader.studentNumber})` : ''}` : '—',
      c.members.length,
      c.foundedYear ?? '—',
    ],
  });
}

function clubPage(req: PageRequest, form: { values: Values; errors: readonly FieldError[]; club: Club | null }, status = 200): Outcome {
  const { t, lang } = req;
  const c = t.admin.clubs;
  const v = form.values;
  const errors = form.errors;
  const label = (name: string) => formLabel(name, lang);
  const club = form.club;
  const mainForm = html`<form method="post" action="${club ? `/admin/clubs/${club.id}` : LIST}" class="card" novalidate>
    ${csrfField(req.csrf)} ${field({ name: 'name', label: label('name'), value: v['name'], errors, required: true, hint: c.nameHint })}
    ${select({ name: 'type', label: label('type'), value: v['type'], errors, required: true, options: [{ value: '', label: c.choose }, ...Object.values(ClubType).map((x) => ({ value: x, label: CLUB_TYPE_LABELS[x][lang] }))] })}
    ${select({ name: 'status', label: label('status'), value: v['status'], errors, options: Object.values(ClubStatus).map((x) => ({ value: x, label: CLUB_STATUS_LABELS[x][lang] })) })}
    ${field({ name: 'leader', label: label('leader'), value: v['leader'], errors, hint: c.leaderHint })}
    ${textArea({ name: 'members', label: label('members'), value: v['members'], errors, rows: 6, hint: c.membersHint })}
    ${field({ name: 'foundedYear', label: label('foundedYear'), value: v['foundedYear'], errors, type: 'number', inputmode: 'numeric', min: 1900, max: 2100 })}
    <div class="actions"><button type="submit">${club ? c.save : c.create}</button></div>
  </form>`;
  const states = club
    ? recordActions(req, {
        path: `/admin/clubs/${club.id}`,
        entity: 'CLUB',
        recordId: club.id,
        heading: c.actions,
        body:
          club.status === 'ACTIVE'
            ? html`<form method="post" action="/admin/clubs/${club.id}/abolish">
                ${csrfField(req.csrf)}
                <p class="hint">${c.abolishHint}</p>
                <div class="actions"><button type="submit" class="secondary">${c.abolish}</button></div>
              </form>`
            : html``,
        deleteLabel: c.delete,
        deleteHint: c.deleteHint,
        history: c.history,
      })
    : '';
  return page(
    club ? c.editTitle(club.name) : c.newTitle,
    html`<p><a href="${LIST}">← ${c.back}</a></p>
      ${errorSummary(t, errors, INPUTS)} ${mainForm} ${states}`,
    status,
  );
}
