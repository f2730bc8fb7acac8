import { BadRequestError, InternalError } from '../../errors/index.js';
import type { Database } from '../../data/database.js';
import type { ClubDoc } from '../../data/models/club.model.js';
import type { ProjectDoc } from '../../data/models/project.model.js';
import type { StudentDoc } from '../../data/models/student.model.js';
import {
  actorName,
  exportAudit,
  findBatch,
  formatInstant,
  formatValue,
  isUndoable,
  listAudit,
  recentBatches,
  undoBatch,
  type AuditCriteria,
} from '../../data/school/audit.js';
import { schoolCounts } from '../../data/school/counts.js';
import { exportSchoolData } from '../../data/school/export.js';
import { applyImport, previewImport, type ApplyProgress } from '../../data/school/import.js';
import type { Lang } from '../../data/school/labels.js';
import { issueMessage } from '../../data/school/messages.js';
import { applyRollover, previewRollover } from '../../data/school/rollover.js';
import { FILE_LIMITS, formatBytes, type FileFormat } from '../../data/school/spreadsheet.js';
import type { Actor, Issue, PreviewResult, SchoolEntity } from '../../data/school/types.js';
import { findJob, startJob } from '../../data/school/jobs.js';
import { dropUpload, findUpload, keepUpload } from '../../data/school/uploads.js';
import { SchoolWriter, type WriteOutcome } from '../../data/school/writes.js';
import type { AuditFilter, FileFormat as GraphQLFileFormat, Language, Resolvers } from '../__generated__/resolvers.js';
import { checkRange } from '../args.js';
import type { GraphQLContext } from '../context.js';

/*
 * School data management (schema/school-admin.graphql): every field here declares @access(rule:
 * STAFF), checked before its resolver runs (src/graphql/access.ts). Mutations hand their
 * input to the data layer's one write path (src/data/school/), which validates, journals in the
 * audit log, writes and moves the data version; refusals come back as FieldErrors naming fields.
 */

/**
 * The signed-in account as the actor of the audit log. The field's @access(rule: STAFF) admitted
 * only staff (src/graphql/access.ts): this is no second check, only the actor's name.
 */
function staff(ctx: GraphQLContext): Actor {
  const account = ctx.principal;
  if (account?.kind !== 'account') throw new InternalError(new Error('a staff field ran without a signed-in account'));
  return { kind: 'ACCOUNT', accountId: account.accountId, email: account.email };
}

function writer(ctx: GraphQLContext): SchoolWriter {
  return new SchoolWriter(ctx.db, staff(ctx), { timeZone: ctx.timeZone, now: ctx.now });
}

/** The input's fields that were given (null included: it clears), without the omitted ones. */
function given<T extends object>(input: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}

const lang = (value: Language | null | undefined): Lang => (value === 'KO' ? 'ko' : 'en');
const fileFormat = (value: GraphQLFileFormat): FileFormat => (value === 'CSV' ? 'csv' : 'xlsx');

/** The payloads of a write: the record as stored now (null when refused), the problems, the batch. */
async function studentPayload(db: Database, outcome: WriteOutcome) {
  const student = outcome.id === null ? null : await db.models.students.findById(outcome.id).lean<StudentDoc>();
  return { student, errors: [...outcome.issues], batchId: outcome.batchId };
}

async function clubPayload(db: Database, outcome: WriteOutcome) {
  const club = outcome.id === null ? null : await db.models.clubs.findById(outcome.id).lean<ClubDoc>();
  return { club, errors: [...outcome.issues], batchId: outcome.batchId };
}

async function projectPayload(db: Database, outcome: WriteOutcome) {
  const project = outcome.id === null ? null : await db.models.projects.findById(outcome.id).lean<ProjectDoc>();
  return { project, errors: [...outcome.issues], batchId: outcome.batchId };
}

function deleted(outcome: WriteOutcome) {
  return { deletedId: outcome.id, errors: [...outcome.issues], batchId: outcome.batchId };
}

function criteria(filter: AuditFilter | null | undefined): AuditCriteria {
  return given(filter ?? {}) as AuditCriteria;
}

/** A preview that could not start (the file itself is refused, or the kept upload is gone). */
type UploadKind = 'IMPORT' | 'ROLLOVER';

