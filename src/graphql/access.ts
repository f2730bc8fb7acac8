import {
  defaultFieldResolver,
  isObjectType,
  Kind,
  type ConstDirectiveNode,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';
import { assertAnyScope, assertStaff } from '../auth/principal.js';
import { API_SCOPES } from '../data/keys/store.js';
import type { ApiScope } from '../data/__generated__/enums.js';
import type { GraphQLContext } from './context.js';

/** A root field's rule, as its @access directive declares it (schema/base.graphql). */
export type AccessRule =
  { readonly rule: 'PUBLIC' } | { readonly rule: 'DATA'; readonly scopes: readonly [ApiScope, ...ApiScope[]] } | { readonly rule: 'STAFF' };

/** A root field without a rule, or with one that does not read: the schema is not built. */
export class UndeclaredAccessError extends Error {}

/**
 * The rule of every Query and Mutation field, read from its @access directive: the schema is the
 * one place a root field's privilege is declared, and a field without one (a new mutation that
 * forgot it) stops the schema from building, so the service does not start and the tests that
 * walk the rules (test/accounts/access-rules.http.test.ts) see it.
 */
export function rootFieldRules(schema: GraphQLSchema): Map<string, AccessRule> {
  const rules = new Map<string, AccessRule>();
  for (const type of [schema.getQueryType(), schema.getMutationType()]) {
    if (!type) continue;
    for (const field of Object.values(type.getFields())) rules.set(`${type.name}.${field.name}`, ruleOf(type.name, field));
  }
  return rules;
}

/** Wraps every root field's resolver with its declared rule; throws UndeclaredAccessError when one has none. */
export function guardRootFields(schema: GraphQLSchema): GraphQLSchema {
  const rules = rootFieldRules(schema);
  for (const type of [schema.getQueryType(), schema.getMutationType()]) {
    if (!isObjectType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      const rule = rules.get(`${type.name}.${field.name}`);
      if (!rule || rule.rule === 'PUBLIC') continue;
      const resolve: GraphQLFieldResolver<unknown, GraphQLContext> = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, ctx, info) => {
        admit(rule, ctx);
        return resolve(source, args, ctx, info);
      };
    }
  }
  return schema;
}

/** Throws 401/403 unless the caller meets the rule. */
function admit(rule: AccessRule, ctx: GraphQLContext): void {
  if (rule.rule === 'STAFF') assertStaff(ctx.principal);
  else if (rule.rule === 'DATA') assertAnyScope(ctx.principal, rule.scopes, 'field');
}

function ruleOf(typeName: string, field: GraphQLField<unknown, unknown>): AccessRule {
  const where = `${typeName}.${field.name}`;
  const directive = field.astNode?.directives?.find((d) => d.name.value === 'access');
  if (!directive) throw new UndeclaredAccessError(`${where} declares no @access rule (schema/base.graphql says how).`);
  const rule = enumArgument(directive, 'rule');
  const scopes = listArgument(directive, 'scopes');
  if (rule === 'PUBLIC' || rule === 'STAFF') {
    if (scopes.length > 0) throw new UndeclaredAccessError(`${where}: @access(rule: ${rule}) takes no scopes.`);
    return { rule };
  }
  if (rule !== 'DATA') throw new UndeclaredAccessError(`${where}: @access has no rule PUBLIC, DATA or STAFF.`);
  const known = scopes.filter((s): s is ApiScope => (API_SCOPES as readonly string[]).includes(s));
  const [first, ...others] = known;
  if (!first || known.length !== scopes.length) throw new UndeclaredAccessError(`${where}: @access(rule: DATA) needs its scopes.`);
  return { rule: 'DATA', scopes: [first, ...others] };
}

function enumArgument(directive: ConstDirectiveNode, name: string): string | undefined {
  const value = directive.arguments?.find((a) => a.name.value === name)?.value;
  return value?.kind === Kind.ENUM ? value.value : undefined;
}

function listArgument(directive: ConstDirectiveNode, name: string): string[] {
  const value = directive.arguments?.find((a) => a.name.value === name)?.value;
  if (!value) return [];
  const items = value.kind === Kind.LIST ? value.values : [value];
  return items.flatMap((item) => (item.kind === Kind.ENUM ? [item.value] : []));
}
