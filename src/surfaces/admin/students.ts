import { z } from 'zod';
import { Major, Sex, StudentRole } from '../../data/__generated__/enums.js';
import { CLUB_STATUS_LABELS, MAJOR_LABELS, ROLE_LABELS, SEX_LABELS, labelOf } from '../../data/school/labels.js';
import { csrfField, field, linkButton, listPage, select, table } from '../web/components.js';
import { oneOf, parseForm, textOrNull } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import type { Lang } from '../web/lang.js';
import { page, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type * as Op from './__generated__/operations.js';
import type { AdminDeps } from './deps.js';
import {
  ADMIN_STUDENT,
  ADMIN_STUDENTS,
  CREATE_STUDENT,
  DELETE_STUDENT,
  GRADUATE_STUDENT,
  REACTIVATE_STUDENT,
  UPDATE_STUDENT,
  WITHDRAW_STUDENT,
} from './operations/students.js';
import * as record from './records.js';
import { enumOptions, filterSelect, formLabel, intField, queryInt } from './ui.js';

const PAGE_SIZE = 50;
const LIST = '/admin/students';

type Status = 'enrolled' | 'graduates' | 'withdrawn' | 'all';
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

type Club = record.ClubChoice;
type Student = Op.AdminStudentQuery['students']['students'][number];

/**
 * The form as the mutation's input (zod): integers that are not integers are refused here (the
 * schema could not take them); every other rule is the data layer's. A graduate's form has no
 * class fields, so they are not sent.
 */
export function studentForm(lang: Lang, retired = false) {
  const common = {
    name: textOrNull(),
    email: textOrNull(),
    sex: oneOf(Object.values(Sex)),
    specialty: textOrNull(),
    githubId: textOrNull(),
  };
  if (retired) return z.object(common);
  return z.object({
    ...common,
    grade: intField(lang, 'grade'),
    classNum: intField(lang, 'classNum'),
    number: intField(lang, 'number'),
    major: oneOf(Object.values(Major)),
    role: oneOf(ENROLLED_ROLES),
    dormitoryRoom: intField(lang, 'dormitoryRoom'),
    majorClubId: intField(lang, 'majorClubId'),
    autonomousClubId: intField(lang, 'autonomousClubId'),
  });
}

/** The list's search: an email (has @), a student number (four digits), else a name. */
export function studentFilter(q: string, status: Status, grade: number | null, classNum: number | null): Op.StudentFilter {
  const filter: Op.StudentFilter = {};
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

export const studentList: Handler<AdminDeps> = async (req, deps) => {
  const { t } = req;
  const s = t.admin.students;
  const q = req.query('q');
  const status: Status = STATUSES.find((v) => v === req.query('status')) ?? 'enrolled';
  const grade = queryInt(req, 'grade', 1, 3);
  const classNum = queryInt(req, 'classNum', 1, 4);
  const pageNumber = queryInt(req, 'page', 0, 100000) ?? 0;
  const data = await deps.school.run<Op.AdminStudentsQuery, Op.AdminStudentsQueryVariables>(req, ADMIN_STUDENTS, {
    filter: studentFilter(q, status, grade, classNum),
    page: pageNumber,
    size: PAGE_SIZE,
  });
  const numbers = (n: number) => Array.from({ length: n }, (_, i) => ({ value: String(i + 1), label: String(i + 1) }));
  return page(
    s.title,
    listPage(t, {
      path: LIST,
      before: html`<p>
        ${linkButton('/admin/students/new', s.add)} ${linkButton('/admin/students/requests', t.admin.requests.link, 'secondary')}
      </p>`,
      filters: [
        field({ name: 'q', label: s.search, value: q, type: 'search' }),
        select({ name: 'status', label: s.status, value: status, options: STATUSES.map((v) => ({ value: v, label: s.statuses[v] })) }),
        filterSelect(req, 'grade', grade, numbers(3), s.grade),
        filterSelect(req, 'classNum', classNum, numbers(4), s.classNum),
      ],
      status: s.count(data.students.totalElements),
      table: studentTable(req, data.students.students),
      page: pageNumber,
      totalPages: data.students.totalPages,
      params: { q, status: status === 'enrolled' ? '' : status, grade, classNum },
    }),
  );
};

/** A student's page offers the clubs. */
const pages: record.Pages<Student, readonly Club[], 'graduated' | 'withdrawn' | 'reactivated' | 'deleted'> = {
  list: LIST,
  done: (t) => t.admin.students.done,
  defaults: { role: 'GENERAL_STUDENT' },
  aliases: ERROR_INPUT,
  choices: record.clubChoices,
  load: record.load(ADMIN_STUDENT, (data: Op.AdminStudentQuery) => ({ record: data.students.students[0], choices: data.clubs.clubs })),
  values: valuesOf,
  show: studentPage,
};

/** A student's form: its page, a new one's, and the create and update they post. */
export const studentForms = record.forms(pages, {
  form: (req, student) => studentForm(req.lang, isRetired(student?.role ?? null)),
  create: async (req, deps, input: Op.CreateStudentInput) => {
    const { createStudent: created } = await record.mutate<Op.CreateStudentMutation, Op.CreateStudentMutationVariables>(
      req,
      deps,
      CREATE_STUDENT,
      {
        input,
      },
    );
    return { errors: created.errors, id: created.student?.id ?? null };
  },
  update: async (req, deps, student, input) =>
    (
      await record.mutate<Op.UpdateStudentMutation, Op.UpdateStudentMutationVariables>(req, deps, UPDATE_STUDENT, {
        id: student.id,
        input,
      })
    ).updateStudent,
});
export const graduateStudent = record.action(
  pages,
  'graduated',
  record.byId<Op.GraduateStudentMutation>(GRADUATE_STUDENT, 'graduateStudent'),
);

export const withdrawStudent = record.action(
  pages,
  'withdrawn',
  record.byId<Op.WithdrawStudentMutation>(WITHDRAW_STUDENT, 'withdrawStudent'),
);

export const reactivateStudent = record.action(pages, 'reactivated', async (req, deps, id) => {
  const schema = z.object({
    grade: intField(req.lang, 'grade'),
    classNum: intField(req.lang, 'classNum'),
    number: intField(req.lang, 'number'),
  });
  const form = parseForm(schema, req.form);
  if (!form.ok) return { errors: form.errors };
  return (
    await record.mutate<Op.ReactivateStudentMutation, Op.ReactivateStudentMutationVariables>(req, deps, REACTIVATE_STUDENT, {
      id,
      input: form.value,
    })
  ).reactivateStudent;
});

export const deleteStudent = record.action(pages, 'deleted', record.byId<Op.DeleteStudentMutation>(DELETE_STUDENT, 'deleteStudent'), {
  deletes: true,
});

function isRetired(role: string | null): boolean {
  return role === 'GRADUATE' || role === 'WITHDRAWN';
}

function valuesOf(s: Student): record.Values {
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

function studentTable(req: PageRequest, students: Op.AdminStudentsQuery['students']['students']): Html {
  const { t, lang } = req;
  return table(t, {
    columns: t.admin.students.columns,
    rows: students,
    cells: (s) => [
      s.studentNumber ?? '—',
      { content: html`<a href="/admin/students/${s.id}">${s.name}</a>`, rowHeader: true },
      { content: s.email, className: 'mono' },
      labelOf(MAJOR_LABELS, s.major, lang) || '—',
      labelOf(ROLE_LABELS, s.role, lang),
      s.dormitoryRoom ?? '—',
      s.majorClub?.name ?? '—',
      s.autonomousClub?.name ?? '—',
    ],
  });
}

function clubOptions(req: PageRequest, clubs: readonly Club[], type: Club['type'], current: string | undefined) {
  return [
    { value: '', label: req.t.admin.students.none },
    ...clubs
      .filter((c) => c.type === type && (c.status === 'ACTIVE' || String(c.id) === current))
      .map((c) => ({
        value: String(c.id),
        label: c.status === 'ACTIVE' ? c.name : `${c.name} (${labelOf(CLUB_STATUS_LABELS, c.status, req.lang)})`,
      })),
  ];
}

/** A student's page (or the new student's): the form, and the status actions of a saved student. */
function studentPage(
  req: PageRequest,
  { record: student, choices: clubs }: record.Shown<Student, readonly Club[]>,
  form: record.FormState,
  status?: number,
): Outcome {
  const { lang } = req;
  const s = req.t.admin.students;
  const { values: v, errors } = form;
  const retired = isRetired(student?.role ?? null);
  const label = (name: string) => formLabel(name, lang);
  const options = <T extends string>(values: readonly T[], labels: Readonly<Record<T, { ko: string; en: string }>>, empty?: string) => [
    ...(empty !== undefined ? [{ value: '', label: empty }] : []),
    ...enumOptions(values, labels, lang),
  ];
  const enrolment = retired
    ? html`<p class="hint">${s.retired(labelOf(ROLE_LABELS, student?.role ?? '', lang))}</p>`
    : html`<fieldset class="inline-fields">
          <legend>${label('studentNumber')}</legend>
          ${select({ name: 'grade', label: label('grade'), value: v['grade'], errors, required: true, options: [{ value: '', label: s.choose }, ...['1', '2', '3'].map((g) => ({ value: g, label: g }))] })}
          ${select({ name: 'classNum', label: label('classNum'), value: v['classNum'], errors, required: true, options: [{ value: '', label: s.choose }, ...['1', '2', '3', '4'].map((c) => ({ value: c, label: c }))] })}
          ${field({ name: 'number', label: label('number'), value: v['number'], errors, required: true, type: 'number', inputmode: 'numeric', min: 1, max: 18, hint: '1~18' })}
        </fieldset>
        ${select({ name: 'major', label: label('major'), value: v['major'], errors, options: options(Object.values(Major), MAJOR_LABELS, s.majorAuto) })}
        ${select({ name: 'role', label: label('role'), value: v['role'], errors, options: options(ENROLLED_ROLES, ROLE_LABELS) })}
        ${field({ name: 'dormitoryRoom', label: label('dormitoryRoom'), value: v['dormitoryRoom'], errors, type: 'number', inputmode: 'numeric', min: 201, max: 518, hint: s.roomHint })}
        ${select({ name: 'majorClubId', label: label('majorClubId'), value: v['majorClubId'], errors, options: clubOptions(req, clubs, 'MAJOR_CLUB', v['majorClubId']) })}
        ${select({ name: 'autonomousClubId', label: label('autonomousClubId'), value: v['autonomousClubId'], errors, options: clubOptions(req, clubs, 'AUTONOMOUS_CLUB', v['autonomousClubId']) })}`;
  return record.layout(
    req,
    {
      list: LIST,
      entity: 'STUDENT',
      texts: s,
      record: student,
      errors,
      inputs: INPUTS,
      fields: html`${field({ name: 'name', label: label('name'), value: v['name'], errors, required: true })}
      ${field({ name: 'email', label: label('email'), value: v['email'], errors, required: true, type: 'email' })}
      ${select({ name: 'sex', label: label('sex'), value: v['sex'], errors, required: true, options: options(Object.values(Sex), SEX_LABELS, s.choose) })}
      ${enrolment} ${field({ name: 'specialty', label: label('specialty'), value: v['specialty'], errors })}
      ${field({ name: 'githubId', label: label('githubId'), value: v['githubId'], errors, hint: s.githubHint })}`,
      actions: !student
        ? html``
        : retired
          ? html`<form method="post" action="/admin/students/${student.id}/reactivate" novalidate>
              ${csrfField(req.csrf)}
              <p class="hint">${s.reactivateHint}</p>
              <div class="filters">
                <div>
                  ${field({ name: 'grade', label: label('grade'), value: '', errors, type: 'number', inputmode: 'numeric', min: 1, max: 3 })}
                </div>
                <div>
                  ${field({ name: 'classNum', label: label('classNum'), value: '', errors, type: 'number', inputmode: 'numeric', min: 1, max: 4 })}
                </div>
                <div>
                  ${field({ name: 'number', label: label('number'), value: '', errors, type: 'number', inputmode: 'numeric', min: 1, max: 18 })}
                </div>
              </div>
              <div class="actions"><button type="submit" class="secondary">${s.reactivate}</button></div>
            </form>`
          : html`<p class="hint">${s.retireHint}</p>
              <div class="actions">
                <form method="post" action="/admin/students/${student.id}/graduate">
                  ${csrfField(req.csrf)}<button type="submit" class="secondary">${s.graduate}</button>
                </form>
                <form method="post" action="/admin/students/${student.id}/withdraw">
                  ${csrfField(req.csrf)}<button type="submit" class="secondary">${s.withdraw}</button>
                </form>
              </div>`,
    },
    status,
  );
}
