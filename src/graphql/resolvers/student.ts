import type { Resolvers } from '../__generated__/resolvers.js';
import { findPage } from '../../data/queries/page.js';
import { studentFilter, studentSort } from '../../data/queries/students.js';
import { LIMITS, checkPaging, checkRange, direction } from '../args.js';
import { toPage } from '../page.js';

export const studentResolvers: Resolvers = {
  Query: {
    async students(_parent, args, ctx) {
      ctx.requireScope('STUDENT_READ');
      const filter = args.filter ?? {};
      const { page, size } = checkPaging(args.page, args.size, 300);
      checkRange('studentId', filter.studentId, LIMITS.id);
      checkRange('grade', filter.grade, LIMITS.grade);
      checkRange('classNum', filter.classNum, LIMITS.classNum);
      checkRange('number', filter.number, LIMITS.number);
      checkRange('dormitoryRoom', filter.dormitoryRoom, { min: 1, max: 9999 });
      const { items, total } = await findPage(
        ctx.db.models.students,
        studentFilter(filter),
        studentSort(args.sortBy, direction(args.sortDirection)),
        page,
        size,
      );
      return toPage(items, total, size);
    },
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