/** The staff member's previewed file of this kind, while it is kept (an hour), with who applies it and when. */
async function keptUpload(ctx: GraphQLContext, uploadId: string, kind: UploadKind) {
  const actor = staff(ctx);
  const now = ctx.now();
  const accountId = actor.kind === 'ACCOUNT' ? actor.accountId : null;
  const upload = await findUpload(ctx.db, uploadId, accountId, now);
  return upload?.kind === kind ? { actor, now, accountId, upload } : null;
}

type Kept = NonNullable<Awaited<ReturnType<typeof keptUpload>>>;

/** Writes a kept import or rollover through the one write path; a file written whole is kept no longer. */
async function apply(ctx: GraphQLContext, { actor, now, upload }: Kept, onProgress?: ApplyProgress): Promise<PreviewResult> {
  const progress = onProgress ? { onProgress } : {};
  const result =
    upload.kind === 'IMPORT'
      ? await applyImport(ctx.db, actor, upload.entity, upload.fileName, upload.content, {
          removeMissing: upload.removeMissing ?? false,
          timeZone: ctx.timeZone,
          now,
          ...progress,
        })
      : await applyRollover(ctx.db, actor, upload.fileName, upload.content, { now, ...progress });
  if (result.applied) await dropUpload(ctx.db, upload._id);
  return result;
}

/** Applies a kept file now; a file no longer kept is a refusal of the preview's shape. */
async function applyKept(ctx: GraphQLContext, uploadId: string, kind: UploadKind): Promise<PreviewResult> {
  const kept = await keptUpload(ctx, uploadId, kind);
  return kept ? apply(ctx, kept) : refusedFile('STUDENT', '', { field: 'file', code: 'UPLOAD_GONE' });
}

/** Applies a kept file in the background (a job the console follows); a file no longer kept is a 400. */
async function startApplying(ctx: GraphQLContext, uploadId: string, kind: UploadKind) {
  const kept = await keptUpload(ctx, uploadId, kind);
  if (!kept)
    throw new BadRequestError(
      `uploadId: no previewed ${kind === 'IMPORT' ? 'import' : 'rollover'} by that id (files are kept for an hour).`,
    );
  return startJob(ctx.db, { kind, accountId: kept.accountId, now: kept.now }, (onProgress) => apply(ctx, kept, onProgress));
}

function refusedFile(entity: SchoolEntity, fileName: string, issue: Issue): PreviewResult {
  return {
    uploadId: null,
    entity,
    fileName,
    removeMissing: false,
    applied: false,
    batchId: null,
    rows: 0,
    counts: { created: 0, updated: 0, unchanged: 0, removed: 0, refused: 0 },
    issues: [
      {
        sheet: null,
        row: null,
        column: null,
        value: null,
        field: null,
        code: issue.code,
        ...(issue.params ? { params: issue.params } : {}),
      },
    ],
    changes: [],
  };
}

/** The bytes of a base64 upload, or the issue refusing it (too large before decoding anything big). */
function decodeUpload(contentBase64: string): Buffer | Issue {
  const approxBytes = Math.floor((contentBase64.length * 3) / 4);
  if (approxBytes > FILE_LIMITS.maxBytes + 3) {
    return { field: 'file', code: 'TOO_LARGE', params: { size: formatBytes(approxBytes), max: formatBytes(FILE_LIMITS.maxBytes) } };
  }
  return Buffer.from(contentBase64, 'base64');
}

/** A journaled reference shown by name (a club's, a student's email) while the record exists; else its id. */
async function readableReference(ctx: GraphQLContext, field: string, value: unknown): Promise<unknown> {
  if (value == null) return null;
  if (field === 'majorClubId' || field === 'autonomousClubId' || field === 'clubId') {
    return (await ctx.loaders.clubById.load(Number(value)))?.name ?? `#${String(value)}`;
  }
  if (field === 'leaderId') return (await ctx.loaders.studentById.load(Number(value)))?.email ?? `#${String(value)}`;
  if (field === 'participantIds' && Array.isArray(value)) {
    const students = await Promise.all(value.map((id) => ctx.loaders.studentById.load(Number(id))));
    return students.map((s, i) => s?.email ?? `#${String(value[i])}`);
  }
  return value;
}

