import { Schema, type Connection, type Model } from 'mongoose';

/** One student asked by a request, and their answer. */
export interface UpdateTarget {
  studentId: number;
  email: string;
  name: string;
  studentNumber: number | null;
  answeredAt: Date | null;
  batchId: string | null;
}

/** A data update asked of students (see updateRequestSchema). */
export interface UpdateRequestDoc {
  _id: string;
  fields: string[];
  message: string | null;
  status: 'OPEN' | 'WITHDRAWN';
  createdAt: Date;
  createdById: number | null;
  createdByEmail: string | null;
  withdrawnAt: Date | null;
  withdrawnByEmail: string | null;
  targets: UpdateTarget[];
  pendingEmails: string[];
}
import { defineModel } from './define.js';

const targetSchema = new Schema<UpdateTarget>(
  {
    studentId: { type: Number, required: true },
    // The student's email when asked: the account that signs in with it is asked (src/oauth/provider.ts).
    email: { type: String, required: true },
    name: { type: String, required: true },
    studentNumber: { type: Number, default: null },
    answeredAt: { type: Date, default: null },
    // The audit batch of the answer (null when the student confirmed the values as they were).
    batchId: { type: String, default: null },
  },
  { _id: false },
);

/**
 * Data updates asked at sign-in: an admin asks chosen students to confirm or correct
 * chosen fields of their record; each student's next sign-in shows the form before the app gets
 * its code (src/oauth/provider.ts, the `data_update` prompt). `pendingEmails` holds the emails
 * of the targets that have not answered, so the sign-in's check is one equality query on an
 * array (served by MongoDB and FerretDB alike).
 */
const updateRequestSchema = new Schema<UpdateRequestDoc>(
  {
    _id: { type: String, required: true },
    fields: { type: [String], required: true },
    message: { type: String, default: null },
    status: { type: String, enum: ['OPEN', 'WITHDRAWN'], required: true },
    createdAt: { type: Date, required: true },
    // The admin's account (null: an operator's `campus students request-update`).
    createdById: { type: Number, default: null },
    createdByEmail: { type: String, default: null },
    withdrawnAt: { type: Date, default: null },
    withdrawnByEmail: { type: String, default: null },
    targets: { type: [targetSchema], default: [] },
    pendingEmails: { type: [String], default: [] },
  },
  { versionKey: false, collection: 'student_update_requests' },
);

export type UpdateRequestModel = Model<UpdateRequestDoc>;

/** Data updates asked of students at their next sign-in. */
export function updateRequestModel(connection: Connection): UpdateRequestModel {
  return defineModel<UpdateRequestDoc>(connection, 'UpdateRequest', updateRequestSchema);
}
