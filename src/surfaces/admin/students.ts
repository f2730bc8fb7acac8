import Router from '@koa/router';
import { STAFF_ROLES } from '../../auth/principal.js';
import { Major, Sex, StudentRole } from '../../data/__generated__/enums.js';
import { CLUB_STATUS_LABELS, MAJOR_LABELS, ROLE_LABELS, SEX_LABELS, labelOf, type Lang } from '../../data/school/labels.js';
import { NotFoundError } from '../../errors/index.js';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { html, type Html } from '../../http/web/html.js';
import type { WebKit } from '../web/index.js';
import type {
  AdminClubChoicesQuery,
  AdminClubChoicesQueryVariables,
  AdminStudentQuery,
  AdminStudentQueryVariables,
  AdminStudentsQuery,
  AdminStudentsQueryVariables,
  CreateStudentInput,
  CreateStudentMutation,
  CreateStudentMutationVariables,
  DeleteStudentMutation,
  DeleteStudentMutationVariables,
  GraduateStudentMutation,
  GraduateStudentMutationVariables,
  ReactivateStudentMutation,
  ReactivateStudentMutationVariables,
  StudentFilter,
  UpdateStudentMutation,
  UpdateStudentMutationVariables,
  WithdrawStudentMutation,
  WithdrawStudentMutationVariables,
} from './__generated__/operations.js';
import { adminShell } from './nav.js';
import {
  ADMIN_CLUB_CHOICES,
  ADMIN_STUDENT,
  ADMIN_STUDENTS,
  CREATE_STUDENT,
  DELETE_STUDENT,
  GRADUATE_STUDENT,
  REACTIVATE_STUDENT,
  UPDATE_STUDENT,
  WITHDRAW_STUDENT,
} from './operations/students.js';
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
  unconfirmed,
  withFlash,
} from './ui.js';

const PAGE_SIZE = 50;

const TEXT = {
  ko: {
    title: '학생',
    newTitle: '학생 추가',
    editTitle: (name: string) => `학생: ${name}`,
    add: '학생 추가',
    search: '이름, 이메일 또는 학번',
    status: '재학 상태',
    statuses: { enrolled: '재학생', graduates: '졸업생', withdrawn: '자퇴생', all: '전체' },
    grade: '학년',
    classNum: '반',
    count: (n: number) => `${n}명`,
    columns: ['학번', '이름', '이메일', '학과', '소속', '호실', '전공동아리', '창체동아리'],
    save: '저장',
    create: '추가',
    majorAuto: '반에 따라 (1·2반 SW개발과, 3반 스마트IoT과, 4반 인공지능과)',
    roomHint: '201~518; 비우면 기숙사에 살지 않음',
    githubHint: 'GitHub 사용자 이름 (예: octocat)',
    none: '없음',
    choose: '선택하세요',
    actions: '상태 바꾸기',
    graduate: '졸업 처리',
    withdraw: '자퇴 처리',
    retireHint: '학년·반·번호·학과·호실·동아리가 비워지고, 부장인 동아리는 부장이 없어집니다.',
    reactivate: '재학으로 되돌리기',
    reactivateHint: '돌아갈 학년, 반, 번호를 적으세요.',
    delete: '삭제',
    deleteHint: '학생을 지웁니다. 프로젝트 참여와 동아리 부장에서도 빠집니다. 변경 기록에서 되돌릴 수 있습니다.',
    retired: (role: string) => `${role}: 학년·반·번호가 없습니다.`,
    history: '이 학생의 변경 기록',
    back: '학생 목록',
    done: {
      created: '학생을 추가했습니다.',
      updated: '저장했습니다.',
      unchanged: '바뀐 것이 없습니다.',
      graduated: '졸업 처리했습니다.',
      withdrawn: '자퇴 처리했습니다.',
      reactivated: '재학으로 되돌렸습니다.',
      deleted: '학생을 삭제했습니다.',
    },
  },
  en: {
    title: 'Students',
    newTitle: 'Add a student',
    editTitle: (name: string) => `Student: ${name}`,
    add: 'Add a student',
    search: 'Name, email or student number',
    status: 'Enrolment',
    statuses: { enrolled: 'Enrolled', graduates: 'Graduates', withdrawn: 'Withdrawn', all: 'All' },
    grade: 'Grade',
    classNum: 'Class',
    count: (n: number) => `${n} ${n === 1 ? 'student' : 'students'}`,
    columns: ['Student no.', 'Name', 'Email', 'Major', 'Role', 'Room', 'Major club', 'Autonomous club'],
    save: 'Save',
    create: 'Add',
    majorAuto: 'From the class (1-2 Software development, 3 Smart IoT, 4 AI)',
    roomHint: '201 to 518; empty: not in the dormitory',
    githubHint: 'A GitHub username (e.g. octocat)',
    none: 'None',
    choose: 'Choose',
    actions: 'Change the status',
    graduate: 'Graduate',
    withdraw: 'Withdraw',
    retireHint: 'Clears grade, class, number, major, room and clubs; clubs the student leads lose their leader.',
    reactivate: 'Make enrolled again',
    reactivateHint: 'Give the grade, class and number to return to.',
    delete: 'Delete',
    deleteHint: 'Deletes the student, also from project participants and club leadership. It can be undone from the audit log.',
    retired: (role: string) => `${role}: no grade, class or number.`,
    history: "This student's changes",
    back: 'All students',
    done: {
      created: 'The student was added.',
      updated: 'Saved.',
      unchanged: 'Nothing changed.',
      graduated: 'The student has graduated.',
      withdrawn: 'The student has withdrawn.',
      reactivated: 'The student is enrolled again.',
      deleted: 'The student was deleted.',
    },
  },
} as const;

