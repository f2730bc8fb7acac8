import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { AuditAction, AuditStatus, RecordOperation, SchoolEntity } from '../__generated__/enums.js';
import { defineModel } from './define.js';

/**
 * The audit log of school data (src/data/school/engine.ts writes it). A batch is one change as a
 * whole (a form action, an import, a rollover, an undo); each of its entries is one record with
 * its whole document before and after. The entries are written before the records are (a
 * write-ahead journal): FerretDB has no transactions, so a failed or interrupted batch is undone
 * from these before-images, and an applied one can be undone the same way later.
 */
const auditBatchSchema = new Schema(
  {
    _id: { type: String, required: true },
    at: { type: Date, required: true },
    actorKind: { type: String, enum: ['ACCOUNT', 'CLI'], required: true },
    actorId: { type: Number, default: null },
    actorEmail: { type: String, default: null },
    action: { type: String, enum: Object.values(AuditAction), required: true },
    summary: { type: String, required: true },
    source: { type: String, default: null },
    status: { type: String, enum: Object.values(AuditStatus), required: true },
    records: { type: Number, required: true },
    error: { type: String, default: null },
    undoneBy: { type: String, default: null },
    undoes: { type: String, default: null },
    /** The reset (src/data/school/demo.ts) that replaced the whole school after this change. */
    supersededBy: { type: String, default: null },
    /**
     * Its writer stopped half-way (killed, or its database went away) and another process
     * recovered it (src/data/school/engine.ts recoverInterrupted): when and which process.
     */
    interrupted: { type: Boolean, default: false },
    recoveredAt: { type: Date, default: null },
    recoveredBy: { type: String, default: null },
    /** How many documents of `school_journal` hold its write-ahead journal while it is APPLYING. */
    journalChunks: { type: Number, default: 0 },
    /** The sequence numbers of its change-feed events (src/data/events/outbox.ts), deleted if it rolls back. */
    eventFirst: { type: Number, default: null },
    eventLast: { type: Number, default: null },
    /**
     * The write lease's fencing token (src/data/platform/lease.ts) of whoever may settle it: its writer's,
     * until a recoverer writes its own there before rolling it back, so a writer that stalled
     * past its lease cannot mark it APPLIED afterwards (docs/school-writes.md).
     */
    fence: { type: Number, default: null },
  },
  { versionKey: false, collection: 'audit_batches' },
);
auditBatchSchema.index({ at: -1, _id: -1 });
auditBatchSchema.index({ status: 1 });

const fieldChangeSchema = new Schema(
  {
    field: { type: String, required: true },
    before: { type: Schema.Types.Mixed, default: null },
    after: { type: Schema.Types.Mixed, default: null },
  },
  { _id: false },
);

const auditEntrySchema = new Schema(
  {
    // `${batchId}:${seq}`: the journal's order within its batch.
    _id: { type: String, required: true },
    batchId: { type: String, required: true },
    seq: { type: Number, required: true },
    at: { type: Date, required: true },
    actorKind: { type: String, enum: ['ACCOUNT', 'CLI'], required: true },
    actorId: { type: Number, default: null },
    actorEmail: { type: String, default: null },
    action: { type: String, enum: Object.values(AuditAction), required: true },
    entity: { type: String, enum: Object.values(SchoolEntity), required: true },
    recordId: { type: Number, required: true },
    label: { type: String, required: true },
    operation: { type: String, enum: Object.values(RecordOperation), required: true },
    before: { type: Schema.Types.Mixed, default: null },
    after: { type: Schema.Types.Mixed, default: null },
    changes: { type: [fieldChangeSchema], default: [] },
    status: { type: String, enum: Object.values(AuditStatus), required: true },
  },
  { versionKey: false, collection: 'audit_entries', minimize: false },
);
auditEntrySchema.index({ at: -1, batchId: 1, seq: 1 });
auditEntrySchema.index({ batchId: 1, seq: 1 });
auditEntrySchema.index({ entity: 1, recordId: 1 });

