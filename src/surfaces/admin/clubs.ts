import Router from '@koa/router';
import { STAFF_ROLES } from '../../auth/principal.js';
import { ClubStatus, ClubType } from '../../data/__generated__/enums.js';
import { CLUB_STATUS_LABELS, CLUB_TYPE_LABELS, labelOf, type Lang } from '../../data/school/labels.js';
import { splitList } from '../../data/school/columns.js';
import { NotFoundError } from '../../errors/index.js';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { html, type Html } from '../../http/web/html.js';
import type { WebKit } from '../web/index.js';
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
import { adminShell } from './nav.js';
import { ABOLISH_CLUB, ADMIN_CLUB, ADMIN_CLUBS, CREATE_CLUB, DELETE_CLUB, UPDATE_CLUB } from './operations/clubs.js';
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
    title: '동아리',
    newTitle: '동아리 추가',
    editTitle: (name: string) => `동아리: ${name}`,
    add: '동아리 추가',
    search: '동아리 이름',
    count: (n: number) => `${n}개`,
    columns: ['이름', '종류', '상태', '부장', '부원 수', '설립연도'],
    choose: '선택하세요',
    leaderHint: '이메일, 네 자리 학번(예: 3101) 또는 #ID. 비우면 부장 없음',
    membersHint: '한 줄에 한 명씩: 이메일, 네 자리 학번 또는 #ID. 다른 같은 종류 동아리의 부원은 이 동아리로 옮겨집니다.',
    save: '저장',
    create: '추가',
    actions: '상태 바꾸기',
    abolish: '폐지',
    abolishHint: '부장과 부원이 모두 빠지고, 폐지연도가 올해로 기록됩니다.',
    delete: '삭제',
    deleteHint:
      '동아리를 지웁니다. 부원은 동아리에서 빠지고, 이 동아리의 프로젝트는 동아리가 없어집니다. 변경 기록에서 되돌릴 수 있습니다.',
    history: '이 동아리의 변경 기록',
    back: '동아리 목록',
    done: {
      created: '동아리를 추가했습니다.',
      updated: '저장했습니다.',
      unchanged: '바뀐 것이 없습니다.',
      abolished: '동아리를 폐지했습니다.',
      deleted: '동아리를 삭제했습니다.',
    },
  },
  en: {
    title: 'Clubs',
    newTitle: 'Add a club',
    editTitle: (name: string) => `Club: ${name}`,
    add: 'Add a club',
    search: 'Club name',
    count: (n: number) => `${n} ${n === 1 ? 'club' : 'clubs'}`,
    columns: ['Name', 'Type', 'Status', 'Leader', 'Members', 'Founded'],
    choose: 'Choose',
    leaderHint: 'An email, a four-digit student number (e.g. 3101) or #id; empty: no leader',
    membersHint: 'One per line: an email, a four-digit student number or #id. Members of another club of the same type move to this one.',
    save: 'Save',
    create: 'Add',
    actions: 'Change the status',
    abolish: 'Abolish',
    abolishHint: 'Removes the leader and every member and records this year as the year it was abolished.',
    delete: 'Delete',
    deleteHint: 'Deletes the club; its members leave it and its projects lose their club. It can be undone from the audit log.',
    history: "This club's changes",
    back: 'All clubs',
    done: {
      created: 'The club was added.',
      updated: 'Saved.',
      unchanged: 'Nothing changed.',
      abolished: 'The club was abolished.',
      deleted: 'The club was deleted.',
    },
  },
} as const;

const INPUTS = ['name', 'type', 'status', 'leader', 'members', 'foundedYear'];
type Values = Readonly<Record<string, string>>;

