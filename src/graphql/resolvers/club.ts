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
    // The leader the API shows (see `leader`) is left out unless includeLeader, and listed when
    // it is (even if not a member); a graduate or withdrawn "leader" reads as null, so such a
    // member stays listed whatever the flag says.
    async participants(c, args, ctx) {
      const [members, leader] = await Promise.all([
        ctx.loaders.membersByClubId.load(c._id),
        args.includeLeader && c.leaderId != null ? ctx.loaders.studentById.load(c.leaderId) : null,
      ]);
      const others = members.filter((m) => !(m._id === c.leaderId && isEnrolledRole(m.role)));
      if (!leader || !isEnrolledRole(leader.role)) return others;
      return [...others, leader].sort((a, b) => a._id - b._id);
    },
  },
};