export type AuditBatchDoc = InferSchemaType<typeof auditBatchSchema>;
export type AuditEntryDoc = InferSchemaType<typeof auditEntrySchema>;

export function auditBatchModel(connection: Connection): Model<AuditBatchDoc> {
  return defineModel<AuditBatchDoc>(connection, 'AuditBatch', auditBatchSchema);
}

export function auditEntryModel(connection: Connection): Model<AuditEntryDoc> {
  return defineModel<AuditEntryDoc>(connection, 'AuditEntry', auditEntrySchema);
}

/**
 * A file kept between the preview of an import or rollover and its application (an hour at
 * most, for the account that uploaded it): applying plans the same file again.
 */
const schoolUploadSchema = new Schema(
  {
    _id: { type: String, required: true },
    kind: { type: String, enum: ['IMPORT', 'ROLLOVER'], required: true },
    entity: { type: String, enum: Object.values(SchoolEntity), required: true },
    accountId: { type: Number, default: null },
    fileName: { type: String, required: true },
    content: { type: Buffer, required: true },
    removeMissing: { type: Boolean, default: false },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'school_uploads' },
);
schoolUploadSchema.index({ createdAt: 1 });

export type SchoolUploadDoc = InferSchemaType<typeof schoolUploadSchema>;

export function schoolUploadModel(connection: Connection): Model<SchoolUploadDoc> {
  return defineModel<SchoolUploadDoc>(connection, 'SchoolUpload', schoolUploadSchema);
}

/**
 * The write-ahead journal of the batches being written (src/data/school/engine.ts): each record's
 * before- and after-image, a few hundred records per document, kept only until its batch settles.
 * Apart from the audit entries (which grow with every change) so that recovery reads it by `_id`,
 * the one filter FerretDB over SQLite serves from an index.
 */
const schoolJournalSchema = new Schema(
  {
    // `${batchId}:${chunk}`
    _id: { type: String, required: true },
    batchId: { type: String, required: true },
    chunk: { type: Number, required: true },
    /** JSON text of the records' changes (entity, id, before, after). */
    diffs: { type: String, required: true },
  },
  { versionKey: false, collection: 'school_journal', minimize: false },
);

export type SchoolJournalDoc = InferSchemaType<typeof schoolJournalSchema>;

export function schoolJournalModel(connection: Connection): Model<SchoolJournalDoc> {
  return defineModel<SchoolJournalDoc>(connection, 'SchoolJournal', schoolJournalSchema);
}

/**
 * An import or rollover the admin console applies in the background (src/data/school/jobs.ts):
 * its progress and, once done, its result, so that no request waits for the apply and the page
 * showing the job can be answered by any instance.
 */
const schoolJobSchema = new Schema(
  {
    _id: { type: String, required: true },
    kind: { type: String, enum: ['IMPORT', 'ROLLOVER'], required: true },
    accountId: { type: Number, default: null },
    state: { type: String, enum: ['RUNNING', 'DONE', 'FAILED'], required: true },
    written: { type: Number, default: 0 },
    total: { type: Number, default: 0 },
    /** The preview the apply answered (JSON text), once DONE. */
    result: { type: String, default: null },
    error: { type: String, default: null },
    /**
     * The process running it (src/data/platform/process-identity.ts): a RUNNING job whose process is gone
     * from this pid namespace, or whose heartbeat stopped, was interrupted.
     */
    pid: { type: Number, required: true },
    host: { type: String, required: true },
    pidSpace: { type: String, default: null },
    pidStart: { type: String, default: null },
    startedAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'school_jobs' },
);

export type SchoolJobDoc = InferSchemaType<typeof schoolJobSchema>;

export function schoolJobModel(connection: Connection): Model<SchoolJobDoc> {
  return defineModel<SchoolJobDoc>(connection, 'SchoolJob', schoolJobSchema);
}