type Status = keyof (typeof TEXT)['ko']['statuses'];
const STATUSES: readonly Status[] = ['enrolled', 'graduates', 'withdrawn', 'all'];
/** Student roles a form may set (graduating and withdrawing are actions of their own). */
const ENROLLED_ROLES = [StudentRole.StudentCouncil, StudentRole.DormitoryManager, StudentRole.GeneralStudent] as const;
/** The form's inputs, in order (errors of other fields go to the summary only). */
const INPUTS = [
  'name',
  'email',
  'sex',
  'grade',
  'classNum',
  'number',
  'major',
  'role',
  'dormitoryRoom',
  'majorClubId',
  'autonomousClubId',
  'specialty',
  'githubId',
];
/** Where an error of the data layer is shown on the form. */
const ERROR_INPUT: Readonly<Record<string, string>> = { studentNumber: 'number', id: 'name' };

type Club = AdminStudentQuery['clubs']['clubs'][number];
type Values = Readonly<Record<string, string>>;

/** The students' pages: list, add, edit, graduate, withdraw, reactivate, delete. */
export function studentPages(kit: WebKit): AppMiddleware {
  const router = new Router<RequestState>();
  const staff = kit.requireAccount(STAFF_ROLES);

  router.get('/admin/students', staff, async (ctx) => {
    const lang = kit.lang(ctx);
    const t = TEXT[lang];
    const q = queryText(ctx, 'q');
    const status: Status = STATUSES.find((s) => s === queryText(ctx, 'status')) ?? 'enrolled';
    const grade = queryInt(ctx, 'grade', 1, 3);
    const classNum = queryInt(ctx, 'classNum', 1, 4);
    const page = queryInt(ctx, 'page', 0, 100000) ?? 0;
    const data = await op<AdminStudentsQuery, AdminStudentsQueryVariables>(kit, ctx, ADMIN_STUDENTS, {
      filter: studentFilter(q, status, grade, classNum),
      page,
      size: PAGE_SIZE,
    });
    const numbers = (n: number) =>
      anyOption(
        lang,
        Array.from({ length: n }, (_, i) => ({ value: String(i + 1), label: String(i + 1) })),
      );
    kit.page(ctx, 200, {
      ...adminShell(lang),
      title: t.title,
      ...withFlash(doneFlash(ctx, t.done)),
      content: listPage(lang, {
        path: '/admin/students',
        before: html`<p><a class="button" href="/admin/students/new">${t.add}</a></p>`,
        filters: [
          inputField({ name: 'q', label: t.search, value: q, errors: new Map(), type: 'search' }),
          selectField({
            name: 'status',
            label: t.status,
            value: status,
            errors: new Map(),
            options: STATUSES.map((v) => ({ value: v, label: t.statuses[v] })),
          }),
          selectField({ name: 'grade', label: t.grade, value: grade, errors: new Map(), options: numbers(3) }),
          selectField({ name: 'classNum', label: t.classNum, value: classNum, errors: new Map(), options: numbers(4) }),
        ],
        status: t.count(data.students.totalElements),
        table: studentTable(lang, data.students.students),
        page,
        totalPages: data.students.totalPages,
        params: { q, status: status === 'enrolled' ? '' : status, grade, classNum },
      }),
    });
  });

  router.get('/admin/students/new', staff, async (ctx) => {
    const clubs = (await op<AdminClubChoicesQuery, AdminClubChoicesQueryVariables>(kit, ctx, ADMIN_CLUB_CHOICES, {})).clubs.clubs;
    renderForm(kit, ctx, 200, { clubs, values: { role: 'GENERAL_STUDENT' }, errors: new Map(), id: null, role: null, name: null });
  });

  router.post('/admin/students', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const values = kit.fields(ctx);
    const { input, errors } = studentInput(lang, values);
    if (errors.length === 0) {
      const result = await op<CreateStudentMutation, CreateStudentMutationVariables>(kit, ctx, CREATE_STUDENT, {
        input,
        lang: language(lang),
      });
      const created = result.createStudent.student;
      if (result.createStudent.errors.length === 0 && created) return seeOther(ctx, `/admin/students/${created.id}?done=created`);
      errors.push(...result.createStudent.errors);
    }
    const clubs = (await op<AdminClubChoicesQuery, AdminClubChoicesQueryVariables>(kit, ctx, ADMIN_CLUB_CHOICES, {})).clubs.clubs;
    renderForm(kit, ctx, 422, { clubs, values, errors: errorsByField(errors, ERROR_INPUT), id: null, role: null, name: null });
  });

  router.get('/admin/students/:id', staff, async (ctx) => {
    const { student, clubs } = await loadStudent(kit, ctx);
    renderForm(kit, ctx, 200, {
      clubs,
      values: valuesOf(student),
      errors: new Map(),
      id: student.id,
      role: student.role,
      name: student.name,
      flash: doneFlash(ctx, TEXT[kit.lang(ctx)].done),
    });
  });

  router.post('/admin/students/:id', staff, kit.form, async (ctx) => {
    const lang = kit.lang(ctx);
    const { student, clubs } = await loadStudent(kit, ctx);
    const values = kit.fields(ctx);
    const retired = student.role === 'GRADUATE' || student.role === 'WITHDRAWN';
    const { input, errors } = studentInput(lang, values, retired);
    if (errors.length === 0) {
      const result = await op<UpdateStudentMutation, UpdateStudentMutationVariables>(kit, ctx, UPDATE_STUDENT, {
        id: student.id,
        input,
        lang: language(lang),
      });
      if (result.updateStudent.errors.length === 0) {
        return seeOther(ctx, `/admin/students/${student.id}?done=${result.updateStudent.batchId ? 'updated' : 'unchanged'}`);
      }
      errors.push(...result.updateStudent.errors);
    }
    renderForm(kit, ctx, 422, {
      clubs,
      values,
      errors: errorsByField(errors, ERROR_INPUT),
      id: student.id,
      role: student.role,
      name: student.name,
    });
  });

  const action = (path: string, run: (ctx: AppContext, id: number, lang: Lang) => Promise<{ errors: FieldMessage[] }>, done: string) => {
    router.post(`/admin/students/:id/${path}`, staff, kit.form, async (ctx) => {
      const lang = kit.lang(ctx);
      const { student, clubs } = await loadStudent(kit, ctx);
      const result = await run(ctx, student.id, lang);
      if (result.errors.length === 0)
        return seeOther(ctx, path === 'delete' ? `/admin/students?done=${done}` : `/admin/students/${student.id}?done=${done}`);
      renderForm(kit, ctx, 422, {
        clubs,
        values: path === 'reactivate' ? { ...valuesOf(student), ...kit.fields(ctx) } : valuesOf(student),
        errors: errorsByField(result.errors, ERROR_INPUT),
        id: student.id,
        role: student.role,
        name: student.name,
      });
    });
  };
  action(
    'graduate',
    async (ctx, id, lang) =>
      (await op<GraduateStudentMutation, GraduateStudentMutationVariables>(kit, ctx, GRADUATE_STUDENT, { id, lang: language(lang) }))
        .graduateStudent,
    'graduated',
  );
  action(
    'withdraw',
    async (ctx, id, lang) =>
      (await op<WithdrawStudentMutation, WithdrawStudentMutationVariables>(kit, ctx, WITHDRAW_STUDENT, { id, lang: language(lang) }))
        .withdrawStudent,
    'withdrawn',
  );
  action(
    'reactivate',
    async (ctx, id, lang) => {
      const errors: FieldMessage[] = [];
      const number = formInts(lang, kit.fields(ctx), errors);
      const input = { grade: number('grade'), classNum: number('classNum'), number: number('number') };
      if (errors.length > 0) return { errors };
      return (
        await op<ReactivateStudentMutation, ReactivateStudentMutationVariables>(kit, ctx, REACTIVATE_STUDENT, {
          id,
          input,
          lang: language(lang),
        })
      ).reactivateStudent;
    },
    'reactivated',
  );
  action(
    'delete',
    async (ctx, id, lang) => {
      const errors = unconfirmed(lang, kit.fields(ctx));
      if (errors.length > 0) return { errors };
      return (await op<DeleteStudentMutation, DeleteStudentMutationVariables>(kit, ctx, DELETE_STUDENT, { id, lang: language(lang) }))
        .deleteStudent;
    },
    'deleted',
  );

  const routes = router.routes();
  return (ctx, next) => routes(ctx as Parameters<typeof routes>[0], next);
}

