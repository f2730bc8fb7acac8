import type { Database } from '../database.js';
import type { Lease } from '../platform/lease.js';
import { isEnrolledRole } from '../models/student.model.js';
import { formatOf, headerKey, type CellProblem, type Column, type RowDraft } from './columns.js';
import { commitBatch, fieldChanges, readSettled, withSchoolLock } from './engine.js';
import { deleteClub, deleteProject, deleteStudent, putClub, putProject, putStudent, schoolYear, type StepResult } from './operations.js';
import { studentLabel, validateState } from './rules.js';
import { columnName, FILE_LIMITS, type ReadSheet } from './spreadsheet.js';
import { readSpreadsheetApart } from './spreadsheet-thread.js';
import { SchoolState } from './state.js';
import type {
  Actor,
  ChangeCounts,
  Issue,
  LocatedIssue,
  PlannedChange,
  PreviewResult,
  RecordDiff,
  SchoolDoc,
  SchoolEntity,
  ValueChange,
} from './types.js';

/*
 * Imports of students, clubs and projects. Every import is first a dry run that reports, per row
 * and cell, what is wrong and what would change; applying plans the same file again against the
 * data as it is then and writes it all or not at all (src/data/school/engine.ts). Rows are
 * matched with records by ID, else by email (students) or name (clubs, projects); a row that
 * matches nothing adds a record. Only the columns present change anything: a file without the
 * 호실 column leaves every room as it is. With removeMissing, records no row matched are
 * removed (students: enrolled ones only, since exports leave graduates out by default).
 */

export interface ImportOptions {
  readonly removeMissing?: boolean;
  readonly timeZone: string;
  readonly now: Date;
}

/** Where a row of the file is. */
export interface RowRef {
  readonly sheet: string | null;
  readonly row: number;
}

/** A parsed file: its rows with their columns, or the file's own problems. */
export interface ParsedFile<P> {
  readonly issues: LocatedIssue[];
  readonly rows: ParsedRow<P>[];
  readonly dataRows: number;
}

export interface ParsedRow<P> extends RowRef {
  readonly draft: RowDraft<P>;
  /** Header as written, per column key (the first field of the column). */
  readonly headers: ReadonlyMap<string, string>;
  /** Cell text per column key. */
  readonly texts: ReadonlyMap<string, string | null>;
  readonly columns: readonly Column<P, unknown>[];
  readonly issues: LocatedIssue[];
}

/** The plan of an import: its preview and the state it would leave. */
export interface ImportPlan {
  readonly preview: PreviewResult;
  readonly state: SchoolState;
}

const file = (code: Issue['code'], params: Issue['params'] = {}): LocatedIssue => ({
  sheet: null,
  row: null,
  column: null,
  value: null,
  field: null,
  code,
  ...(params ? { params } : {}),
});

/**
 * Reads a file into rows of the given columns. Each of `requirements` lists column sets (by
 * field) of which one must be present, e.g. [[['id'], ['email']]]: an ID or an email column.
 */
export async function parseFile<P extends object>(
  bytes: Buffer,
  columns: readonly Column<P, unknown>[],
  state: SchoolState,
  requirements: readonly (readonly (readonly string[])[])[],
): Promise<ParsedFile<P>> {
  const read = await readSpreadsheetApart(bytes, columns.length + FILE_LIMITS.extraColumns);
  if (!read.ok) return { issues: [file(read.code, read.params)], rows: [], dataRows: 0 };
  const dataRows = read.sheets.reduce((n, s) => n + Math.max(0, s.rows.length - 1), 0);
  if (dataRows > FILE_LIMITS.maxRows)
    return { issues: [file('TOO_MANY_ROWS', { rows: dataRows, max: FILE_LIMITS.maxRows })], rows: [], dataRows };
  if (read.sheets.every((s) => s.rows.length === 0)) return { issues: [file('EMPTY_FILE')], rows: [], dataRows: 0 };
  const issues: LocatedIssue[] = [];
  const rows: ParsedRow<P>[] = [];
  for (const sheet of read.sheets) {
    if (sheet.rows.length === 0) continue;
    const parsed = parseSheet(sheet, columns, state, requirements);
    issues.push(...parsed.issues);
    rows.push(...parsed.rows);
  }
  return { issues, rows, dataRows };
}

