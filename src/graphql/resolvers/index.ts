import type { Resolvers } from '../__generated__/resolvers.js';
import { Long, LocalDate } from './scalars.js';
import { studentResolvers } from './student.js';
import { clubResolvers } from './club.js';
import { projectResolvers } from './project.js';
import { neisResolvers } from './neis.js';
import { schoolAdminResolvers } from './school-admin.js';
import { changeResolvers } from './changes.js';

const baseResolvers: Resolvers = {
  Long,
  LocalDate,
  Query: { viewerScopes: (_p, _a, ctx) => (ctx.principal?.kind === 'apiKey' ? [...ctx.principal.scopes].sort() : []) },
};

/** Every resolver map; each domain file owns its types (makeExecutableSchema merges them). */
export const resolvers: Resolvers[] = [
  baseResolvers,
  studentResolvers,
  clubResolvers,
  projectResolvers,
  neisResolvers,
  schoolAdminResolvers,
  changeResolvers,
];
