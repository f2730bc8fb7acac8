import { addDays, zonedInstant } from '../../calendar.js';
import type { AuditAction, AuditStatus } from '../__generated__/enums.js';
import type { Database } from '../database.js';
import { containsInsensitive } from './queries/page.js';
import type { AuditBatchDoc, AuditEntryDoc } from '../models/audit.model.js';
import { ACTION_LABELS, ENTITY_LABELS, OPERATION_LABELS, STATUS_LABELS, fieldLabel } from './labels.js';
import { commitBatch, normalizeDoc, withSchoolLock } from './engine.js';
import { validateState } from './rules.js';
import { writeSpreadsheet, CONTENT_TYPES, type FileFormat } from './spreadsheet.js';
import { SchoolState, sameRecord } from './state.js';
import type { Actor, Issue, SchoolEntity } from './types.js';

/** What the audit log can be filtered by (every criterion optional). */
export interface AuditCriteria {
  readonly entity?: SchoolEntity | null;
  readonly recordId?: number | null;
  readonly action?: AuditAction | null;
  /** An email (substring, any case) or CLI. */
  readonly actor?: string | null;
  readonly batchId?: string | null;
  /** YYYY-MM-DD in the school's time zone, both ends included. */
  readonly from?: string | null;
  readonly to?: string | null;
}

/** The most entries one export holds. */
export const MAX_AUDIT_EXPORT = 20_000;

/**
 * The query of an audit filter. Without a batch, only changes that took effect are listed
 * (applied, or applied and later undone or superseded by a reset), and not those of `unsettled`
 * batches (being written: their entries say APPLIED before their batch does, src/data/school/engine.ts);
 * a batch shows all its entries whatever their status.
 */
export function auditQuery(c: AuditCriteria, timeZone: string, unsettled: readonly string[] = []): Record<string, unknown> {
  const q: Record<string, unknown> = {};
  if (c.entity) q['entity'] = c.entity;
  if (c.recordId != null) q['recordId'] = c.recordId;
  if (c.action) q['action'] = c.action;
  if (c.batchId) q['batchId'] = c.batchId;
  else {
    q['status'] = { $in: ['APPLIED', 'UNDONE', 'SUPERSEDED'] satisfies AuditStatus[] };
    if (unsettled.length > 0) q['batchId'] = { $nin: unsettled };
  }
  const actor = c.actor?.trim();
  if (actor) {
    if (actor.toUpperCase() === 'CLI') q['actorKind'] = 'CLI';
    else q['actorEmail'] = containsInsensitive(actor);
  }
  const at: Record<string, Date> = {};
  if (c.from) at['$gte'] = zonedInstant(c.from, '00:00', timeZone);
  if (c.to) at['$lt'] = zonedInstant(addDays(c.to, 1), '00:00', timeZone);
  if (Object.keys(at).length > 0) q['at'] = at;
  return q;
}

/** One page of the audit log, newest first (a batch's entries in their journal order). */
export async function listAudit(
  db: Database,
  criteria: AuditCriteria,
  page: number,
  size: number,
  timeZone: string,
): Promise<{ entries: AuditEntryDoc[]; total: number }> {
  const query = auditQuery(criteria, timeZone, await unsettledBatchIds(db));
  const [entries, total] = await Promise.all([
    db.models.auditEntries
      .find(query)
      .sort({ at: -1, batchId: 1, seq: 1 })
      .skip(page * size)
      .limit(size)
      .lean<AuditEntryDoc[]>(),
    db.models.auditEntries.countDocuments(query),
  ]);
  return { entries, total };
}

/** The batches being written now (or left half-written by a writer that died, until recovered). */
async function unsettledBatchIds(db: Database): Promise<string[]> {
  const docs = await db.models.auditBatches.find({ status: 'APPLYING' }, { _id: 1 }).lean<{ _id: string }[]>();
  return docs.map((d) => d._id);
}

/** The newest batches, of one action or all; with `interrupted`, only those whose writer stopped half-way. */
export async function recentBatches(
  db: Database,
  limit: number,
  action?: AuditAction | null,
  interrupted = false,
): Promise<AuditBatchDoc[]> {
  return db.models.auditBatches
    .find({ ...(action ? { action } : {}), ...(interrupted ? { interrupted: true } : {}) })
    .sort({ at: -1, _id: -1 })
    .limit(limit)
    .lean<AuditBatchDoc[]>();
}

export async function findBatch(db: Database, id: string): Promise<AuditBatchDoc | null> {
  return db.models.auditBatches.findById(id).lean<AuditBatchDoc>();
}

/** Whether undo may be tried: an applied change (undoing checks that nothing changed since), not a reset. */
export function isUndoable(batch: Pick<AuditBatchDoc, 'status' | 'action'>): boolean {
  return batch.status === 'APPLIED' && batch.action !== 'RESET';
}

/** How an actor is shown: the account's email, or CLI. */
export function actorName(doc: Pick<AuditBatchDoc, 'actorKind' | 'actorEmail'>): string {
  return doc.actorKind === 'CLI' ? 'CLI' : (doc.actorEmail ?? 'account');
}