function parseSheet<P extends object>(
  sheet: ReadSheet,
  columns: readonly Column<P, unknown>[],
  state: SchoolState,
  requirements: readonly (readonly (readonly string[])[])[],
): { issues: LocatedIssue[]; rows: ParsedRow<P>[] } {
  const [headerRow, ...dataRows] = sheet.rows;
  if (!headerRow) return { issues: [], rows: [] };
  const issues: LocatedIssue[] = [];
  const at = (index: number, value: string | null, code: Issue['code'], params: Issue['params'] = {}): LocatedIssue => ({
    sheet: sheet.name,
    row: headerRow.number,
    column: value ?? columnName(index + 1),
    value,
    field: null,
    code,
    params,
  });
  const byKey = new Map<string, Column<P, unknown>>();
  // Headers and aliases first, then field names; an earlier column keeps a name it shares.
  for (const name of columns.flatMap((c) => [c.header, ...c.aliases].map((n) => [n, c] as const)))
    if (!byKey.has(headerKey(name[0]))) byKey.set(headerKey(name[0]), name[1]);
  for (const column of columns) for (const field of column.fields) if (!byKey.has(headerKey(field))) byKey.set(headerKey(field), column);
  const mapped: ({ column: Column<P, unknown>; header: string } | null)[] = [];
  const seen = new Map<Column<P, unknown>, string>();
  headerRow.cells.forEach((cell, index) => {
    const header = cell.text?.trim() ?? '';
    if (header === '') {
      const used = dataRows.some((r) => r.cells[index]?.text != null);
      if (used) issues.push(at(index, null, 'HEADER_EMPTY'));
      mapped.push(null);
      return;
    }
    const column = byKey.get(headerKey(header));
    if (!column) {
      issues.push(at(index, header, 'HEADER_UNKNOWN', { got: header, allowed: columns.map((c) => c.header).join(', ') }));
      mapped.push(null);
      return;
    }
    if (seen.has(column)) {
      issues.push(at(index, header, 'HEADER_DUPLICATE', { got: header }));
      mapped.push(null);
      return;
    }
    seen.set(column, header);
    mapped.push({ column, header });
  });
  const present = new Set([...seen.keys()].flatMap((c) => c.fields));
  for (const requireOne of requirements) {
    if (requireOne.some((set) => set.every((f) => present.has(f)))) continue;
    const needed = requireOne.map((set) => set.map((f) => columns.find((c) => c.fields.includes(f))?.header ?? f).join('+')).join(' / ');
    issues.push({
      sheet: sheet.name,
      row: headerRow.number,
      column: null,
      value: null,
      field: null,
      code: 'HEADER_MISSING',
      params: { needed },
    });
  }
  if (issues.length > 0) return { issues, rows: [] };

  const gradeOfSheet = /^\s*([1-3])\s*학년\s*$/.exec(sheet.name ?? '');
  const ctx = { state, sheetGrade: gradeOfSheet ? Number(gradeOfSheet[1]) : null };
  const headers = new Map([...seen].map(([column, header]) => [column.fields[0] ?? '', header]));
  const rows = dataRows.map((dataRow) => {
    const draft: RowDraft<P> = { id: null, patch: {} as P };
    const texts = new Map<string, string | null>();
    const rowIssues: LocatedIssue[] = [];
    mapped.forEach((entry, index) => {
      if (!entry) return;
      const cell = dataRow.cells[index] ?? { text: null };
      const text = cell.text === null || cell.text.trim() === '' ? null : cell.text;
      const key = entry.column.fields[0] ?? '';
      texts.set(key, cell.text);
      const problem: CellProblem | undefined = cell.problem ?? entry.column.read(text, draft, ctx);
      if (problem) {
        rowIssues.push({
          sheet: sheet.name,
          row: dataRow.number,
          column: entry.header,
          value: cell.text,
          field: key,
          code: problem.code,
          params: problem.params,
        });
      }
    });
    return { sheet: sheet.name, row: dataRow.number, draft, headers, texts, columns: [...seen.keys()], issues: rowIssues };
  });
  return { issues, rows };
}

