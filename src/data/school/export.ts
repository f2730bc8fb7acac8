import type { Database } from '../database.js';
import { isEnrolledRole, type StudentDoc } from '../models/student.model.js';
import { formatOf } from './columns.js';
import { CONTENT_TYPES, writeSpreadsheet, type FileFormat } from './spreadsheet.js';
import { readSettled } from './engine.js';
import { SchoolState } from './state.js';
import type { SchoolDoc, SchoolEntity } from './types.js';
import { formatInstant } from './audit.js';

export interface ExportOptions {
  /** Students: also graduated and withdrawn students (left out by default, as in the data API). */
  readonly includeGraduates?: boolean;
  readonly timeZone: string;
  readonly now: Date;
}

export interface ExportedFile {
  readonly fileName: string;
  readonly contentType: string;
  readonly content: Buffer;
  readonly rows: number;
}

const FILE_STEM: Record<SchoolEntity, string> = { STUDENT: 'students', CLUB: 'clubs', PROJECT: 'projects' };

/**
 * A spreadsheet of one kind of record in the format its import reads (src/data/school/columns.ts),
 * so export, edit, import round-trips: students in student-number order (graduates after), clubs
 * and projects by id.
 */
export async function exportSchoolData(
  db: Database,
  entity: SchoolEntity,
  format: FileFormat,
  options: ExportOptions,
): Promise<ExportedFile> {
  const state = await readSettled(db, () => SchoolState.load(db));
  const spec = formatOf(entity);
  const columns = spec.columns.filter((c) => c.exported);
  const records = [...state.all(entity)].filter(
    (doc) => entity !== 'STUDENT' || options.includeGraduates || isEnrolledRole((doc as StudentDoc).role),
  );
  records.sort(
    entity === 'STUDENT' ? (a, b) => studentOrder(a as StudentDoc, b as StudentDoc) : (a: SchoolDoc, b: SchoolDoc) => a._id - b._id,
  );
  const rows = records.map((doc) => columns.map((column) => column.write(doc, state)));
  const content = await writeSpreadsheet(format, [{ name: spec.sheetName, header: columns.map((c) => c.header), rows }]);
  const stamp = formatInstant(options.now, options.timeZone).slice(0, 10).replace(/-/g, '');
  return { fileName: `${FILE_STEM[entity]}-${stamp}.${format}`, contentType: CONTENT_TYPES[format], content, rows: rows.length };
}

function studentOrder(a: StudentDoc, b: StudentDoc): number {
  return (a.studentNumber ?? Number.MAX_SAFE_INTEGER) - (b.studentNumber ?? Number.MAX_SAFE_INTEGER) || a._id - b._id;
}
