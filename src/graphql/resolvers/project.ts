import type { Resolvers } from '../__generated__/resolvers.js';
import type { StudentDoc } from '../../data/models/student.model.js';
import { projectQuery } from '../../data/school/queries/projects.js';
import { RANGES } from '../../limits.js';
import { checkRange } from '../args.js';
import { listResolver } from './list.js';

export const projectResolvers: Resolvers = {
  Query: {
    projects: listResolver({
      list: 'projects',
      ranges: { projectId: RANGES.id, clubId: RANGES.id },
      query: projectQuery,
      page: (school, query, page, size) => school.projectPage(query, page, size),
    }),
    // The public list needs no key and shows no person (docs/decisions.md, "Projects without a key").
    publicProjects: listResolver({
      list: 'publicProjects',
      ranges: {},
      query: () => projectQuery({}, null, 1),
      page: (school, query, page, size) => school.projectPage(query, page, size),
    }),
    async publicProject(_parent, { id }, ctx) {
      checkRange('id', id, RANGES.id);
      return (await ctx.db.school.snapshot()).projects.get(id) ?? null;
    },
  },
  ProjectPage: {
    projects: (page) => page.items,
  },
  PublicProjectPage: {
    projects: (page) => page.items,
  },
  PublicProject: {
    id: (p) => p._id,
    status: (p) => p.status ?? 'ACTIVE',
    clubName: async (p, _args, ctx) => (p.clubId == null ? null : ((await ctx.loaders.clubById.load(p.clubId))?.name ?? null)),
    participantCount: (p) => new Set(p.participantIds ?? []).size,
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