/** The list's search: an email (has @), a student number (four digits), else a name. */
export function studentFilter(q: string, status: Status, grade: number | null, classNum: number | null): StudentFilter {
  const filter: StudentFilter = {};
  if (/^\d{4}$/.test(q)) Object.assign(filter, { grade: Number(q[0]), classNum: Number(q[1]), number: Number(q.slice(2)) });
  else if (q.includes('@')) filter.email = q;
  else if (q) filter.name = q;
  if (grade !== null && filter.grade == null) filter.grade = grade;
  if (classNum !== null && filter.classNum == null) filter.classNum = classNum;
  if (status === 'graduates') Object.assign(filter, { role: 'GRADUATE', includeGraduates: true });
  else if (status === 'withdrawn') Object.assign(filter, { role: 'WITHDRAWN', includeWithdrawn: true });
  else if (status === 'all') Object.assign(filter, { includeGraduates: true, includeWithdrawn: true });
  return filter;
}

const NOT_FOUND = 'No such student.';

async function loadStudent(kit: WebKit, ctx: AppContext) {
  const data = await op<AdminStudentQuery, AdminStudentQueryVariables>(kit, ctx, ADMIN_STUDENT, { id: idParam(ctx, NOT_FOUND) });
  const [student] = data.students.students;
  if (!student) throw new NotFoundError(NOT_FOUND);
  return { student, clubs: data.clubs.clubs };
}

