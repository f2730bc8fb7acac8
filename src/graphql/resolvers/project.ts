import type { Resolvers } from '../__generated__/resolvers.js';
import type { StudentDoc } from '../../data/models/student.model.js';
import { projectQuery } from '../../data/queries/projects.js';
import { RANGES } from '../../limits.js';
import { listResolver } from './list.js';

export const projectResolvers: Resolvers = {
  Query: {
    projects: listResolver({
      scope: 'PROJECT_READ',
      list: 'projects',
      ranges: { projectId: RANGES.id, clubId: RANGES.id },
      query: projectQuery,
      page: (school, query, page, size) => school.projectPage(query, page, size),
    }),
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
