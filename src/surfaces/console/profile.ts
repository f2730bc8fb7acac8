import { fieldLabel, labelOf, MAJOR_LABELS, ROLE_LABELS, SEX_LABELS, type Lang } from '../../data/school/labels.js';
import { studentFieldValues, writeOwnFields, type StudentSelfField } from '../../data/school/student-fields.js';
import { NotFoundError } from '../../errors/index.js';
import { PROFILE_SAVE_LIMIT } from '../../limits.js';
import { studentRecord } from '../../data/school/student-record.js';
import { csrfField, errorSummary, facts, type FieldError } from '../web/components.js';
import { html } from '../web/html.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import { studentFieldInputs } from '../web/student-fields.js';
import type { ConsoleDeps } from './deps.js';

const PATH = '/console/profile';

/** The signed-in account and its student (the one with the same email, as userinfo links them), from the school of now. */
async function ownStudent(req: PageRequest, deps: ConsoleDeps) {
  const account = await deps.accounts.findById(req.account?.accountId ?? 0);
  if (!account) throw new NotFoundError('No such account.');
  const school = await deps.db.school.snapshot();
  return { account, school, student: school.studentByEmail(account.email) };
}

/** Enum values of the record shown by their labels, as the admin console shows them. */
const VALUE_LABELS: Readonly<Record<string, Parameters<typeof labelOf>[0]>> = { sex: SEX_LABELS, major: MAJOR_LABELS, role: ROLE_LABELS };
/** The record's club summaries are labelled as the clubs' id fields are. */
const LABEL_OF: Readonly<Record<string, string>> = { majorClub: 'majorClubId', autonomousClub: 'autonomousClubId' };

/** A value of the record as the page shows it (a club by its name, an enum value by its label). */
function shown(key: string, value: unknown, none: string, lang: Lang): string {
  if (value == null || value === '') return none;
  if (typeof value === 'object' && 'name' in value) return String((value as { name: unknown }).name);
  const labels = VALUE_LABELS[key];
  return labels && typeof value === 'string' ? labelOf(labels, value, lang) : String(value as string | number | boolean);
}

/**
 * My profile: the student record as the data API serves it (userinfo's Student, src/oauth/userinfo.ts),
 * and a form of the fields the student edits (STUDENT_SELF_EDIT_FIELDS).
 */
async function profilePage(
  req: PageRequest,
  deps: ConsoleDeps,
  form?: { values: Record<string, string>; errors: FieldError[] },
  status = 200,
): Promise<Outcome> {
  const { t, lang } = req;
  const m = t.myProfile;
  const { school, student } = await ownStudent(req, deps);
  if (!student) return page(m.title, html`<p role="status">${m.notStudent}</p>`, status);
  const fields = deps.config.studentSelfEditFields;
  const record = studentRecord(student, school.clubs);
  const errors = form?.errors ?? [];
  return page(
    m.title,
    html`<p>${m.intro}</p>
      <section class="card" aria-labelledby="record">
        <h2 id="record">${m.record}</h2>
        ${facts(Object.entries(record).map(([key, value]) => [fieldLabel(LABEL_OF[key] ?? key, lang), shown(key, value, m.none, lang)] as const))}
      </section>
      ${
        fields.length > 0
          ? html`<section class="card" aria-labelledby="edit">
              <h2 id="edit">${m.edit}</h2>
              ${errorSummary(t, errors, fields)}
              <form method="post" action="${PATH}" novalidate>
                ${csrfField(req.csrf)}
                ${studentFieldInputs({ t, lang, fields, values: form?.values ?? studentFieldValues(student, fields), errors, clubs: school.clubs.all })}
                <div class="actions"><button type="submit" class="primary">${m.save}</button></div>
              </form>
            </section>`
          : ''
      }`,
    status,
  );
}

export const myProfile: Handler<ConsoleDeps> = async (req, deps) => profilePage(req, deps);

/**
 * POST /console/profile: the editable fields through the one write path, with the student's
 * account as the actor. A field the student may not edit is refused (422, named at the form),
 * and nothing is written. At most PROFILE_SAVE_LIMIT saves per account (429 with Retry-After).
 */
export const saveProfile: Handler<ConsoleDeps> = async (req, deps) => {
  const { t, lang } = req;
  const { account, student } = await ownStudent(req, deps);
  if (!student) return profilePage(req, deps, undefined, 403);
  const fields = deps.config.studentSelfEditFields;
  const posted = Object.fromEntries(
    Object.entries(req.form).flatMap(([name, value]) =>
      name === 'csrf' ? [] : [[name, typeof value === 'string' ? value : (value[0] ?? '')]],
    ),
  );
  const values = { ...studentFieldValues(student, fields), ...pick(posted, fields) };
  const wait = await deps.rates.profileSaves.spend(account._id);
  if (wait !== undefined) {
    req.ctx.set('Retry-After', String(wait));
    req.ctx.state.log.warn({ event: 'profile.limited', accountId: account._id }, 'profile save refused: too many saves');
    const { points, durationSeconds } = PROFILE_SAVE_LIMIT;
    // Not a field's problem: said above the form (the summary lists it unlinked).
    return profilePage(
      req,
      deps,
      { values, errors: [{ field: 'profile', message: t.myProfile.tooOften(points, durationSeconds, wait) }] },
      429,
    );
  }
  const refused = Object.keys(posted).filter((name) => !(fields as readonly string[]).includes(name));
  if (refused.length > 0) {
    const errors = refused.map((name) => ({ field: name, message: t.myProfile.notEditable(fieldLabel(name, lang)) }));
    req.ctx.state.log.info(
      { event: 'profile.refused', accountId: account._id, fields: refused },
      'a student tried to edit fields not theirs',
    );
    return profilePage(req, deps, { values, errors }, 422);
  }
  const outcome = await writeOwnFields(deps.db, {
    account: { id: account._id, email: account.email },
    studentId: student._id,
    fields,
    values,
    lang,
    clock: { timeZone: deps.config.schoolTimeZone, now: deps.now },
  });
  if (!outcome.ok) return profilePage(req, deps, { values, errors: outcome.problems }, 422);
  req.ctx.state.log.info({ event: 'profile.saved', accountId: account._id, batchId: outcome.batchId }, 'a student edited their record');
  return redirect(PATH, { kind: 'ok', text: outcome.batchId ? t.myProfile.saved : t.myProfile.unchanged });
};

function pick(values: Readonly<Record<string, string>>, fields: readonly StudentSelfField[]): Record<string, string> {
  return Object.fromEntries(fields.filter((f) => f in values).map((f) => [f, values[f] ?? '']));
}
