import { Schema, type Connection, type Model } from 'mongoose';
import { defineModel } from './define.js';
import { NEIS_RECORD_PATHS, type NeisSchoolFields } from './neis-record.js';

/** A school calendar event as the API shows it (docs/decisions.md's schedule record). */
export interface ScheduleRecord extends NeisSchoolFields {
  scheduleId: string;
  scheduleDate: string;
  academicYear: string;
  eventName: string;
  eventContent: string | null;
  dayCategory: string | null;
  schoolCourseType: string | null;
  dayNightType: string | null;
  targetGrades: number[];
}

/** A stored event: the record, its sync generation and its position in NEIS's order. */
export interface ScheduleDoc extends ScheduleRecord {
  generation: string;
  seq: number;
}

const scheduleSchema = new Schema(
  {
    ...NEIS_RECORD_PATHS,
    scheduleId: { type: String, required: true },
    scheduleDate: { type: String, required: true },
    academicYear: { type: String, required: true },
    eventName: { type: String, required: true },
    eventContent: { type: String, default: null },
    dayCategory: { type: String, default: null },
    schoolCourseType: { type: String, default: null },
    dayNightType: { type: String, default: null },
    targetGrades: { type: [Number], required: true },
    // Several events of one day keep the order NEIS lists them in.
    seq: { type: Number, required: true },
  },
  { versionKey: false, collection: 'neis_schedules' },
);

scheduleSchema.index({ generation: 1, scheduleDate: 1, seq: 1 });

export type ScheduleModel = Model<ScheduleDoc>;

/** The calendar events model (collection neis_schedules). */
export function scheduleModel(connection: Connection): ScheduleModel {
  return defineModel<ScheduleDoc>(connection, 'Schedule', scheduleSchema);
}
