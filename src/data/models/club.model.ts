import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { ClubStatus, ClubType } from '../__generated__/enums.js';
import { defineModel } from './define.js';

export type { ClubType } from '../__generated__/enums.js';

const clubSchema = new Schema(
  {
    _id: { type: Number, required: true },
    name: { type: String, required: true },
    type: { type: String, enum: Object.values(ClubType), required: true },
    // The leader is a student id; the API shows null when that student is no longer enrolled.
    leaderId: { type: Number, default: null },
    foundedYear: { type: Number, default: null },
    status: { type: String, enum: Object.values(ClubStatus), default: 'ACTIVE' },
    abolishedYear: { type: Number, default: null },
  },
  { versionKey: false, collection: 'clubs' },
);

clubSchema.index({ type: 1, _id: 1 });
clubSchema.index({ name: 1, _id: 1 });
clubSchema.index({ status: 1 });

export type ClubDoc = InferSchemaType<typeof clubSchema>;
export type ClubModel = Model<ClubDoc>;

export function clubModel(connection: Connection): ClubModel {
  return defineModel<ClubDoc>(connection, 'Club', clubSchema);
}
