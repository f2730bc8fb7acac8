import { Schema, type Connection, type Model, type InferSchemaType } from 'mongoose';
import { ProjectStatus } from '../__generated__/enums.js';
import { defineModel } from './define.js';

const projectSchema = new Schema(
  {
    _id: { type: Number, required: true },
    name: { type: String, required: true },
    description: { type: String, required: true, default: '' },
    clubId: { type: Number, default: null },
    participantIds: { type: [Number], default: [] },
    startYear: { type: Number, default: null },
    endYear: { type: Number, default: null },
    status: { type: String, enum: Object.values(ProjectStatus), default: 'ACTIVE' },
  },
  { versionKey: false, collection: 'projects' },
);

projectSchema.index({ clubId: 1 });
projectSchema.index({ name: 1, _id: 1 });
projectSchema.index({ status: 1 });

export type ProjectDoc = InferSchemaType<typeof projectSchema>;
export type ProjectModel = Model<ProjectDoc>;

export function projectModel(connection: Connection): ProjectModel {
  return defineModel<ProjectDoc>(connection, 'Project', projectSchema);
}
