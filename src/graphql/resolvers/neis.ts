import type { Resolvers } from '../__generated__/resolvers.js';
import { todayIn } from '../../calendar.js';
import { requireClass, resolveDateRange } from '../dates.js';

/**
 * Meals, schedules and timetables: the rows the NEIS sync keeps, read by date range through the
 * request's loaders, so many fields or aliases of one request share one read per kind.
 */
export const neisResolvers: Resolvers = {
  Query: {
    async meals(_parent, args, ctx) {
      const { fromDate, toDate } = resolveDateRange(args, todayIn(ctx.timeZone, ctx.now()));
      return ctx.loaders.mealsByRange.load({ from: fromDate, to: toDate });
    },
    async schedules(_parent, args, ctx) {
      const { fromDate, toDate } = resolveDateRange(args, todayIn(ctx.timeZone, ctx.now()));
      return ctx.loaders.schedulesByRange.load({ from: fromDate, to: toDate });
    },
    async timetables(_parent, args, ctx) {
      const { grade, classNum } = requireClass(args.grade, args.classNum);
      const { fromDate, toDate } = resolveDateRange(args, todayIn(ctx.timeZone, ctx.now()));
      return ctx.loaders.timetablesByRange.load({ from: fromDate, to: toDate, grade, classNum });
    },
  },
};