/** The issue of a record field, placed at the row and column it came from. */
export function placeIssue(issue: Issue, row: ParsedRow<object> | undefined, label: string | null): LocatedIssue {
  // A consequence (no row of the file): the record's name stands where the cell would.
  if (!row)
    return {
      sheet: null,
      row: null,
      column: null,
      value: label,
      field: issue.field,
      code: issue.code,
      ...(issue.params ? { params: issue.params } : {}),
    };
  const column = row.columns.find((c) => c.fields.includes(issue.field));
  const key = column?.fields[0];
  return {
    sheet: row.sheet,
    row: row.row,
    column: key ? (row.headers.get(key) ?? null) : null,
    value: key ? (row.texts.get(key) ?? null) : null,
    field: issue.field,
    code: issue.code,
    ...(issue.params ? { params: issue.params } : {}),
  };
}

/** Plans an import on `state` (which it changes); nothing is written. */
export async function planImport(
  state: SchoolState,
  entity: SchoolEntity,
  fileName: string,
  bytes: Buffer,
  options: ImportOptions,
): Promise<ImportPlan> {
  const format = formatOf(entity);
  const columns = format.columns as readonly Column<object, unknown>[];
  const parsed = await parseFile(bytes, columns, state, [[['id'], [format.matchField]]]);
  const issues = [...parsed.issues];
  const year = schoolYear(options.timeZone, options.now);

  // Matching is against the records as they were before the file: a row that renames a club
  // does not make a later row with the new name match it.
  const byKey = new Map<string, number>();
  for (const doc of state.all(entity)) byKey.set(matchKey(entity, doc), doc._id);
  const claimedBy = new Map<string, ParsedRow<object>>();
  const rowOf = new Map<string, ParsedRow<object>>();
  const outcome = new Map<ParsedRow<object>, { id: number; existed: boolean }>();

  for (const row of parsed.rows) {
    if (row.issues.length > 0) {
      issues.push(...row.issues);
      continue;
    }
    const keyText = row.texts.get(format.matchField);
    const key = keyText ? normalizeKey(entity, keyText) : null;
    let target: number | null = null;
    if (row.draft.id !== null) {
      if (!state.get(entity, row.draft.id)) {
        issues.push({ ...placeIssue({ field: 'id', code: 'UNKNOWN_ID', params: { id: row.draft.id } }, row, null) });
        continue;
      }
      target = row.draft.id;
    } else if (key !== null) target = byKey.get(key) ?? null;
    const claim = target !== null ? `#${target}` : key !== null ? `key:${key}` : null;
    const first = claim ? claimedBy.get(claim) : undefined;
    if (claim && first) {
      const value = row.draft.id !== null ? String(row.draft.id) : (keyText ?? '');
      const field = row.draft.id !== null ? 'id' : format.matchField;
      issues.push(placeIssue({ field, code: 'DUPLICATE_IN_FILE', params: { value, first: rowName(first) } }, row, null));
      continue;
    }
    if (claim) claimedBy.set(claim, row);
    const step = applyRow(state, entity, target, row.draft.patch, year);
    if (step.issues.length > 0 || step.id === null) {
      issues.push(...step.issues.map((issue) => placeIssue(issue, row, null)));
      continue;
    }
    rowOf.set(`${entity}:${step.id}`, row);
    outcome.set(row, { id: step.id, existed: target !== null });
  }

  const removed: number[] = [];
  if (options.removeMissing && issues.length === 0) {
    const matched = new Set([...outcome.values()].map((o) => o.id));
    for (const doc of [...state.all(entity)]) {
      if (matched.has(doc._id) || !state.before(entity, doc._id)) continue;
      if (entity === 'STUDENT' && !isEnrolledRole((doc as SchoolDoc & { role: 'GRADUATE' }).role)) continue;
      removed.push(doc._id);
      removeRecord(state, entity, doc._id);
    }
  }

  for (const problem of validateState(state)) {
    const row = rowOf.get(`${problem.entity}:${problem.id}`);
    const doc = state.get(problem.entity, problem.id);
    issues.push(placeIssue(problem.issue, row, row ? null : (doc?.name ?? `#${problem.id}`)));
  }

  const preview = describePlan(
    state,
    entity,
    fileName,
    parsed.dataRows,
    issues,
    parsed.rows,
    outcome,
    rowOf,
    options.removeMissing ?? false,
  );
  return { preview, state };
}

