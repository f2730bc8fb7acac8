import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { Major, Sex, StudentRole } from '../__generated__/enums.js';
import { defineModel } from './define.js';

export type { StudentRole } from '../__generated__/enums.js';

/** Graduates and withdrawn students are no longer enrolled: no grade, class, number or major. */
export function isEnrolledRole(role: StudentRole): boolean {
  return role !== 'GRADUATE' && role !== 'WITHDRAWN';
}

const nullableInt = { type: Number, default: null, validate: { validator: (v: unknown) => v === null || Number.isInteger(v) } };

const studentSchema = new Schema(
  {
    _id: { type: Number, required: true },
    name: { type: String, required: true },
    sex: { type: String, enum: Object.values(Sex), required: true },
    email: { type: String, required: true, lowercase: true, trim: true },
    grade: nullableInt,
    classNum: nullableInt,
    number: nullableInt,
    studentNumber: nullableInt,
    major: { type: String, enum: [...Object.values(Major), null], default: null },
    role: { type: String, enum: Object.values(StudentRole), required: true },
    dormitoryFloor: nullableInt,
    dormitoryRoom: nullableInt,
    majorClubId: nullableInt,
    autonomousClubId: nullableInt,
    specialty: { type: String, default: null },
    githubId: { type: String, default: null },
    githubUrl: { type: String, default: null },
    // Derived ranks so that "nulls last" sorts stay plain index sorts (FerretDB has no $cond sorts).
    enrolledRank: { type: Number, required: true },
    dormitoryRank: { type: Number, required: true },
  },
  { versionKey: false, collection: 'students' },
);

studentSchema.index({ email: 1 }, { unique: true });
studentSchema.index({ enrolledRank: 1, grade: 1, classNum: 1, number: 1, _id: 1 });
studentSchema.index({ name: 1, _id: 1 });
studentSchema.index({ role: 1 });
studentSchema.index({ dormitoryRoom: 1 });
studentSchema.index({ majorClubId: 1 });
studentSchema.index({ autonomousClubId: 1 });

export type StudentDoc = InferSchemaType<typeof studentSchema>;
export type StudentModel = Model<StudentDoc>;

/** Input accepted by `toStudentRecord`: the derived fields are computed, never given. */
export type StudentInput = Omit<StudentDoc, 'enrolledRank' | 'dormitoryRank' | 'studentNumber' | 'specialty' | 'githubId' | 'githubUrl'> &
  Partial<Pick<StudentDoc, 'specialty' | 'githubId' | 'githubUrl'>>;

/**
 * Applies the enrolment rule and derives the computed fields. Every write of a student goes
 * through here, so the graduate/withdrawn rule cannot be bypassed by a caller.
 */
export function toStudentRecord(input: StudentInput): StudentDoc {
  const enrolled = isEnrolledRole(input.role);
  const grade = enrolled ? input.grade : null;
  const classNum = enrolled ? input.classNum : null;
  const number = enrolled ? input.number : null;
  const studentNumber = grade != null && classNum != null && number != null ? grade * 1000 + classNum * 100 + number : null;
  const record: StudentDoc = {
    ...input,
    email: input.email.toLowerCase(),
    grade,
    classNum,
    number,
    studentNumber,
    major: enrolled ? input.major : null,
    specialty: input.specialty ?? null,
    githubId: input.githubId ?? null,
    githubUrl: input.githubUrl ?? null,
    // Nulls sort last through these ranks; the rule above makes "null" mean "not enrolled".
    enrolledRank: enrolled ? 0 : 1,
    dormitoryRank: input.dormitoryRoom == null ? 1 : 0,
  };
  const problem = enrolmentProblem(record);
  if (problem) throw new Error(`student ${input._id}: ${problem}`);
  return record;
}

/** Fields that are null exactly when a student is no longer enrolled (docs/spec.md). */
const ENROLMENT_FIELDS = ['grade', 'classNum', 'number', 'studentNumber', 'major'] as const;

/** The problem with a record's enrolment fields, if any (used by every write path). */
export function enrolmentProblem(s: Pick<StudentDoc, (typeof ENROLMENT_FIELDS)[number] | 'role'>): string | undefined {
  const enrolled = isEnrolledRole(s.role as StudentRole);
  for (const field of ENROLMENT_FIELDS) {
    if (enrolled && s[field] == null) return `${field} is required for an enrolled (${s.role}) student`;
    if (!enrolled && s[field] != null) return `${field} must be null for a ${s.role} student`;
  }
  return undefined;
}

studentSchema.pre('validate', function enforceEnrolmentRule(next) {
  const problem = enrolmentProblem(this);
  next(problem ? new Error(problem) : undefined);
});

export function studentModel(connection: Connection): StudentModel {
  return defineModel<StudentDoc>(connection, 'Student', studentSchema);
}
