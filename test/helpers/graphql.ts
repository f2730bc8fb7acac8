import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';

/** The names of the schema's root fields of `operation`, in schema order: what a walk over "every mutation" iterates. */
export function rootFieldNames(schema: GraphQLSchema, operation: 'Query' | 'Mutation'): string[] {
  const type = operation === 'Query' ? schema.getQueryType() : schema.getMutationType();
  return Object.keys(type?.getFields() ?? {});
}

/**
 * A document that calls `field` with placeholder arguments of the right types: it passes
 * validation, so what answers is the field's @access rule (src/graphql/access.ts), which is
 * checked before the arguments' values are.
 */
export function documentFor(schema: GraphQLSchema, operation: 'Query' | 'Mutation', field: string): string {
  const type = operation === 'Query' ? schema.getQueryType() : schema.getMutationType();
  const definition = type?.getFields()[field];
  if (!definition) throw new Error(`${operation}.${field} not found`);
  const args = definition.args.filter((a) => isNonNullType(a.type)).map((a: GraphQLArgument) => `${a.name}: ${placeholder(a.type)}`);
  const selection = isObjectType(getNamedType(definition.type)) ? ' { __typename }' : '';
  return `${operation === 'Query' ? 'query' : 'mutation'} { ${field}${args.length > 0 ? `(${args.join(', ')})` : ''}${selection} }`;
}

function placeholder(type: GraphQLInputType): string {
  if (isNonNullType(type)) return placeholder(type.ofType);
  if (isListType(type)) return `[${placeholder(type.ofType)}]`;
  if (isEnumType(type)) return type.getValues()[0]?.name ?? 'X';
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields())
      .filter((f) => isNonNullType(f.type))
      .map((f) => `${f.name}: ${placeholder(f.type)}`);
    return `{ ${fields.join(', ')} }`;
  }
  if (isScalarType(type) && ['Int', 'Long', 'Float'].includes(type.name)) return '1';
  if (isScalarType(type) && type.name === 'Boolean') return 'false';
  return '"2026-01-01"';
}
