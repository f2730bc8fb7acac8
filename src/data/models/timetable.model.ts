import { Schema, type Connection, type Model } from 'mongoose';
import { defineModel } from './define.js';
import { NEIS_RECORD_PATHS, type NeisSchoolFields } from './neis-record.js';

/** One period of one class on one day, as the API shows it. */
export interface TimetableRecord extends NeisSchoolFields {
  timetableId: string;
  timetableDate: string;
  academicYear: string;
  semester: string | null;
  grade: number;
  classNum: number;
  period: number;
  subject: string;
  departmentName: string | null;
  classroomName: string | null;
}

/** A stored period: the record, its sync generation and its position in NEIS's order. */
export interface TimetableDoc extends TimetableRecord {
  generation: string;
  seq: number;
}

const timetableSchema = new Schema(
  {
    ...NEIS_RECORD_PATHS,
    timetableId: { type: String, required: true },
    timetableDate: { type: String, required: true },
    academicYear: { type: String, required: true },
    semester: { type: String, default: null },
    grade: { type: Number, required: true },
    classNum: { type: Number, required: true },
    period: { type: Number, required: true },
    subject: { type: String, required: true },
    departmentName: { type: String, default: null },
    classroomName: { type: String, default: null },
    seq: { type: Number, required: true },
  },
  { versionKey: false, collection: 'neis_timetables' },
);

timetableSchema.index({ generation: 1, grade: 1, classNum: 1, timetableDate: 1, period: 1 });

export type TimetableModel = Model<TimetableDoc>;

/** The timetable periods model (collection neis_timetables). */
export function timetableModel(connection: Connection): TimetableModel {
  return defineModel<TimetableDoc>(connection, 'Timetable', timetableSchema);
}