function applyRow(state: SchoolState, entity: SchoolEntity, id: number | null, patch: object, year: number): StepResult {
  if (entity === 'STUDENT') return putStudent(state, id, patch);
  if (entity === 'CLUB') return putClub(state, id, patch, year);
  return putProject(state, id, patch);
}

function removeRecord(state: SchoolState, entity: SchoolEntity, id: number): void {
  if (entity === 'STUDENT') deleteStudent(state, id);
  else if (entity === 'CLUB') deleteClub(state, id);
  else deleteProject(state, id);
}

function matchKey(entity: SchoolEntity, doc: SchoolDoc): string {
  return normalizeKey(entity, entity === 'STUDENT' ? (doc as SchoolDoc & { email: string }).email : doc.name);
}

function normalizeKey(entity: SchoolEntity, text: string): string {
  return entity === 'STUDENT' ? text.trim().toLowerCase() : text.normalize('NFC').trim().toLowerCase();
}

function rowName(row: RowRef): string {
  return row.sheet ? `${row.sheet}!${row.row}` : String(row.row);
}

/** The preview: counts, every issue (in file order), and every change (rows first, then consequences). */
export function describePlan(
  state: SchoolState,
  entity: SchoolEntity,
  fileName: string,
  dataRows: number,
  issues: LocatedIssue[],
  rows: readonly ParsedRow<object>[],
  outcome: ReadonlyMap<ParsedRow<object>, { id: number; existed: boolean }>,
  rowOf: ReadonlyMap<string, RowRef>,
  removeMissing: boolean,
): PreviewResult {
  const diffs = state.diffs();
  const diffOf = new Map(diffs.map((d) => [`${d.entity}:${d.id}`, d]));
  const changes: PlannedChange[] = [];
  const counts: ChangeCounts = { created: 0, updated: 0, unchanged: 0, removed: 0, refused: 0 };
  const refusedRows = new Set(issues.filter((i) => i.row !== null).map((i) => `${i.sheet ?? ''}!${i.row}`));
  counts.refused = rows.filter((r) => refusedRows.has(`${r.sheet ?? ''}!${r.row}`)).length;
  for (const row of rows) {
    const done = outcome.get(row);
    if (!done || refusedRows.has(`${row.sheet ?? ''}!${row.row}`)) continue;
    const diff = diffOf.get(`${entity}:${done.id}`);
    if (!diff) {
      counts.unchanged += 1;
      const doc = state.get(entity, done.id);
      changes.push({
        sheet: row.sheet,
        row: row.row,
        entity,
        operation: 'UNCHANGED',
        recordId: done.id,
        label: doc ? labelOf(entity, doc) : '',
        fields: [],
      });
    }
  }
  for (const diff of diffs) {
    const row = rowOf.get(`${diff.entity}:${diff.id}`) ?? null;
    // A refused row changes nothing: its planned change is not shown as one.
    if (row && refusedRows.has(`${row.sheet ?? ''}!${row.row}`)) continue;
    const operation = diff.before === null ? 'CREATE' : diff.after === null ? 'DELETE' : 'UPDATE';
    if (operation === 'CREATE') counts.created += 1;
    else if (operation === 'DELETE') counts.removed += 1;
    else counts.updated += 1;
    changes.push({
      sheet: row?.sheet ?? null,
      row: row?.row ?? null,
      entity: diff.entity,
      operation,
      recordId: diff.id,
      label: labelOf(diff.entity, (diff.after ?? diff.before) as SchoolDoc),
      fields: readableChanges(state, diff),
    });
  }
  changes.sort((a, b) => (a.row === null ? 1 : 0) - (b.row === null ? 1 : 0) || compareRows(a, b) || a.recordId - b.recordId);
  issues.sort((a, b) => compareRows(a, b));
  return { uploadId: null, entity, fileName, removeMissing, applied: false, batchId: null, rows: dataRows, counts, issues, changes };
}

