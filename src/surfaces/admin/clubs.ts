import { z } from 'zod';
import { ClubStatus, ClubType } from '../../data/__generated__/enums.js';
import { splitList } from '../../data/school/columns.js';
import { CLUB_STATUS_LABELS, CLUB_TYPE_LABELS, labelOf } from '../../data/school/labels.js';
import { csrfField, field, linkButton, listPage, select, table, textArea } from '../web/components.js';
import { oneOf, text, textOrNull } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import type { Lang } from '../web/lang.js';
import { page, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type * as Op from './__generated__/operations.js';
import type { AdminDeps } from './deps.js';
import { ABOLISH_CLUB, ADMIN_CLUB, ADMIN_CLUBS, CREATE_CLUB, DELETE_CLUB, UPDATE_CLUB } from './operations/clubs.js';
import * as record from './records.js';
import { enumOptions, filterSelect, formLabel, intField, queryInt } from './ui.js';

const PAGE_SIZE = 50;
const LIST = '/admin/clubs';
const INPUTS = ['name', 'type', 'status', 'leader', 'members', 'foundedYear'];
type Club = Op.AdminClubQuery['clubs']['clubs'][number];

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
export function clubInput(form: z.infer<ReturnType<typeof clubForm>>, shown?: record.Values): Op.ClubInput {
  const input: Op.ClubInput = { name: form.name, type: form.type, status: form.status, foundedYear: form.foundedYear };
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
  const filter: Op.ClubFilter = {
    ...(q ? { clubName: q } : {}),
    ...(type ? { clubType: type } : {}),
    ...(status ? { clubStatus: status } : {}),
  };
  const data = await deps.school.run<Op.AdminClubsQuery, Op.AdminClubsQueryVariables>(req, ADMIN_CLUBS, {
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
        filterSelect(req, 'type', type, enumOptions(Object.values(ClubType), CLUB_TYPE_LABELS, lang)),
        filterSelect(req, 'status', status, enumOptions(Object.values(ClubStatus), CLUB_STATUS_LABELS, lang)),
      ],
      status: c.count(data.clubs.totalElements),
      table: clubTable(req, data.clubs.clubs),
      page: pageNumber,
      totalPages: data.clubs.totalPages,
      params: { q, type, status },
    }),
  );
};

const pages: record.Pages<Club, null, 'abolished' | 'deleted'> = {
  list: LIST,
  done: (t) => t.admin.clubs.done,
  defaults: { type: '', status: 'ACTIVE' },
  choices: async () => null,
  load: record.load(ADMIN_CLUB, (data: Op.AdminClubQuery) => ({ record: data.clubs.clubs[0], choices: null })),
  values: valuesOf,
  show: clubPage,
};

/** A club's form: its page, a new one's, and the create and update they post. */
export const clubForms = record.forms(pages, {
  form: (req) => clubForm(req.lang),
  create: async (req, deps, form) => {
    const { createClub: created } = await record.mutate<Op.CreateClubMutation, Op.CreateClubMutationVariables>(req, deps, CREATE_CLUB, {
      input: clubInput(form),
    });
    return { errors: created.errors, id: created.club?.id ?? null };
  },
  update: async (req, deps, club, form) =>
    (
      await record.mutate<Op.UpdateClubMutation, Op.UpdateClubMutationVariables>(req, deps, UPDATE_CLUB, {
        id: club.id,
        input: clubInput(form, valuesOf(club)),
      })
    ).updateClub,
});
export const abolishClub = record.action(pages, 'abolished', record.byId<Op.AbolishClubMutation>(ABOLISH_CLUB, 'abolishClub'));

export const deleteClub = record.action(pages, 'deleted', record.byId<Op.DeleteClubMutation>(DELETE_CLUB, 'deleteClub'), { deletes: true });

function valuesOf(c: Club): record.Values {
  return {
    name: c.name,
    type: c.type,
    status: c.status,
    leader: c.recordedLeader?.email ?? '',
    members: c.members.map((m) => m.email).join('\n'),
    foundedYear: c.foundedYear == null ? '' : String(c.foundedYear),
  };
}

function clubTable(req: PageRequest, clubs: Op.AdminClubsQuery['clubs']['clubs']): Html {
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

function clubPage(req: PageRequest, { record: club }: record.Shown<Club, null>, form: record.FormState, status?: number): Outcome {
  const { lang } = req;
  const c = req.t.admin.clubs;
  const { values: v, errors } = form;
  const label = (name: string) => formLabel(name, lang);
  return record.layout(
    req,
    {
      list: LIST,
      entity: 'CLUB',
      texts: c,
      record: club,
      errors,
      inputs: INPUTS,
      fields: html`${field({ name: 'name', label: label('name'), value: v['name'], errors, required: true, hint: c.nameHint })}
      ${select({ name: 'type', label: label('type'), value: v['type'], errors, required: true, options: [{ value: '', label: c.choose }, ...enumOptions(Object.values(ClubType), CLUB_TYPE_LABELS, lang)] })}
      ${select({ name: 'status', label: label('status'), value: v['status'], errors, options: enumOptions(Object.values(ClubStatus), CLUB_STATUS_LABELS, lang) })}
      ${field({ name: 'leader', label: label('leader'), value: v['leader'], errors, hint: c.leaderHint })}
      ${textArea({ name: 'members', label: label('members'), value: v['members'], errors, rows: 6, hint: c.membersHint })}
      ${field({ name: 'foundedYear', label: label('foundedYear'), value: v['foundedYear'], errors, type: 'number', inputmode: 'numeric', min: 1900, max: 2100 })}`,
      actions:
        club?.status === 'ACTIVE'
          ? html`<form method="post" action="/admin/clubs/${club.id}/abolish">
              ${csrfField(req.csrf)}
              <p class="hint">${c.abolishHint}</p>
              <div class="actions"><button type="submit" class="secondary">${c.abolish}</button></div>
            </form>`
          : html``,
    },
    status,
  );
}
