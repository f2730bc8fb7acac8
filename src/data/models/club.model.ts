import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { defineModel } from './define.js';

export const CLUB_TYPES = ['MAJOR_CLUB', 'AUTONOMOUS_CLUB'] as const;
export type ClubType = (typeof CLUB_TYPES)[number];
export const CLUB_STATUSES = ['ACTIVE', 'ABOLISHED'] as const;

const clubSchema = new Schema(
  {
    _id: { type: Number, required: true },
    name: { type: String, required: true },
    type: { type: String, enum: CLUB_TYPES, required: true },
    // The leader is a student id; the API shows null when that student is no longer enrolled.
    leaderId: { type: Number, default: null },
    foundedYear: { type: Number, default: null },
    status: { type: String, enum: CLUB_STATUSES, default: 'ACTIVE' },
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