function valuesOf(s: AdminStudentQuery['students']['students'][number]): Values {
  const text = (v: string | number | null | undefined) => (v == null ? '' : String(v));
  return {
    name: s.name,
    email: s.email,
    sex: s.sex,
    grade: text(s.grade),
    classNum: text(s.classNum),
    number: text(s.number),
    major: text(s.major),
    role: s.role,
    dormitoryRoom: text(s.dormitoryRoom),
    majorClubId: text(s.majorClub?.id),
    autonomousClubId: text(s.autonomousClub?.id),
    specialty: text(s.specialty),
    githubId: text(s.githubId),
  };
}

/**
 * The mutation input of a submitted form. Integers that are not integers are reported here (the
 * schema could not take them); every other rule is the data layer's. A graduate's form has no
 * class fields, so they are not sent.
 */
export function studentInput(lang: Lang, v: Values, retired = false): { input: CreateStudentInput; errors: FieldMessage[] } {
  const errors: FieldMessage[] = [];
  const int = formInts(lang, v, errors);
  const oneOf = <T extends string>(value: string | undefined, allowed: readonly T[]): T | null => allowed.find((a) => a === value) ?? null;
  const text = (name: string) => (v[name] ?? '').trim() || null;
  const input: CreateStudentInput = {
    name: text('name'),
    email: text('email'),
    sex: oneOf(v['sex'], Object.values(Sex)),
    specialty: text('specialty'),
    githubId: text('githubId'),
  };
  if (!retired) {
    Object.assign(input, {
      grade: int('grade'),
      classNum: int('classNum'),
      number: int('number'),
      major: oneOf(v['major'], Object.values(Major)),
      role: oneOf(v['role'], ENROLLED_ROLES),
      dormitoryRoom: int('dormitoryRoom'),
      majorClubId: int('majorClubId'),
      autonomousClubId: int('autonomousClubId'),
    });
  }
  return { input, errors };
}