function compareRows(a: { sheet: string | null; row: number | null }, b: { sheet: string | null; row: number | null }): number {
  return (a.sheet ?? '').localeCompare(b.sheet ?? '') || (a.row ?? 0) - (b.row ?? 0);
}

function labelOf(entity: SchoolEntity, doc: SchoolDoc): string {
  return entity === 'STUDENT' ? studentLabel(doc as Parameters<typeof studentLabel>[0]) : doc.name;
}

/** A diff's fields with references shown as names (club names, student emails). */
export function readableChanges(state: SchoolState, diff: RecordDiff): ValueChange[] {
  const show = (field: string, value: unknown): unknown => {
    if (value == null) return null;
    if (field === 'majorClubId' || field === 'autonomousClubId' || field === 'clubId') {
      const club = state.get('CLUB', Number(value)) ?? state.before('CLUB', Number(value));
      return club ? club.name : value;
    }
    if (field === 'leaderId') {
      const s = state.get('STUDENT', Number(value)) ?? state.before('STUDENT', Number(value));
      return s ? s.email : value;
    }
    if (field === 'participantIds' && Array.isArray(value)) {
      return value.map((id: number) => state.get('STUDENT', id)?.email ?? state.before('STUDENT', id)?.email ?? `#${id}`);
    }
    return value;
  };
  return fieldChanges(diff.before, diff.after).map((c) => ({
    field: c.field,
    before: show(c.field, c.before),
    after: show(c.field, c.after),
  }));
}

/** A dry run against the data as it is now. */
export async function previewImport(
  db: Database,
  entity: SchoolEntity,
  fileName: string,
  bytes: Buffer,
  options: ImportOptions,
): Promise<PreviewResult> {
  return (await planImport(await readSettled(db, () => SchoolState.load(db)), entity, fileName, bytes, options)).preview;
}

/** Plans the file again under the write lock and, when it has no issue, writes it all (else nothing). */
export async function applyImport(
  db: Database,
  actor: Actor,
  entity: SchoolEntity,
  fileName: string,
  bytes: Buffer,
  options: ImportOptions & { onProgress?: ApplyProgress },
): Promise<PreviewResult> {
  return withSchoolLock(db, async (lease) => {
    const plan = await planImport(await SchoolState.load(db), entity, fileName, bytes, options);
    return commitPlan(db, lease, actor, plan, 'IMPORT', options.now, options.onProgress);
  });
}

/** Hears how many of a batch's records are written so far (the console's job page, the command's stderr). */
export type ApplyProgress = (written: number, total: number) => void;

/** Writes a plan without issues (call under the lock, with its lease, on a state loaded under it). */
export async function commitPlan(
  db: Database,
  lease: Lease,
  actor: Actor,
  plan: ImportPlan,
  action: 'IMPORT' | 'ROLLOVER',
  now: Date,
  onProgress?: ApplyProgress,
): Promise<PreviewResult> {
  const { preview, state } = plan;
  if (preview.issues.length > 0) return preview;
  const c = preview.counts;
  const summary = `${action === 'IMPORT' ? 'import' : 'rollover'} ${preview.fileName}: ${c.created} created, ${c.updated} updated, ${c.removed} removed, ${c.unchanged} unchanged`;
  const batchId = await commitBatch(
    db,
    lease,
    { actor, action, summary, source: preview.fileName, changes: state.diffs() },
    { now, highestIds: state.highestIds(), ...(onProgress ? { onProgress } : {}) },
  );
  return { ...preview, applied: true, batchId };
}
