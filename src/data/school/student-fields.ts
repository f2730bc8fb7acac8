import { STUDENT_SELF_FIELDS, type StudentSelfField } from '../../config/index.js';
import type { Database } from '../database.js';
import type { StudentDoc } from '../models/student.model.js';
import { type Lang } from './labels.js';
import { issueMessage } from './messages.js';
import type { StudentPatch } from './operations.js';
import type { Issue } from './types.js';
import { SchoolWriter, type WriterClock } from './writes.js';

export { STUDENT_SELF_FIELDS, type StudentSelfField };

/** A problem of one field of a student's own form, in words (the field named, as the admin forms do). */
export interface FieldProblem {
  readonly field: StudentSelfField;
  readonly message: string;
}

/** What a student's own change came to: written (a batch id, or null when nothing changed), or refused with its problems. */
export type OwnChange = { readonly ok: true; readonly batchId: string | null } | { readonly ok: false; readonly problems: FieldProblem[] };

/** Whether `name` is one of the student fields (STUDENT_SELF_FIELDS). */
export function isStudentField(name: string): name is StudentSelfField {
  return (STUDENT_SELF_FIELDS as readonly string[]).includes(name);
}

/** The fields' current values as a form shows them ('' for none). */
export function studentFieldValues(s: StudentDoc, fields: readonly StudentSelfField[]): Record<StudentSelfField, string> {
  const text = (v: string | number | null | undefined) => (v == null ? '' : String(v));
  const all: Record<StudentSelfField, string> = {
    studentNumber: text(s.studentNumber),
    dormitoryRoom: text(s.dormitoryRoom),
    majorClubId: text(s.majorClubId),
    autonomousClubId: text(s.autonomousClubId),
    githubId: text(s.githubId),
    specialty: text(s.specialty),
  };
  return Object.fromEntries(fields.map((f) => [f, all[f]])) as Record<StudentSelfField, string>;
}

/**
 * The patch of a student's own form: each field's text as the admin form reads it (an empty
 * field clears it; whole numbers where numbers go; a student number as its four digits). Only
 * what a form could not hand over is refused here; every rule of the record is the data layer's
 * (src/data/school/rules.ts), judged by the one write path.
 */
export function ownPatch(
  fields: readonly StudentSelfField[],
  values: Readonly<Record<string, string>>,
): { patch: StudentPatch; issues: Issue[] } {
  const patch: StudentPatch = {};
  const issues: Issue[] = [];
  const integer = (field: StudentSelfField, raw: string): number | null | undefined => {
    if (raw === '') return null;
    if (/^\d{1,9}$/.test(raw)) return Number(raw);
    issues.push({ field, code: 'NOT_INTEGER', params: { got: raw } });
    return undefined;
  };
  for (const field of fields) {
    const raw = (values[field] ?? '').trim();
    if (field === 'studentNumber') {
      // Grade, class and two-digit number, as the imports read it (src/data/school/columns.ts).
      const seat = /^([1-9])([1-9])(\d\d)$/.exec(raw);
      if (!seat) issues.push({ field, code: raw === '' ? 'REQUIRED' : 'STUDENT_NUMBER', params: { got: raw } });
      else Object.assign(patch, { grade: Number(seat[1]), classNum: Number(seat[2]), number: Number(seat[3]) });
    } else if (field === 'githubId' || field === 'specialty') {
      patch[field] = raw === '' ? null : raw;
    } else {
      const n = integer(field, raw);
      if (n !== undefined) patch[field] = n;
    }
  }
  return { patch, issues };
}

/** Fields of the data layer's issues, as the student's form names them. */
const FORM_FIELD: Readonly<Record<string, StudentSelfField>> = {
  grade: 'studentNumber',
  classNum: 'studentNumber',
  number: 'studentNumber',
};

/**
 * Writes a student's own change of `fields` through the one write path (src/data/school/writes.ts,
 * docs/school-writes.md): validated as a whole, audited with the student's account as the actor,
 * the data version moved, its event written. A problem of a field outside `fields` (another
 * record's rule) is reported at the first field.
 */
export async function writeOwnFields(
  db: Database,
  input: {
    readonly account: { readonly id: number; readonly email: string };
    readonly studentId: number;
    readonly fields: readonly StudentSelfField[];
    readonly values: Readonly<Record<string, string>>;
    readonly lang: Lang;
    readonly clock: WriterClock;
  },
): Promise<OwnChange> {
  const { patch, issues } = ownPatch(input.fields, input.values);
  const located = (list: readonly Issue[]): FieldProblem[] =>
    list.map((issue) => {
      const own = FORM_FIELD[issue.field] ?? issue.field;
      const field = isStudentField(own) && input.fields.includes(own) ? own : (input.fields[0] ?? 'githubId');
      return { field, message: issueMessage(issue, input.lang) };
    });
  if (issues.length > 0) return { ok: false, problems: located(issues) };
  const writer = new SchoolWriter(db, { kind: 'ACCOUNT', accountId: input.account.id, email: input.account.email }, input.clock);
  const outcome = await writer.updateStudent(input.studentId, patch);
  if (outcome.issues.length > 0) return { ok: false, problems: located(outcome.issues) };
  return { ok: true, batchId: outcome.batchId };
}