function studentTable(lang: Lang, students: AdminStudentsQuery['students']['students']): Html {
  return listTable(
    lang,
    'list',
    TEXT[lang].columns,
    students,
    (s) =>
      html`<tr>
        <td>${s.studentNumber ?? '—'}</td>
        <th scope="row"><a href="/admin/students/${s.id}">${s.name}</a></th>
        <td class="mono">${s.email}</td>
        <td>${labelOf(MAJOR_LABELS, s.major, lang) || '—'}</td>
        <td>${labelOf(ROLE_LABELS, s.role, lang)}</td>
        <td>${s.dormitoryRoom ?? '—'}</td>
        <td>${s.majorClub?.name ?? '—'}</td>
        <td>${s.autonomousClub?.name ?? '—'}</td>
      </tr>`,
  );
}

interface FormState {
  readonly clubs: readonly Club[];
  readonly values: Values;
  readonly errors: ReadonlyMap<string, string[]>;
  readonly id: number | null;
  readonly role: string | null;
  readonly name: string | null;
  readonly flash?: { kind: 'ok'; text: string } | undefined;
}

function clubOptions(lang: Lang, clubs: readonly Club[], type: Club['type'], current: string | undefined) {
  const t = TEXT[lang];
  return [
    { value: '', label: t.none },
    ...clubs
      .filter((c) => c.type === type && (c.status === 'ACTIVE' || String(c.id) === current))
      .map((c) => ({
        value: String(c.id),
        label: c.status === 'ACTIVE' ? c.name : `${c.name} (${labelOf(CLUB_STATUS_LABELS, c.status, lang)})`,
      })),
  ];
}

