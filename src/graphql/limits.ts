import {
  GraphQLError,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  getNullableType,
  getVariableValues,
  isAbstractType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isListType,
  isObjectType,
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { ApolloServerPlugin } from '@apollo/server';
import { daysInclusive, todayIn } from '../calendar.js';
import { invalidParameter } from '../errors/index.js';
import { MAX_TEXT_LENGTH, RANGES } from '../limits.js';
import type { GraphQLContext } from './context.js';
import { resolveDateRange } from './dates.js';

/*
 * The static limits of POST /graphql. Each is checked before any resolver runs (so before any
 * database work) and refused with 400 and a message naming the limit and the number. The REST
 * adapters run our own fixed documents with validated parameters and are not subject to them.
 */

/** Object levels one document may nest. */
export const MAX_DEPTH = 10;
/** Root fields (each alias of a root field counts) plus aliased fields below the root. */
export const MAX_ROOT_FIELDS = 30;
/**
 * Tokens graphql's parser reads before it gives up (Apollo's `parseOptions.maxTokens`): a few
 * times what a 30-field dashboard needs (the standard introspection query has 184), and small
 * enough that graphql's own validation of the worst such document stays short
 * (docs/benchmarks.md, "The GraphQL limits").
 */
export const MAX_TOKENS = 1000;
/**
 * Highest estimated cost accepted: the slowest document it admits still ends inside the 5 s time
 * budget (docs/benchmarks.md, "The GraphQL limits").
 */
export const MAX_COST = 20_000;

/**
 * What one database round trip costs, in records: every root field costs at least this. On the
 * embedded FerretDB every query scans its collection, which takes as long as building hundreds of
 * records of an answer (docs/benchmarks.md, "The GraphQL limits"), so a root field weighs like a few hundred
 * records; 30 root fields still fit in MAX_COST.
 */
export const ROUND_TRIP_COST = 500;
/** Assumed length of a list that takes no `size` (club members, project participants). */
export const UNSIZED_LIST = 50;
/**
 * Rows one day can hold, per date-range field: three meals; a bound on a day's calendar events
 * (NEIS lists one to three); the periods of one class's day (seven, at most ten with extra ones).
 */
const ROWS_PER_DAY: Readonly<Record<string, number>> = {
  'Query.meals': 3,
  'Query.schedules': 5,
  'Query.timetables': 10,
};

/**
 * Introspection (`__schema`, `__type`) is answered from memory, so it has an allowance of its
 * own; its lists are costed at their longest in this schema. The standard introspection query
 * of graphql-js (what graphql-codegen and editors send) estimates at about 107,000 here since the
 * school-admin types joined the schema; the allowance keeps room for the schema to grow
 * (test/graphql/sdl.http.test.ts sends that query).
 */
export const MAX_INTROSPECTION_COST = 250_000;

/** How big a document is: its estimated cost (data and introspection), object depth, root fields plus aliases. */
export interface Measure {
  readonly cost: number;
  readonly introspectionCost: number;
  readonly depth: number;
  readonly fields: number;
}

interface MeasureInput {
  readonly schema: GraphQLSchema;
  readonly document: DocumentNode;
  readonly operation: OperationDefinitionNode;
  /** Coerced variable values (defaults included), as execution will see them. */
  readonly variables: Record<string, unknown>;
  /** "Today" in the school's zone, for date-range fields given no dates. */
  readonly today: string;
}

/**
 * Measures an operation as it will execute: arguments coerced from the variables, @skip and
 * @include applied. Cost: every object counts 1, times the length of each list it sits in (a
 * page its `size`, a date range its days times the rows a day holds, other lists UNSIZED_LIST);
 * every root field adds a database round trip. Throws 400 for a text argument over the limit.
 */
export function measureOperation(input: MeasureInput): Measure {
  const root = input.schema.getQueryType();
  if (!root || input.operation.operation !== 'query') return { cost: ROUND_TRIP_COST, introspectionCost: 0, depth: 1, fields: 1 };
  return new Measurer(input).selections(input.operation.selectionSet, root, undefined, true);
}

const NOTHING: Measure = { cost: 0, introspectionCost: 0, depth: 0, fields: 0 };

function add(a: Measure, b: Measure): Measure {
  return {
    cost: a.cost + b.cost,
    introspectionCost: a.introspectionCost + b.introspectionCost,
    depth: Math.max(a.depth, b.depth),
    fields: a.fields + b.fields,
  };
}

class Measurer {
  private readonly fragments = new Map<string, FragmentDefinitionNode>();
  /** A fragment's measure depends only on the page size it sits under and whether it is at the root. */
  private readonly fragmentMeasures = new Map<string, Measure>();
  private readonly inProgress = new Set<string>();

  constructor(private readonly input: MeasureInput) {
    for (const def of input.document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(def.name.value, def);
  }

  selections(set: SelectionSetNode, parent: GraphQLObjectType, pageSize: number | undefined, atRoot: boolean): Measure {
    let total = NOTHING;
    for (const selection of set.selections) {
      if (!this.included(selection)) continue;
      if (selection.kind === Kind.FIELD) {
        total = add(total, this.field(selection, parent, pageSize, atRoot));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? this.input.schema.getType(selection.typeCondition.name.value) : parent;
        if (isObjectType(type)) total = add(total, this.selections(selection.selectionSet, type, pageSize, atRoot));
      } else {
        total = add(total, this.fragment(selection.name.value, pageSize, atRoot));
      }
    }
    return total;
  }

  private fragment(name: string, pageSize: number | undefined, atRoot: boolean): Measure {
    const key = `${name}:${pageSize ?? ''}:${atRoot}`;
    const known = this.fragmentMeasures.get(key);
    if (known) return known;
    const fragment = this.fragments.get(name);
    // Validation refuses cycles and unknown fragments before this runs; stay safe regardless.
    if (!fragment || this.inProgress.has(key)) return NOTHING;
    const type = this.input.schema.getType(fragment.typeCondition.name.value);
    if (!isObjectType(type)) return NOTHING;
    this.inProgress.add(key);
    const measure = this.selections(fragment.selectionSet, type, pageSize, atRoot);
    this.inProgress.delete(key);
    this.fragmentMeasures.set(key, measure);
    return measure;
  }

  private field(node: FieldNode, parent: GraphQLObjectType, pageSize: number | undefined, atRoot: boolean): Measure {
    const def = fieldDefinition(this.input.schema, parent, node.name.value);
    if (!def) return NOTHING;
    const args = this.argumentsOf(def, node);
    checkText(args);
    const fields = atRoot || node.alias ? 1 : 0;
    // graphql's own fields (__typename, __schema, __type) are answered from memory.
    const roundTrip = atRoot && !def.name.startsWith('__') ? ROUND_TRIP_COST : 0;
    const type = getNamedType(def.type);
    if (!isObjectType(type) || !node.selectionSet) return { ...NOTHING, cost: roundTrip, fields };
    const isList = isListType(getNullableType(def.type));
    const length = isList ? this.listLength(parent, def, args, pageSize) : 1;
    // A field with `size` returns a page: its list (e.g. StudentPage.students) holds `size` rows.
    const ownSize = def.args.some((a) => a.name === 'size') ? clampSize(args['size']) : undefined;
    const inner = this.selections(node.selectionSet, type, isList ? undefined : (ownSize ?? pageSize), false);
    if (isIntrospectionType(type)) {
      // Its allowance bounds it; its levels (type references nest eight deep in the standard
      // query) do not count as depth.
      return { ...NOTHING, introspectionCost: length * (1 + inner.introspectionCost), depth: inner.depth, fields: fields + inner.fields };
    }
    return { ...inner, cost: roundTrip + length * (1 + inner.cost), depth: 1 + inner.depth, fields: fields + inner.fields };
  }

  /** How many objects a list field can return. */
  private listLength(
    parent: GraphQLObjectType,
    def: GraphQLField<unknown, unknown>,
    args: Record<string, unknown>,
    pageSize: number | undefined,
  ): number {
    const rowsPerDay = ROWS_PER_DAY[`${parent.name}.${def.name}`];
    if (rowsPerDay !== undefined) return daysOf(args, this.input.today) * rowsPerDay;
    if (isIntrospectionType(parent)) return introspectionLengths(this.input.schema).get(`${parent.name}.${def.name}`) ?? 1;
    return pageSize ?? UNSIZED_LIST;
  }

  /** The field's arguments as the resolver will receive them (variables and defaults applied). */
  private argumentsOf(def: GraphQLField<unknown, unknown>, node: FieldNode): Record<string, unknown> {
    try {
      return getArgumentValues(def, node, this.input.variables);
    } catch {
      // Execution refuses the same arguments with graphql's own message, before the resolver.
      return {};
    }
  }

  private included(node: { directives?: FieldNode['directives'] }): boolean {
    if (!node.directives?.length) return true;
    const skip = getDirectiveValues(GraphQLSkipDirective, node, this.input.variables);
    if (skip?.['if'] === true) return false;
    const include = getDirectiveValues(GraphQLIncludeDirective, node, this.input.variables);
    return include?.['if'] !== false;
  }
}

const introspectionCache = new WeakMap<GraphQLSchema, ReadonlyMap<string, number>>();

/**
 * The longest list each introspection field can return in this schema (all types, the most
 * fields of a type, the most arguments of a field, ...), so introspection is costed exactly.
 */
function introspectionLengths(schema: GraphQLSchema): ReadonlyMap<string, number> {
  const cached = introspectionCache.get(schema);
  if (cached) return cached;
  const types = Object.values(schema.getTypeMap());
  const most = (counts: number[]) => Math.max(1, ...counts);
  const fieldsOf = types.flatMap((t) => (isObjectType(t) || isInterfaceType(t) ? Object.values(t.getFields()) : []));
  const directives = schema.getDirectives();
  const lengths = new Map<string, number>([
    ['__Schema.types', types.length],
    ['__Schema.directives', directives.length],
    ['__Type.fields', most(types.map((t) => (isObjectType(t) || isInterfaceType(t) ? Object.keys(t.getFields()).length : 0)))],
    ['__Type.inputFields', most(types.map((t) => (isInputObjectType(t) ? Object.keys(t.getFields()).length : 0)))],
    ['__Type.enumValues', most(types.map((t) => (isEnumType(t) ? t.getValues().length : 0)))],
    ['__Type.interfaces', most(types.map((t) => (isObjectType(t) || isInterfaceType(t) ? t.getInterfaces().length : 0)))],
    ['__Type.possibleTypes', most(types.map((t) => (isAbstractType(t) ? schema.getPossibleTypes(t).length : 0)))],
    ['__Field.args', most(fieldsOf.map((f) => f.args.length))],
    ['__Directive.args', most(directives.map((d) => d.args.length))],
  ]);
  introspectionCache.set(schema, lengths);
  return lengths;
}

/** The definition of `name` on `parent`, including the introspection fields graphql adds. */
function fieldDefinition(schema: GraphQLSchema, parent: GraphQLObjectType, name: string): GraphQLField<unknown, unknown> | undefined {
  if (name === TypeNameMetaFieldDef.name) return TypeNameMetaFieldDef;
  if (parent === schema.getQueryType()) {
    if (name === SchemaMetaFieldDef.name) return SchemaMetaFieldDef;
    if (name === TypeMetaFieldDef.name) return TypeMetaFieldDef;
  }
  return parent.getFields()[name];
}

/** A page's size as the resolver will use it; out-of-range sizes are the resolver's 400 to give. */
function clampSize(size: unknown): number {
  const value = typeof size === 'number' && Number.isFinite(size) ? size : RANGES.size.max;
  return Math.min(RANGES.size.max, Math.max(RANGES.size.min, Math.trunc(value)));
}

/** Days of a date-range field's range by the resolvers' own rules (src/graphql/dates.ts). */
function daysOf(args: Record<string, unknown>, today: string): number {
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  try {
    const { fromDate, toDate } = resolveDateRange(
      { date: text(args['date']), fromDate: text(args['fromDate']), toDate: text(args['toDate']) },
      today,
    );
    return daysInclusive(fromDate, toDate);
  } catch {
    // The resolver refuses this range before reading anything.
    return 1;
  }
}

/** Refuses a text argument (at any depth of an input object or list) longer than REST allows. */
function checkText(value: unknown, name = ''): void {
  if (typeof value === 'string') {
    if (value.length > MAX_TEXT_LENGTH)
      throw limitError(invalidParameter(name, `must be at most ${MAX_TEXT_LENGTH} characters`, value).message);
  } else if (Array.isArray(value)) {
    for (const item of value) checkText(item, name);
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) checkText(item, key);
  }
}

/** Refuses a measured document over any limit; the message names the limit and the number. */
export function checkLimits(measure: Measure): void {
  if (measure.fields > MAX_ROOT_FIELDS) {
    throw limitError(`Query has too many root fields and aliases: ${measure.fields}, at most ${MAX_ROOT_FIELDS} allowed.`);
  }
  if (measure.depth > MAX_DEPTH) throw limitError(`Query is too deep: depth ${measure.depth}, at most ${MAX_DEPTH} allowed.`);
  if (measure.introspectionCost > MAX_INTROSPECTION_COST) {
    throw limitError(
      `Introspection is too costly: estimated cost ${measure.introspectionCost}, at most ${MAX_INTROSPECTION_COST} allowed.`,
    );
  }
  if (measure.cost > MAX_COST) {
    throw limitError(
      `Query is too costly: estimated cost ${measure.cost}, at most ${MAX_COST} allowed; ask for smaller pages, shorter date ranges or fewer nested lists.`,
    );
  }
}

/**
 * Measures every /graphql document before it runs: refuses it (400) over a limit, else lets the
 * caller pay for it (rate-limit points in proportion to its cost; 429 when they run out). A
 * document whose variables do not coerce is left to execution, which refuses it before any
 * resolver runs.
 */
export function limitsPlugin(): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, document, request, schema, contextValue }) {
          if (!operation || contextValue.trustedDocument) return;
          const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {}, { maxErrors: 1 });
          if (!coerced.coerced) return;
          const today = todayIn(contextValue.timeZone, contextValue.now());
          const measure = measureOperation({ schema, document, operation, variables: coerced.coerced, today });
          checkLimits(measure);
          await contextValue.admit(measure.cost);
        },
      };
    },
  };
}

function limitError(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
}
