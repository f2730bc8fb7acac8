import { GraphQLScalarType } from 'graphql';
import type { Resolvers } from '../__generated__/resolvers.js';
import { Long, LocalDate } from './scalars.js';
import { studentResolvers } from './student.js';
import { clubResolvers } from './club.js';
import { projectResolvers } from './project.js';
import { neisResolvers } from './neis.js';

/** All resolvers, merged per type (each domain file owns its types). */
export function buildResolvers(): Resolvers {
  const parts: Resolvers[] = [
    { Long, LocalDate, Query: { viewerScopes: (_p, _a, ctx) => [...(ctx.principal?.scopes ?? [])].sort() } },
    studentResolvers,
    clubResolvers,
    projectResolvers,
    neisResolvers,
  ];
  const merged: Record<string, unknown> = {};
  for (const part of parts) {
    for (const [type, fields] of Object.entries(part)) {
      // Scalars are class instances: keep them whole; field maps are merged into fresh objects.
      merged[type] = fields instanceof GraphQLScalarType ? fields : { ...(merged[type] as object | undefined), ...fields };
    }
  }
  return merged as Resolvers;
}
