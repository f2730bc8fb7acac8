import type { Resolvers } from '../__generated__/resolvers.js';
import { isEnrolledRole } from '../../data/models/student.model.js';
import { clubQuery } from '../../data/school/queries/clubs.js';
import { RANGES } from '../../limits.js';
import { listResolver } from './list.js';

export const clubResolvers: Resolvers = {
  Query: {
    clubs: listResolver({
      list: 'clubs',
      ranges: { clubId: RANGES.id },
      query: clubQuery,
      page: (school, query, page, size) => school.clubPage(query, page, size),
    }),
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
