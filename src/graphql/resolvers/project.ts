import type { Resolvers } from '../__generated__/resolvers.js';
import type { StudentDoc } from '../../data/models/student.model.js';
import { findPage } from '../../data/queries/page.js';
import { projectFilter, projectSort } from '../../data/queries/projects.js';
import { LIMITS, checkPaging, checkRange, direction } from '../args.js';
import { toPage } from '../page.js';

export const projectResolvers: Resolvers = {
  Query: {
    async projects(_parent, args, ctx) {
      ctx.requireScope('PROJECT_READ');
      const filter = args.filter ?? {};
      const { page, size } = checkPaging(args.page, args.size, 100);
      checkRange('projectId', filter.projectId, LIMITS.id);
      checkRange('clubId', filter.clubId, LIMITS.id);
      const { items, total } = await findPage(
        ctx.db.models.projects,
        projectFilter(filter),
        projectSort(args.sortBy, direction(args.sortDirection)),
        page,
        size,
      );
      return toPage(items, total, size);
    },
  },
  ProjectPage: {
    projects: (page) => page.items,
  },
  Project: {
    id: (p) => p._id,
    status: (p) => p.status ?? 'ACTIVE',
    club: (p, _args, ctx) => (p.clubId == null ? null : ctx.loaders.clubById.load(p.clubId)),
    async participants(p, _args, ctx) {
      const ids = [...(p.participantIds ?? [])].sort((a, b) => a - b);
      const students = await ctx.loaders.studentById.loadMany(ids);
      return students.filter((s): s is StudentDoc => s != null && !(s instanceof Error));
    },
  },
};