function renderForm(kit: WebKit, ctx: AppContext, status: number, form: FormState): void {
  const lang = kit.lang(ctx);
  const t = TEXT[lang];
  const v = form.values;
  const e = form.errors;
  const retired = form.role === 'GRADUATE' || form.role === 'WITHDRAWN';
  const label = (field: string) => formLabel(field, lang);
  const options = <T extends string>(values: readonly T[], labels: Readonly<Record<T, { ko: string; en: string }>>, empty?: string) => [
    ...(empty !== undefined ? [{ value: '', label: empty }] : []),
    ...values.map((value) => ({ value, label: labels[value][lang] })),
  ];
  const action = form.id === null ? '/admin/students' : `/admin/students/${form.id}`;
  const enrolment = retired
    ? html`<p class="hint">${t.retired(labelOf(ROLE_LABELS, form.role, lang))}</p>`
    : html`<fieldset>
          <legend>${label('studentNumber')}</legend>
          ${selectField({ name: 'grade', label: label('grade'), value: v['grade'], errors: e, required: true, options: [{ value: '', label: t.choose }, ...['1', '2', '3'].map((g) => ({ value: g, label: g }))] })}
          ${selectField({ name: 'classNum', label: label('classNum'), value: v['classNum'], errors: e, required: true, options: [{ value: '', label: t.choose }, ...['1', '2', '3', '4'].map((c) => ({ value: c, label: c }))] })}
          ${inputField({ name: 'number', label: label('number'), value: v['number'], errors: e, required: true, type: 'number', inputmode: 'numeric', min: 1, max: 18, hint: '1~18' })}
        </fieldset>
        ${selectField({ name: 'major', label: label('major'), value: v['major'], errors: e, options: options(Object.values(Major), MAJOR_LABELS, t.majorAuto) })}
        ${selectField({ name: 'role', label: label('role'), value: v['role'], errors: e, options: options(ENROLLED_ROLES, ROLE_LABELS) })}
        ${inputField({ name: 'dormitoryRoom', label: label('dormitoryRoom'), value: v['dormitoryRoom'], errors: e, type: 'number', inputmode: 'numeric', min: 201, max: 518, hint: t.roomHint })}
        ${selectField({ name: 'majorClubId', label: label('majorClubId'), value: v['majorClubId'], errors: e, options: clubOptions(lang, form.clubs, 'MAJOR_CLUB', v['majorClubId']) })}
        ${selectField({ name: 'autonomousClubId', label: label('autonomousClubId'), value: v['autonomousClubId'], errors: e, options: clubOptions(lang, form.clubs, 'AUTONOMOUS_CLUB', v['autonomousClubId']) })}`;
  const mainForm = html`<form method="post" action="${action}" class="card" novalidate>
    ${csrfField(kit, ctx)}
    ${inputField({ name: 'name', label: label('name'), value: v['name'], errors: e, required: true, autocomplete: 'off' })}
    ${inputField({ name: 'email', label: label('email'), value: v['email'], errors: e, required: true, type: 'email', autocomplete: 'off' })}
    ${selectField({ name: 'sex', label: label('sex'), value: v['sex'], errors: e, required: true, options: options(Object.values(Sex), SEX_LABELS, t.choose) })}
    ${enrolment} ${inputField({ name: 'specialty', label: label('specialty'), value: v['specialty'], errors: e })}
    ${inputField({ name: 'githubId', label: label('githubId'), value: v['githubId'], errors: e, hint: t.githubHint })}
    <div class="actions"><button type="submit">${form.id === null ? t.create : t.save}</button></div>
  </form>`;
  const states =
    form.id === null
      ? ''
      : recordActions(kit, ctx, lang, {
          path: `/admin/students/${form.id}`,
          entity: 'STUDENT',
          recordId: form.id,
          heading: t.actions,
          body: retired
            ? html`<form method="post" action="/admin/students/${form.id}/reactivate" novalidate>
                ${csrfField(kit, ctx)}
                <p class="hint">${t.reactivateHint}</p>
                <div class="filters">
                  <div>
                    ${inputField({ name: 'grade', label: label('grade'), value: '', errors: e, type: 'number', inputmode: 'numeric', min: 1, max: 3 })}
                  </div>
                  <div>
                    ${inputField({ name: 'classNum', label: label('classNum'), value: '', errors: e, type: 'number', inputmode: 'numeric', min: 1, max: 4 })}
                  </div>
                  <div>
                    ${inputField({ name: 'number', label: label('number'), value: '', errors: e, type: 'number', inputmode: 'numeric', min: 1, max: 18 })}
                  </div>
                </div>
                <div class="actions"><button type="submit" class="secondary">${t.reactivate}</button></div>
              </form>`
            : html`<p class="hint">${t.retireHint}</p>
                <div class="actions">
                  <form method="post" action="/admin/students/${form.id}/graduate">
                    ${csrfField(kit, ctx)}<button type="submit" class="secondary">${t.graduate}</button>
                  </form>
                  <form method="post" action="/admin/students/${form.id}/withdraw">
                    ${csrfField(kit, ctx)}<button type="submit" class="secondary">${t.withdraw}</button>
                  </form>
                </div>`,
          deleteLabel: t.delete,
          deleteHint: t.deleteHint,
          history: t.history,
        });
  kit.page(ctx, status, {
    ...adminShell(lang),
    title: form.id === null ? t.newTitle : t.editTitle(form.name ?? ''),
    ...withFlash(form.flash),
    content: html`<p><a href="/admin/students">← ${t.back}</a></p>
      ${errorSummary(lang, e, INPUTS)} ${mainForm} ${states}`,
  });
}