/**
 * Undoes an applied batch from its before-images, as a new batch (action UNDO) through the same
 * write path. Refused, naming them, when records changed after the batch (their current state
 * is not the batch's after-image), or when the restored state breaks a rule.
 */
export async function undoBatch(
  db: Database,
  actor: Actor,
  batchId: string,
  now: Date,
): Promise<{ batchId: string | null; issues: Issue[] }> {
  return withSchoolLock(db, async (lease) => {
    const batch = await findBatch(db, batchId);
    if (!batch) return { batchId: null, issues: [{ field: 'batchId', code: 'NOT_FOUND', params: { entity: 'batch', id: batchId } }] };
    if (batch.status === 'SUPERSEDED') return { batchId: null, issues: [await supersededIssue(db, batch)] };
    if (batch.action === 'RESET') return { batchId: null, issues: [{ field: 'batchId', code: 'RESET_FINAL' }] };
    if (!isUndoable(batch)) {
      return {
        batchId: null,
        issues: [
          {
            field: 'batchId',
            code: 'ALREADY',
            params: { stateKo: STATUS_LABELS[batch.status].ko, stateEn: batch.status.toLowerCase().replace('_', ' ') },
          },
        ],
      };
    }
    const journal = await db.models.auditEntries.find({ batchId }).sort({ seq: 1 }).lean<AuditEntryDoc[]>();
    const state = await SchoolState.load(db);
    const issues: Issue[] = [];
    for (const entry of journal) {
      const current = state.get(entry.entity, entry.recordId) ?? null;
      if (!sameRecord(current, normalizeDoc(entry.entity, entry.after))) {
        issues.push({ field: 'record', code: 'CHANGED_SINCE', params: { label: `${entry.label} (#${entry.recordId})` } });
      }
    }
    if (issues.length > 0) return { batchId: null, issues };
    for (const entry of [...journal].reverse()) {
      const before = normalizeDoc(entry.entity, entry.before);
      if (before === null) state.remove(entry.entity, entry.recordId);
      else state.put(entry.entity, before);
    }
    const problems = validateState(state).map((p) => p.issue);
    if (problems.length > 0) return { batchId: null, issues: problems };
    const undoId = await commitBatch(
      db,
      lease,
      { actor, action: 'UNDO', summary: `undo of ${batch.summary}`, source: batch.source ?? null, changes: state.diffs(), undoes: batchId },
      { now, highestIds: state.highestIds() },
    );
    await db.models.auditEntries.updateMany({ batchId }, { $set: { status: 'UNDONE' } });
    await db.models.auditBatches.updateOne({ _id: batchId }, { $set: { status: 'UNDONE', undoneBy: undoId } });
    return { batchId: undoId, issues: [] };
  });
}

/** A time as the school reads it: YYYY-MM-DD HH:MM:SS in its zone. */
export function formatInstant(at: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(at);
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}:${get('second')}`;
}

/** A value of a change as text: lists joined, null empty. */
export function formatValue(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((v) => String(v)).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The audit entries a filter selects (newest first, at most MAX_AUDIT_EXPORT), as a spreadsheet in Korean. */
export async function exportAudit(
  db: Database,
  criteria: AuditCriteria,
  format: FileFormat,
  timeZone: string,
  now: Date,
): Promise<{ fileName: string; contentType: string; content: Buffer; rows: number }> {
  const entries = await db.models.auditEntries
    .find(auditQuery(criteria, timeZone, await unsettledBatchIds(db)))
    .sort({ at: -1, batchId: 1, seq: 1 })
    .limit(MAX_AUDIT_EXPORT)
    .lean<AuditEntryDoc[]>();
  const rows = entries.map((e) => [
    formatInstant(e.at, timeZone),
    actorName(e),
    ACTION_LABELS[e.action].ko,
    ENTITY_LABELS[e.entity].ko,
    e.recordId,
    e.label,
    OPERATION_LABELS[e.operation].ko,
    STATUS_LABELS[e.status].ko,
    (e.changes ?? [])
      .map((c) => `${fieldLabel(c.field, 'ko')}: ${formatValue(c.before) ?? '∅'} → ${formatValue(c.after) ?? '∅'}`)
      .join('\n') || null,
    e.batchId,
  ]);
  const content = await writeSpreadsheet(format, [
    {
      name: '변경 기록',
      header: ['시각', '변경한 사람', '작업', '종류', 'ID', '이름', '변경', '상태', '바뀐 항목 (전 → 후)', '묶음 ID'],
      rows,
    },
  ]);
  const stamp = formatInstant(now, timeZone).slice(0, 10).replace(/-/g, '');
  return { fileName: `audit-${stamp}.${format}`, contentType: CONTENT_TYPES[format], content, rows: rows.length };
}

/** Why a superseded change cannot be undone: the reset that replaced the school, and when (UTC). */
async function supersededIssue(db: Database, batch: AuditBatchDoc): Promise<Issue> {
  const reset = batch.supersededBy ? await findBatch(db, batch.supersededBy) : null;
  const at = reset ? `${reset.at.toISOString().slice(0, 16).replace('T', ' ')} UTC` : '?';
  return { field: 'batchId', code: 'SUPERSEDED', params: { at, by: batch.supersededBy ?? '' } };
}
