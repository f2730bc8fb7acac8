import type { Resolvers } from '../__generated__/resolvers.js';
import { isEnrolledRole } from '../../data/models/student.model.js';
import { findPage } from '../../data/queries/page.js';
import { clubFilter, clubSort } from '../../data/queries/clubs.js';
import { LIMITS, checkPaging, checkRange, direction } from '../args.js';
import { toPage } from '../page.js';

export const clubResolvers: Resolvers = {
  Query: {
    async clubs(_parent, args, ctx) {
      ctx.requireScope('CLUB_READ');
      const filter = args.filter ?? {};
      const { page, size } = checkPaging(args.page, args.size, 100);
      checkRange('clubId', filter.clubId, LIMITS.id);
      const { items, total } = await findPage(
        ctx.db.models.clubs,
        clubFilter(filter),
        clubSort(args.sortBy, direction(args.sortDirection)),
        page,
        size,
      );
      return toPage(items, total, size);
    },
  },
  ClubPage: {
    clubs: (page) => page.items,
  },
  Club: {
    id: (c) => c._id,
    status: (c) => c.status ?? 'ACTIVE',
    // A graduate or withdrawn student leads no club: such a leader reads as null.
    async leader(c, _args, ctx) {
      if (c.leaderId == null) return null;
      const leader = await ctx.loaders.studentById.load(c.leaderId);
      return leader && isEnrolledRole(leader.role) ? leader : null;
    },
    async participants(c, args, ctx) {
      const members = await ctx.loaders.membersByClubId.load(c._id);
      return args.includeLeader ? members : members.filter((m) => m._id !== c.leaderId);
    },
  },
};
