import type { AuditAction, RecordOperation, SchoolEntity } from '../__generated__/enums.js';
import type { ClubDoc } from '../models/club.model.js';
import type { ProjectDoc } from '../models/project.model.js';
import type { StudentDoc } from '../models/student.model.js';

export type { AuditAction, RecordOperation, SchoolEntity } from '../__generated__/enums.js';

/** The document type of each kind of school record. */
export interface DocOf {
  STUDENT: StudentDoc;
  CLUB: ClubDoc;
  PROJECT: ProjectDoc;
}
export type SchoolDoc = DocOf[SchoolEntity];

/** Who made a change: a signed-in account (the consoles) or the `campus` command. */
export type Actor = { readonly kind: 'ACCOUNT'; readonly accountId: number; readonly email: string } | { readonly kind: 'CLI' };

/** The actor of the `campus` command. */
export const CLI_ACTOR: Actor = { kind: 'CLI' };

/** A problem with one field; `params` fill the message (src/data/school/messages.ts). */
export interface Issue {
  readonly field: string;
  readonly code: IssueCode;
  readonly params?: Readonly<Record<string, string | number>>;
}

/** An issue located in a file: sheet (null for CSV), row and column as a spreadsheet shows them. */
export interface LocatedIssue extends Omit<Issue, 'field'> {
  readonly field: string | null;
  readonly sheet: string | null;
  readonly row: number | null;
  readonly column: string | null;
  readonly value: string | null;
}

/** One field's value before and after (raw values; the API formats them). */
export interface ValueChange {
  readonly field: string;
  readonly before: unknown;
  readonly after: unknown;
}

/** One record's change: before null for a new record, after null for a removed one. */
export interface RecordDiff {
  readonly entity: SchoolEntity;
  readonly id: number;
  readonly before: SchoolDoc | null;
  readonly after: SchoolDoc | null;
}

/** A record's change as a preview shows it: where in the file it came from (row null for consequences). */
export interface PlannedChange {
  readonly sheet: string | null;
  readonly row: number | null;
  readonly entity: SchoolEntity;
  readonly operation: RecordOperation;
  readonly recordId: number;
  readonly label: string;
  readonly fields: readonly ValueChange[];
}

export interface ChangeCounts {
  created: number;
  updated: number;
  unchanged: number;
  removed: number;
  refused: number;
}

/** The outcome of a preview (a dry run) or of an application of an import or rollover. */
export interface PreviewResult {
  readonly uploadId: string | null;
  readonly entity: SchoolEntity;
  readonly fileName: string;
  readonly removeMissing: boolean;
  readonly applied: boolean;
  readonly batchId: string | null;
  readonly rows: number;
  readonly counts: ChangeCounts;
  readonly issues: readonly LocatedIssue[];
  readonly changes: readonly PlannedChange[];
}

/** What a batch is written as. */
export interface BatchRequest {
  readonly actor: Actor;
  readonly action: AuditAction;
  readonly summary: string;
  readonly source?: string | null;
  readonly changes: readonly RecordDiff[];
  /** The batch this one undoes (an undo batch). */
  readonly undoes?: string | null;
}

/** Every code an issue may carry (messages in src/data/school/messages.ts). */
export type IssueCode =
  | 'REQUIRED'
  | 'LENGTH'
  | 'RANGE'
  | 'ONE_OF'
  | 'EMAIL'
  | 'TAKEN'
  | 'SEAT_TAKEN'
  | 'GITHUB_ID'
  | 'NOT_INTEGER'
  | 'STUDENT_NUMBER'
  | 'UNKNOWN_STUDENT'
  | 'AMBIGUOUS_STUDENT'
  | 'UNKNOWN_CLUB'
  | 'CLUB_TYPE'
  | 'CLUB_ABOLISHED'
  | 'NOT_ENROLLED'
  | 'ENROLLED_ONLY'
  | 'LEADS_ANOTHER'
  | 'ABOLISHED_LEADER'
  | 'ABOLISHED_MEMBERS'
  | 'END_YEAR_REQUIRED'
  | 'END_BEFORE_START'
  | 'END_WHILE_ACTIVE'
  | 'RETIRED_ROLE'
  | 'NOT_FOUND'
  | 'ALREADY'
  | 'HEADER_UNKNOWN'
  | 'HEADER_DUPLICATE'
  | 'HEADER_MISSING'
  | 'HEADER_EMPTY'
  | 'DUPLICATE_IN_FILE'
  | 'UNKNOWN_ID'
  | 'FORMULA_NO_RESULT'
  | 'CELL_ERROR'
  | 'SHEET_GRADE'
  | 'TOO_LARGE'
  | 'TOO_MANY_ROWS'
  | 'NOT_SPREADSHEET'
  | 'OLD_EXCEL'
  | 'UNREADABLE'
  | 'UNPACKS_TOO_LARGE'
  | 'TOO_WIDE'
  | 'READ_LIMIT'
  | 'EMPTY_FILE'
  | 'JOB_CLUB'
  | 'ROLLOVER_NOT_MOVING'
  | 'ROLLOVER_GRADE'
  | 'CHANGED_SINCE'
  | 'SUPERSEDED'
  | 'RESET_FINAL'
  | 'UPLOAD_GONE'
  | 'CONCURRENT';
