import {
  GraphQLError,
  getNamedType,
  getNullableType,
  isListType,
  isObjectType,
  Kind,
  valueFromAST,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { ApolloServerPlugin } from '@apollo/server';

export const MAX_DEPTH = 10;
export const MAX_COST = 100_000;
/** Assumed length of a list field that takes no `size` (club members, project participants). */
const UNSIZED_LIST = 50;

interface Walk {
  schema: GraphQLSchema;
  fragments: Record<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
}

/**
 * Estimates an operation's cost: each object costs 1, multiplied by the page size of the list
 * it sits in (the `size` argument, or its default), so cost grows with what the query can fetch.
 */
export function measureOperation(walk: Walk, operation: OperationDefinitionNode): { cost: number; depth: number } {
  const root = walk.schema.getQueryType();
  if (!root || operation.operation !== 'query') return { cost: 1, depth: 1 };
  return measureSelection(walk, operation.selectionSet, root, undefined, new Set());
}

function measureSelection(
  walk: Walk,
  selectionSet: SelectionSetNode,
  parent: GraphQLObjectType,
  pageSize: number | undefined,
  visitedFragments: Set<string>,
): { cost: number; depth: number } {
  let cost = 0;
  let depth = 0;
  for (const selection of selectionSet.selections) {
    let inner: { cost: number; depth: number } | undefined;
    if (selection.kind === Kind.FIELD) {
      const field = parent.getFields()[selection.name.value];
      if (!field || !selection.selectionSet) continue;
      const type = getNamedType(field.type);
      if (!isObjectType(type)) continue;
      const sizeArg = field.args.find((a) => a.name === 'size');
      const sizeNode = selection.arguments?.find((a) => a.name.value === 'size');
      const ownSize = sizeArg
        ? Number((sizeNode ? valueFromAST(sizeNode.value, sizeArg.type, walk.variables) : undefined) ?? sizeArg.defaultValue ?? UNSIZED_LIST)
        : undefined;
      const isList = isListType(getNullableType(field.type));
      const multiplier = isList ? (pageSize ?? UNSIZED_LIST) : 1;
      const child = measureSelection(walk, selection.selectionSet, type, isList ? undefined : ownSize ?? pageSize, visitedFragments);
      cost += multiplier * (1 + child.cost);
      depth = Math.max(depth, 1 + child.depth);
      continue;
    }
    if (selection.kind === Kind.INLINE_FRAGMENT) {
      inner = measureSelection(walk, selection.selectionSet, parent, pageSize, visitedFragments);
    } else {
      const name = selection.name.value;
      const fragment = walk.fragments[name];
      if (!fragment || visitedFragments.has(name)) continue;
      inner = measureSelection(walk, fragment.selectionSet, parent, pageSize, new Set([...visitedFragments, name]));
    }
    cost += inner.cost;
    depth = Math.max(depth, inner.depth);
  }
  return { cost, depth };
}

/** Refuses operations deeper than MAX_DEPTH or costlier than MAX_COST, before any resolver runs. */
export function limitsPlugin(): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, document, request, schema }) {
          if (!operation) return;
          const fragments: Record<string, FragmentDefinitionNode> = {};
          for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments[def.name.value] = def;
          const { cost, depth } = measureOperation({ schema, fragments, variables: request.variables ?? {} }, operation);
          if (depth > MAX_DEPTH) throw limitError(`Query is too deep: depth ${depth}, at most ${MAX_DEPTH} allowed.`);
          if (cost > MAX_COST) throw limitError(`Query is too costly: estimated cost ${cost}, at most ${MAX_COST} allowed; ask for smaller pages or fewer nested lists.`);
        },
      };
    },
  };
}

function limitError(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
}