/** The clubs' pages: list, add, edit, abolish, delete. */
export function clubPages(kit: WebKit): AppMiddleware {
  const router = new Router<RequestState>();
  const staff = kit.requireAccount(STAFF_ROLES);

  router.get('/admin/clubs', staff, async (ctx) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const q = queryText(ctx, 'q');
    const type = Object.values(ClubType).find((v) => v === queryText(ctx, 'type')) ?? null;
    const status = Object.values(ClubStatus).find((v) => v === queryText(ctx, 'status')) ?? null;
    const page = queryInt(ctx, 'page', 0, 100000) ?? 0;
    const filter: ClubFilter = {
      ...(q ? { clubName: q } : {}),
      ...(type ? { clubType: type } : {}),
      ...(status ? { clubStatus: status } : {}),
    };
    const data = await op<AdminClubsQuery, AdminClubsQueryVariables>(kit, ctx, ADMIN_CLUBS, { filter, page, size: PAGE_SIZE });
    kit.page(ctx, 200, {
      ...adminShell(lang),
      title: t.title,
      ...withFlash(doneFlash(ctx, t.done)),
      content: listPage(lang, {
        path: '/admin/clubs',
        before: html`<p><a class="button" href="/admin/clubs/new">${t.add}</a></p>`,
        filters: [
          inputField({ name: 'q', label: t.search, value: q, errors: new Map(), type: 'search' }),
          selectField({
            name: 'type',
            label: formLabel('type', lang),
            value: type,
            errors: new Map(),
            options: anyOption(
              lang,
              Object.values(ClubType).map((v) => ({ value: v, label: CLUB_TYPE_LABELS[v][lang] })),
            ),
          }),
          selectField({
            name: 'status',
            label: formLabel('status', lang),
            value: status,
            errors: new Map(),
            options: anyOption(
              lang,
              Object.values(ClubStatus).map((v) => ({ value: v, label: CLUB_STATUS_LABELS[v][lang] })),
            ),
          }),
        ],
        status: t.count(data.clubs.totalElements),
        table: clubTable(lang, data.clubs.clubs),
        page,
        totalPages: data.clubs.totalPages,
        params: { q, type, status },
      }),
    });
  });

  router.get('/admin/clubs/new', staff, async (ctx) => {
    renderForm(kit, ctx, 200, { values: { type: '', status: 'ACTIVE' }, errors: new Map(), club: null });
  });

  router.post('/admin/clubs', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const values = kit.fields(ctx);
    const { input, errors } = clubInput(lang, values);
    if (errors.length === 0) {
      const result = await op<CreateClubMutation, CreateClubMutationVariables>(kit, ctx, CREATE_CLUB, { input, lang: language(lang) });
      const created = result.createClub.club;
      if (result.createClub.errors.length === 0 && created) return seeOther(ctx, `/admin/clubs/${created.id}?done=created`);
      errors.push(...result.createClub.errors);
    }
    renderForm(kit, ctx, 422, { values, errors: errorsByField(errors), club: null });
  });

  router.get('/admin/clubs/:id', staff, async (ctx) => {
    const club = await loadClub(kit, ctx);
    renderForm(kit, ctx, 200, { values: valuesOf(club), errors: new Map(), club, flash: doneFlash(ctx, TEXT[kit.lang(ctx)].done) });
  });

  router.post('/admin/clubs/:id', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const club = await loadClub(kit, ctx);
    const values = kit.fields(ctx);
    const { input, errors } = clubInput(lang, values, valuesOf(club));
    if (errors.length === 0) {
      const result = await op<UpdateClubMutation, UpdateClubMutationVariables>(kit, ctx, UPDATE_CLUB, {
        id: club.id,
        input,
        lang: language(lang),
      });
      if (result.updateClub.errors.length === 0)
        return seeOther(ctx, `/admin/clubs/${club.id}?done=${result.updateClub.batchId ? 'updated' : 'unchanged'}`);
      errors.push(...result.updateClub.errors);
    }
    renderForm(kit, ctx, 422, { values, errors: errorsByField(errors), club });
  });

  router.post('/admin/clubs/:id/abolish', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const club = await loadClub(kit, ctx);
    const result = await op<AbolishClubMutation, AbolishClubMutationVariables>(kit, ctx, ABOLISH_CLUB, {
      id: club.id,
      lang: language(lang),
    });
    if (result.abolishClub.errors.length === 0) return seeOther(ctx, `/admin/clubs/${club.id}?done=abolished`);
    renderForm(kit, ctx, 422, { values: valuesOf(club), errors: errorsByField(result.abolishClub.errors), club });
  });

  router.post('/admin/clubs/:id/delete', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const club = await loadClub(kit, ctx);
    let errors = unconfirmed(lang, kit.fields(ctx));
    if (errors.length === 0) {
      errors = (await op<DeleteClubMutation, DeleteClubMutationVariables>(kit, ctx, DELETE_CLUB, { id: club.id, lang: language(lang) }))
        .deleteClub.errors;
      if (errors.length === 0) return seeOther(ctx, '/admin/clubs?done=deleted');
    }
    renderForm(kit, ctx, 422, { values: valuesOf(club), errors: errorsByField(errors), club });
  });

  const routes = router.routes();
  return (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next);
}

type Club = AdminClubQuery['clubs']['clubs'][number];

const NOT_FOUND = 'No such club.';

async function loadClub(kit: WebKit, ctx: AppContext): Promise<Club> {
  const id = idParam(ctx, NOT_FOUND);
  const [club] = (await op<AdminClubQuery, AdminClubQueryVariables>(kit, ctx, ADMIN_CLUB, { id })).clubs.clubs;
  if (!club) throw new NotFoundError(NOT_FOUND);
  return club;
}

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

/**
 * The mutation input of a submitted form. On an edit, the leader and members are sent only when
 * they differ from what the form showed, so saving a club whose recorded leader has graduated
 * does not clear that record by accident.
 */