export const schoolAdminResolvers: Resolvers = {
  Mutation: {
    createStudent: async (_p, { input }, ctx) => studentPayload(ctx.db, await writer(ctx).createStudent(given(input))),
    updateStudent: async (_p, { id, input }, ctx) => studentPayload(ctx.db, await writer(ctx).updateStudent(id, given(input))),
    graduateStudent: async (_p, { id }, ctx) => studentPayload(ctx.db, await writer(ctx).graduateStudent(id)),
    withdrawStudent: async (_p, { id }, ctx) => studentPayload(ctx.db, await writer(ctx).withdrawStudent(id)),
    reactivateStudent: async (_p, { id, input }, ctx) => studentPayload(ctx.db, await writer(ctx).reactivateStudent(id, given(input))),
    deleteStudent: async (_p, { id }, ctx) => deleted(await writer(ctx).deleteStudent(id)),
    createClub: async (_p, { input }, ctx) => clubPayload(ctx.db, await writer(ctx).createClub(given(input))),
    updateClub: async (_p, { id, input }, ctx) => clubPayload(ctx.db, await writer(ctx).updateClub(id, given(input))),
    abolishClub: async (_p, { id, year }, ctx) => clubPayload(ctx.db, await writer(ctx).abolishClub(id, year ?? null)),
    deleteClub: async (_p, { id }, ctx) => deleted(await writer(ctx).deleteClub(id)),
    createProject: async (_p, { input }, ctx) => projectPayload(ctx.db, await writer(ctx).createProject(given(input))),
    updateProject: async (_p, { id, input }, ctx) => projectPayload(ctx.db, await writer(ctx).updateProject(id, given(input))),
    endProject: async (_p, { id, endYear }, ctx) => projectPayload(ctx.db, await writer(ctx).endProject(id, endYear ?? null)),
    reopenProject: async (_p, { id }, ctx) => projectPayload(ctx.db, await writer(ctx).reopenProject(id)),
    deleteProject: async (_p, { id }, ctx) => deleted(await writer(ctx).deleteProject(id)),

    async previewImport(_p, { input }, ctx) {
      const actor = staff(ctx);
      const bytes = decodeUpload(input.contentBase64);
      if (!Buffer.isBuffer(bytes)) return refusedFile(input.entity, input.fileName, bytes);
      const now = ctx.now();
      const removeMissing = input.removeMissing ?? false;
      const preview = await previewImport(ctx.db, input.entity, input.fileName, bytes, { removeMissing, timeZone: ctx.timeZone, now });
      if (preview.issues.length > 0) return preview;
      const accountId = actor.kind === 'ACCOUNT' ? actor.accountId : null;
      const uploadId = await keepUpload(ctx.db, {
        kind: 'IMPORT',
        entity: input.entity,
        accountId,
        fileName: input.fileName,
        content: bytes,
        removeMissing,
        now,
      });
      return { ...preview, uploadId };
    },
    applyImport: async (_p, { uploadId }, ctx) => applyKept(ctx, uploadId, 'IMPORT'),
    async previewRollover(_p, { input }, ctx) {
      const actor = staff(ctx);
      const bytes = decodeUpload(input.contentBase64);
      if (!Buffer.isBuffer(bytes)) return refusedFile('STUDENT', input.fileName, bytes);
      const preview = await previewRollover(ctx.db, input.fileName, bytes);
      if (preview.issues.length > 0) return preview;
      const accountId = actor.kind === 'ACCOUNT' ? actor.accountId : null;
      const uploadId = await keepUpload(ctx.db, {
        kind: 'ROLLOVER',
        entity: 'STUDENT',
        accountId,
        fileName: input.fileName,
        content: bytes,
        removeMissing: false,
        now: ctx.now(),
      });
      return { ...preview, uploadId };
    },
    applyRollover: async (_p, { uploadId }, ctx) => applyKept(ctx, uploadId, 'ROLLOVER'),
    startApplyImport: async (_p, { uploadId }, ctx) => startApplying(ctx, uploadId, 'IMPORT'),
    startApplyRollover: async (_p, { uploadId }, ctx) => startApplying(ctx, uploadId, 'ROLLOVER'),
    async undoAuditBatch(_p, { batchId }, ctx) {
      const result = await undoBatch(ctx.db, staff(ctx), batchId, ctx.now());
      return { batchId: result.batchId, errors: result.issues };
    },
  },

  Query: {
    async auditLog(_p, { filter, page, size }, ctx) {
      staff(ctx);
      const p = page ?? 0;
      const s = size ?? 50;
      checkRange('page', p, { min: 0, max: 1_000_000 });
      checkRange('size', s, { min: 1, max: 200 });
      const { entries, total } = await listAudit(ctx.db, criteria(filter), p, s, ctx.timeZone);
      return { entries, totalElements: total, totalPages: Math.ceil(total / s) };
    },
    async auditBatches(_p, { limit, action, interrupted }, ctx) {
      staff(ctx);
      const n = limit ?? 10;
      checkRange('limit', n, { min: 1, max: 100 });
      return recentBatches(ctx.db, n, action, interrupted ?? false);
    },
    async auditBatch(_p, { id }, ctx) {
      staff(ctx);
      return findBatch(ctx.db, id);
    },
    async schoolJob(_p, { id }, ctx) {
      const actor = staff(ctx);
      return findJob(ctx.db, id, actor.kind === 'ACCOUNT' ? actor.accountId : null);
    },
    async schoolCounts(_p, _a, ctx) {
      staff(ctx);
      return schoolCounts(ctx.db);
    },
    async exportSchoolData(_p, { entity, format, includeGraduates }, ctx) {
      staff(ctx);
      const file = await exportSchoolData(ctx.db, entity, fileFormat(format), {
        includeGraduates: includeGraduates ?? false,
        timeZone: ctx.timeZone,
        now: ctx.now(),
      });
      return { fileName: file.fileName, contentType: file.contentType, contentBase64: file.content.toString('base64'), rows: file.rows };
    },
    async exportAuditLog(_p, { filter, format }, ctx) {
      staff(ctx);
      const file = await exportAudit(ctx.db, criteria(filter), fileFormat(format), ctx.timeZone, ctx.now());
      return { fileName: file.fileName, contentType: file.contentType, contentBase64: file.content.toString('base64'), rows: file.rows };
    },
  },

  Club: {
    async members(club, _a, ctx) {
      staff(ctx);
      const field = club.type === 'MAJOR_CLUB' ? 'majorClubId' : 'autonomousClubId';
      return (await ctx.loaders.membersByClubId.load(club._id)).filter((s) => s[field] === club._id);
    },
    async recordedLeader(club, _a, ctx) {
      staff(ctx);
      return club.leaderId == null ? null : ctx.loaders.studentById.load(club.leaderId);
    },
  },
  FieldError: {
    message: (issue, args) => issueMessage(issue, lang(args.lang)),
  },
  ImportIssue: {
    message: (issue, args) => issueMessage(issue, lang(args.lang), issue.column),
  },
  ImportPreview: {
    changes: (preview, args) =>
      preview.changes
        .filter((c) => args.includeUnchanged || c.operation !== 'UNCHANGED')
        .slice(0, Math.max(0, Math.min(args.limit ?? 500, 20_000))),
  },
  FieldChange: {
    before: (change) => formatValue(change.before),
    after: (change) => formatValue(change.after),
  },
  AuditEntry: {
    id: (entry) => entry._id,
    at: (entry, _a, ctx) => formatInstant(entry.at, ctx.timeZone),
    actor: (entry) => actorName(entry),
    changes: async (entry, _a, ctx) =>
      Promise.all(
        [...(entry.changes ?? [])].map(async (c) => ({
          field: c.field,
          before: await readableReference(ctx, c.field, c.before),
          after: await readableReference(ctx, c.field, c.after),
        })),
      ),
  },
  AuditBatch: {
    id: (batch) => batch._id,
    at: (batch, _a, ctx) => formatInstant(batch.at, ctx.timeZone),
    actor: (batch) => actorName(batch),
    undoable: (batch) => isUndoable(batch),
    error: (batch) => batch.error ?? null,
    interrupted: (batch) => batch.interrupted === true,
    recoveredAt: (batch, _a, ctx) => (batch.recoveredAt ? formatInstant(batch.recoveredAt, ctx.timeZone) : null),
    recoveredBy: (batch) => batch.recoveredBy ?? null,
  },
};
