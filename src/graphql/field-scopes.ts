import { defaultFieldResolver, isObjectType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import type { ApiScope } from '../data/__generated__/enums.js';
import { ForbiddenError } from '../errors/index.js';
import { SUMMARY_FIELDS } from '../data/school/shapes.js';
import type { GraphQLContext } from './context.js';

/**
 * What a record shows to a caller without its own scope: the summary REST shows of it inside
 * another resource (docs/decisions.md, "Nested records show what REST shows"). A student inside a
 * club or a project is the participant summary of GET /v1/clubs and /v1/projects; a club inside a
 * student or a project is the club summary of GET /v1/students and /v1/projects; a project is
 * reached only from its own root field, so its summary is its id and name.
 */
export const FIELD_SCOPES = {
  Student: { scope: 'STUDENT_READ', summary: SUMMARY_FIELDS.participant },
  Club: { scope: 'CLUB_READ', summary: SUMMARY_FIELDS.club },
  Project: { scope: 'PROJECT_READ', summary: SUMMARY_FIELDS.project },
} as const satisfies Record<'Student' | 'Club' | 'Project', { scope: ApiScope; summary: readonly string[] }>;

/**
 * One rule at every depth: any field of a Student, Club or Project outside its summary needs the
 * record's own scope, whatever path reached it. The root list fields already require that scope,
 * so a record read from its own root field is whole; the same record reached through another
 * resource by a caller without the scope shows only its summary, and any other field is refused
 * with a GraphQL error naming the scope. Fields added to these types later are guarded too (every
 * field but the summary is wrapped), so a new field cannot leak through a nested path.
 */
export function guardFieldScopes(schema: GraphQLSchema): GraphQLSchema {
  for (const typeName of ['Student', 'Club', 'Project'] as const) {
    const rule: { scope: ApiScope; summary: readonly string[] } = FIELD_SCOPES[typeName];
    const type = schema.getType(typeName);
    if (!isObjectType(type)) throw new Error(`guardFieldScopes: no object type ${typeName} in the schema`);
    for (const field of Object.values(type.getFields())) {
      if (rule.summary.includes(field.name)) continue;
      const resolve: GraphQLFieldResolver<unknown, GraphQLContext> = field.resolve ?? defaultFieldResolver;
      const what = `${typeName}.${field.name}`;
      field.resolve = (source, args, ctx, info) => {
        if (!ctx.holdsScope(rule.scope)) {
          throw new ForbiddenError(
            `${what} needs the ${rule.scope} scope: without it a ${typeName.toLowerCase()} reached through another record shows only ${rule.summary.join(', ')}.`,
          );
        }
        return resolve(source, args, ctx, info);
      };
    }
  }
  return schema;
}