export function clubInput(lang: Lang, v: Values, shown?: Values): { input: ClubInput; errors: FieldMessage[] } {
  const errors: FieldMessage[] = [];
  const input: ClubInput = {
    name: (v['name'] ?? '').trim() || null,
    type: Object.values(ClubType).find((t) => t === v['type']) ?? null,
    status: Object.values(ClubStatus).find((s) => s === v['status']) ?? null,
    foundedYear: formInts(lang, v, errors)('foundedYear'),
  };
  const leader = (v['leader'] ?? '').trim();
  if (!shown || leader !== shown['leader']) input.leader = leader || null;
  const members = splitList(v['members'] ?? '');
  if (!shown || members.join('\n') !== splitList(shown['members'] ?? '').join('\n')) input.members = members;
  if (input.status === 'ABOLISHED' && shown?.['status'] !== 'ABOLISHED') {
    // Abolishing through the form clears the leader and members as the abolish action does.
    delete input.leader;
    delete input.members;
  }
  return { input, errors };
}

function clubTable(lang: Lang, clubs: AdminClubsQuery['clubs']['clubs']): Html {
  return listTable(
    lang,
    'list',
    TEXT[lang].columns,
    clubs,
    (c) =>
      html`<tr>
        <th scope="row"><a href="/admin/clubs/${c.id}">${c.name}</a></th>
        <td>${labelOf(CLUB_TYPE_LABELS, c.type, lang)}</td>
        <td>${labelOf(CLUB_STATUS_LABELS, c.status, lang)}${c.abolishedYear ? ` (${c.abolishedYear})` : ''}</td>
        <td>
          ${c.recordedLeader ? `${c.recordedLeader.name}${c.recordedLeader.studentNumber ? ` (${c.recordedLeader.studentNumber})` : ''}` : '—'}
        </td>
        <td>${c.members.length}</td>
        <td>${c.foundedYear ?? '—'}</td>
      </tr>`,
  );
}

function renderForm(
  kit: WebKit,
  ctx: AppContext,
  status: number,
  form: { values: Values; errors: ReadonlyMap<string, string[]>; club: Club | null; flash?: { kind: 'ok'; text: string } | undefined },
): void {
  const lang = kit.lang(ctx);
  const t = TEXT[lang];
  const v = form.values;
  const e = form.errors;
  const label = (field: string) => formLabel(field, lang);
  const club = form.club;
  const mainForm = html`<form method="post" action="${club ? `/admin/clubs/${club.id}` : '/admin/clubs'}" class="card" novalidate>
    ${csrfField(kit, ctx)} ${inputField({ name: 'name', label: label('name'), value: v['name'], errors: e, required: true, hint: '1~30' })}
    ${selectField({ name: 'type', label: label('type'), value: v['type'], errors: e, required: true, options: [{ value: '', label: t.choose }, ...Object.values(ClubType).map((x) => ({ value: x, label: CLUB_TYPE_LABELS[x][lang] }))] })}
    ${selectField({ name: 'status', label: label('status'), value: v['status'], errors: e, options: Object.values(ClubStatus).map((x) => ({ value: x, label: CLUB_STATUS_LABELS[x][lang] })) })}
    ${inputField({ name: 'leader', label: label('leader'), value: v['leader'], errors: e, hint: t.leaderHint })}
    ${textareaField({ name: 'members', label: label('members'), value: v['members'], errors: e, rows: 6, hint: t.membersHint })}
    ${inputField({ name: 'foundedYear', label: label('foundedYear'), value: v['foundedYear'], errors: e, type: 'number', inputmode: 'numeric', min: 1900, max: 2100 })}
    <div class="actions"><button type="submit">${club ? t.save : t.create}</button></div>
  </form>`;
  const states = club
    ? recordActions(kit, ctx, lang, {
        path: `/admin/clubs/${club.id}`,
        entity: 'CLUB',
        recordId: club.id,
        heading: t.actions,
        body:
          club.status === 'ACTIVE'
            ? html`<form method="post" action="/admin/clubs/${club.id}/abolish">
                ${csrfField(kit, ctx)}
                <p class="hint">${t.abolishHint}</p>
                <div class="actions"><button type="submit" class="secondary">${t.abolish}</button></div>
              </form>`
            : '',
        deleteLabel: t.delete,
        deleteHint: t.deleteHint,
        history: t.history,
      })
    : '';
  kit.page(ctx, status, {
    ...adminShell(lang),
    title: club ? t.editTitle(club.name) : t.newTitle,
    ...withFlash(form.flash),
    content: html`<p><a href="/admin/clubs">← ${t.back}</a></p>
      ${errorSummary(lang, e, INPUTS)} ${mainForm} ${states}`,
  });
}
