import type { Resolvers } from '../__generated__/resolvers.js';
import { todayIn } from '../../calendar.js';
import { NeisStore } from '../../data/neis.js';
import { requireClass, resolveDateRange } from '../dates.js';

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
      const { grade, classNum } = requireClass(args.grade, args.classNum);
      const { fromDate, toDate } = resolveDateRange(args, todayIn(ctx.timeZone, ctx.now()));
      return new NeisStore(ctx.db).timetables(fromDate, toDate, grade, classNum);
    },
  },
};
