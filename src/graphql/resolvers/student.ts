import type { Resolvers } from '../__generated__/resolvers.js';
import { studentQuery } from '../../data/school/queries/students.js';
import { RANGES } from '../../limits.js';
import { listResolver } from './list.js';

export const studentResolvers: Resolvers = {
  Query: {
    students: listResolver({
      list: 'students',
      ranges: {
        studentId: RANGES.id,
        grade: RANGES.grade,
        classNum: RANGES.classNum,
        number: RANGES.number,
        dormitoryRoom: RANGES.dormitoryRoom,
      },
      query: studentQuery,
      page: (school, query, page, size) => school.studentPage(query, page, size),
    }),
  },
  StudentPage: {
    students: (page) => page.items,
  },
  Student: {
    id: (s) => s._id,
    major: (s) => s.major ?? null,
    majorClub: (s, _args, ctx) => (s.majorClubId == null ? null : ctx.loaders.clubById.load(s.majorClubId)),
    autonomousClub: (s, _args, ctx) => (s.autonomousClubId == null ? null : ctx.loaders.clubById.load(s.autonomousClubId)),
  },
};
