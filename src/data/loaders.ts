import DataLoader from 'dataloader';
import type { Models } from './database.js';
import type { StudentDoc } from './models/student.model.js';
import type { ClubDoc } from './models/club.model.js';

/** One round trip per batch: the driver's default first batch (101) would add getMore calls. */
const BATCH = 10000;

/**
 * Per-request batch loaders: every reference in one GraphQL response (a student's clubs, a
 * club's leader and members, a project's participants) becomes one `$in` query per kind.
 */
export function createLoaders(models: Models) {
  return {
    studentById: new DataLoader<number, StudentDoc | null>(async (ids) => {
      const docs = await models.students.find({ _id: { $in: [...ids] } }).batchSize(BATCH).lean<StudentDoc[]>();
      const byId = new Map(docs.map((d) => [d._id, d]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    clubById: new DataLoader<number, ClubDoc | null>(async (ids) => {
      const docs = await models.clubs.find({ _id: { $in: [...ids] } }).batchSize(BATCH).lean<ClubDoc[]>();
      const byId = new Map(docs.map((d) => [d._id, d]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    /** Members of each club (through the student's major or autonomous club), ordered by id. */
    membersByClubId: new DataLoader<number, StudentDoc[]>(async (clubIds) => {
      const ids = [...clubIds];
      const docs = await models.students
        .find({ $or: [{ majorClubId: { $in: ids } }, { autonomousClubId: { $in: ids } }] })
        .sort({ _id: 1 })
        .batchSize(BATCH)
        .lean<StudentDoc[]>();
      const byClub = new Map<number, StudentDoc[]>(ids.map((id) => [id, []]));
      for (const doc of docs) {
        for (const clubId of new Set([doc.majorClubId, doc.autonomousClubId])) {
          if (clubId != null) byClub.get(clubId)?.push(doc);
        }
      }
      return ids.map((id) => byClub.get(id) ?? []);
    }),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
