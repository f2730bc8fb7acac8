import type { Resolvers } from '../__generated__/resolvers.js';
import { todayIn } from '../../calendar.js';
import { NeisStore } from '../../data/neis.js';
import { BadRequestError } from '../../errors/index.js';
import { LIMITS, checkRange } from '../args.js';
import { resolveDateRange } from '../dates.js';

/** Meals, schedules and timetables: the rows the NEIS sync keeps, read by date range. */
export const neisResolvers: Resolvers = {
  Query: {
    async meals(_parent, args, ctx) {
      ctx.requireScope('NEIS_READ');
      const { fromDate, toDate } = resolveDateRange(args, todayIn(ctx.timeZone, ctx.now()));
      return new NeisStore(ctx.db).meals(fromDate, toDate);
    },
    async schedules(_parent, args, ctx) {
      ctx.requireScope('NEIS_READ');
      const { fromDate, toDate } = resolveDateRange(args, todayIn(ctx.timeZone, ctx.now()));
      return new NeisStore(ctx.db).schedules(fromDate, toDate);
    },
    async timetables(_parent, args, ctx) {
      ctx.requireScope('NEIS_READ');
      requireClass(args.grade, args.classNum);
      const { fromDate, toDate } = resolveDateRange(args, todayIn(ctx.timeZone, ctx.now()));
      return new NeisStore(ctx.db).timetables(fromDate, toDate, args.grade, args.classNum);
    },
  },
};

/** grade 1–3 and classNum 1–4, both required (GraphQL's Int! already refuses null). */
function requireClass(grade: number | null | undefined, classNum: number | null | undefined): void {
  if (grade == null) throw new BadRequestError("Missing parameter 'grade': an integer from 1 to 3 is required.", 'grade');
  if (classNum == null) throw new BadRequestError("Missing parameter 'classNum': an integer from 1 to 4 is required.", 'classNum');
  checkRange('grade', grade, LIMITS.grade);
  checkRange('classNum', classNum, LIMITS.classNum);
}
