import { readFileSync } from 'node:fs';
import {
  Kind,
  TypeInfo,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInputType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  parse,
  typeFromAST,
  validate,
  valueFromAST,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { z } from 'zod';
import { BadRequestError, statusName } from '../errors/index.js';
import { buildSchema } from '../graphql/schema.js';
import { STATUS_PATH } from '../http/status.js';
import { ENDPOINTS, endpointScopes, isPublic, pathParameters, type Endpoint } from './endpoints.js';

/**
 * The OpenAPI 3.1 document of the REST data API, built from the endpoint table
 * (src/rest/endpoints.ts) and nothing written twice:
 * - parameters: zod 4's JSON Schema of each row's query (the parsers of src/rest/params.ts carry
 *   their ranges, enums and formats as metadata; descriptions come from the rows); a parameter is
 *   required when the row's `variables` refuse a query without it, and its default is what the
 *   operation gets when it is omitted (the row's own value, else the GraphQL schema's default);
 * - `data`: the row's operation walked against the GraphQL schema (schema/*.graphql);
 * - status names: src/errors/index.ts; the version: package.json.
 * Served at GET /v1/openapi.json (src/surfaces/data.ts); the parameter tables of docs/data-api.md
 * are rendered from it (scripts/readme-tables.ts).
 */

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1). */
export type JsonSchema = { [keyword: string]: unknown };

export interface ParameterObject {
  readonly name: string;
  readonly in: 'query' | 'path' | 'header';
  readonly required: boolean;
  readonly description?: string;
  readonly schema: JsonSchema;
}

export interface Reference {
  readonly $ref: string;
}

export interface HeaderObject {
  readonly description: string;
  readonly required?: boolean;
  readonly schema: JsonSchema;
}

export interface ResponseObject {
  readonly description: string;
  readonly headers?: Record<string, HeaderObject>;
  readonly content?: Record<string, { readonly schema: JsonSchema }>;
}

export interface OperationObject {
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly security: readonly Record<string, readonly string[]>[];
  readonly parameters: readonly ParameterObject[];
  readonly responses: Record<string, ResponseObject | Reference>;
}

export interface OpenApiDocument {
  readonly openapi: '3.1.0';
  readonly info: { readonly title: string; readonly version: string; readonly description: string };
  readonly paths: Record<string, { readonly get: OperationObject }>;
  readonly components: {
    readonly securitySchemes: Record<
      string,
      | { type: 'apiKey'; in: 'header'; name: string; description: string }
      | { type: 'http'; scheme: 'bearer'; bearerFormat: string; description: string }
    >;
    readonly responses: Record<string, ResponseObject>;
  };
}

/** The security scheme every data endpoint uses; the scope travels as its "role" (OpenAPI 3.1). */
const API_KEY_SCHEME = 'apiKey';
/** The other way in: an app's machine token (client_credentials), read as a key with the same scopes. */
const MACHINE_TOKEN_SCHEME = 'machineToken';
const API_KEY_HEADER = 'X-API-KEY';
const MEDIA_TYPE = 'application/json';

/** Builds the document; tests pass their own rows to see that the document follows them. */
export function buildOpenApiDocument(endpoints: readonly Endpoint[] = ENDPOINTS, schema: GraphQLSchema = buildSchema()): OpenApiDocument {
  const paths: Record<string, { get: OperationObject }> = {};
  for (const endpoint of endpoints) paths[endpoint.path] = { get: dataOperation(endpoint, schema) };
  paths[HEALTH_PATH] = { get: healthOperation() };
  paths[STATUS_PATH] = { get: statusOperation() };
  return {
    openapi: '3.1.0',
    info: { title: 'Campus Data Service 데이터 API (Data API)', version: packageVersion(), description: INFO_DESCRIPTION },
    paths,
    components: {
      securitySchemes: {
        [API_KEY_SCHEME]: {
          type: 'apiKey',
          in: 'header',
          name: API_KEY_HEADER,
          description:
            'API 키(UUID). 엔드포인트마다 필요한 범위(scope)가 있습니다. / An API key (a UUID) holding the scope the endpoint names.',
        },
        [MACHINE_TOKEN_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            '앱 서버의 머신 토큰: 토큰 엔드포인트에서 grant_type=client_credentials로 받은 1시간짜리 JWT. 같은 범위의 API 키와 똑같이 읽습니다. / ' +
            "An app server's machine token: a one-hour JWT from the token endpoint (grant_type=client_credentials), read exactly as an API key with the same scopes.",
        },
      },
      responses: Object.fromEntries(STATUS_RESPONSES.map((response) => [statusName(response.status), errorResponse(response)])),
    },
  };
}

const INFO_DESCRIPTION = [
  '학교의 읽기 전용 데이터 API입니다: 학생, 동아리, 프로젝트, 그리고 NEIS에서 동기화한 급식, 학사일정, 시간표.',
  `모든 요청은 \`GET\`이며 \`${API_KEY_HEADER}\` 헤더에 엔드포인트의 범위(scope)를 가진 API 키가 필요합니다.`,
  '응답은 `{status, code, message, data}` 형식이며, 오류의 `message`는 무엇이 잘못되었는지 알려 줍니다.',
  '',
  "The school's read-only data API: students, clubs, projects, and the meals, academic calendar and timetables synced from NEIS.",
  `Every request is a \`GET\` with an API key holding the endpoint's scope in the \`${API_KEY_HEADER}\` header.`,
  'Answers come in the `{status, code, message, data}` envelope; an error message names the problem.',
  'Parameters are parsed strictly: plain base-10 integers, `true`/`false` in any case, exact enum names, real `YYYY-MM-DD` dates;',
  'unknown parameters are ignored and an omitted filter is not applied.',
].join('\n');

function packageVersion(): string {
  // src/rest/ and dist/rest/ both sit two levels below the package root.
  const pkg: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  return z.object({ version: z.string() }).parse(pkg).version;
}

// ---------------------------------------------------------------------------------------------
// Operations

function dataOperation(endpoint: Endpoint, schema: GraphQLSchema): OperationObject {
  // `{id}` reads "ById" in the operation's name: getPublicProjectsById.
  const segments = endpoint.path
    .split('/')
    .slice(2)
    .map((s) => s.replace(/^\{(\w+)\}$/, (_m, name: string) => `by${name.charAt(0).toUpperCase()}${name.slice(1)}`));
  return {
    operationId: `get${segments.map((s) => s.charAt(0).toUpperCase() + s.slice(1)).join('')}`,
    summary: bilingual(endpoint.summary),
    description: isPublic(endpoint) ? PUBLIC_TEXT : scopeText(endpointScopes(endpoint)),
    tags: segments.slice(0, 1),
    // One or the other: a key, or a machine token, each holding the endpoint's scope.
    security: isPublic(endpoint)
      ? []
      : [{ [API_KEY_SCHEME]: [...endpointScopes(endpoint)] }, { [MACHINE_TOKEN_SCHEME]: [...endpointScopes(endpoint)] }],
    parameters: [...describeParameters(endpoint, schema), IF_NONE_MATCH],
    responses: {
      200: successResponse(endpoint, schema),
      ...Object.fromEntries(
        STATUS_RESPONSES.filter(
          ({ onlyFor, status }) =>
            (onlyFor === undefined || onlyFor === endpoint.path) &&
            // Without a key there is no 401 or 403.
            !(isPublic(endpoint) && (status === 401 || status === 403)),
        ).map(({ status }) => [status, { $ref: `#/components/responses/${statusName(status)}` }]),
      ),
    },
  };
}

/** What an operation without a key says instead of its scope (docs/decisions.md, "Projects without a key"). */
const PUBLIC_TEXT =
  'API 키가 필요 없습니다. 요청 한도는 주소마다 따로 셉니다 (PUBLIC_RATE_LIMIT). 개인 정보는 없습니다. / No API key needed; the rate limit counts per client address (PUBLIC_RATE_LIMIT). No personal data.';

/** Which scope an operation needs, both languages. */
function scopeText(scopes: readonly string[]): string {
  if (scopes.length === 1)
    return `범위(scope) \`${scopes[0]}\`가 있는 API 키가 필요합니다. / Needs an API key with the \`${scopes[0]}\` scope.`;
  const list = scopes.map((s) => `\`${s}\``).join(', ');
  return `범위(scope) ${list} 중 하나가 있는 API 키가 필요하며, 키가 가진 범위의 이벤트만 받습니다. / Needs an API key with any of ${list}; it receives the events its scopes allow.`;
}

const HEALTH_PATH = '/v1/health';

/** GET /v1/health (src/http/health.ts): no key; the same report with 200 or 503. */
function healthOperation(): OperationObject {
  const report: JsonSchema = {
    type: 'object',
    description:
      'The health report: `database` (`status`, `latencyMs`), a section per background job (`neis`: its last sync), and `rollover` (`underWay`: whether a school-year rollover or another announced mass change is being applied now, with its `batchId`, `kind`, `records`, `since`).',
  };
  return {
    operationId: 'getHealth',
    summary: bilingual({
      ko: '서비스와 데이터베이스가 응답하는지; API 키가 필요 없습니다.',
      en: 'Whether the service and its database answer; no API key needed.',
    }),
    description:
      'API 키 없이 호출합니다. 데이터베이스가 응답하지 않으면 같은 보고서를 503으로 줍니다. / No key needed; 503 with the same report while the database is unreachable.',
    tags: ['health'],
    security: [],
    parameters: [],
    responses: {
      200: jsonResponse('The service and its database answer.', envelopeSchema(200, report), ['Cache-Control']),
      503: jsonResponse('The database is unreachable; the report says so.', envelopeSchema(503, report), ['Cache-Control']),
      405: { $ref: `#/components/responses/${statusName(405)}` },
    },
  };
}

/** GET /v1/status (src/http/status.ts): no key; the status page's report, 200 whatever it reports. */
function statusOperation(): OperationObject {
  const report: JsonSchema = {
    type: 'object',
    description:
      'The status page\'s report (docs/operations.md, "The status page"): `state` (the worst of the parts: UP, DEGRADED, DOWN), `checkedAt`, `historyAsOf`; ' +
      '`parts`, each with `part` (data-api, sign-in, userinfo, database, redis when configured, neis, webhooks), `state` (UP, DEGRADED, DOWN, or OFF for a part not running), ' +
      "`detail` (`reason`, `latencyMs`; NEIS: each dataset's `lastSuccessAt` and `ageSeconds`; webhooks: `backlog`, `oldestPendingAt`), " +
      "`availability` (`days90`, and each recorded day's share and minutes up, degraded and down) and the open `incidents` naming it; " +
      '`rollover` (`underWay`: a rollover or mass change being applied now, `planned`: one previewed); `current` and `past` incidents and maintenance with their `updates`.',
  };
  return {
    operationId: 'getStatus',
    summary: bilingual({
      ko: '서비스 각 부분의 상태, 지난 90일 가용률, 장애와 점검; API 키가 필요 없습니다.',
      en: 'The state of each part of the service, its last 90 days, incidents and maintenance; no API key needed.',
    }),
    description:
      'API 키 없이 호출합니다. 요청 한도는 주소마다 셉니다 (PUBLIC_RATE_LIMIT). 서비스가 1분마다 스스로 확인한 결과입니다. / No key needed; the rate limit counts per client address (PUBLIC_RATE_LIMIT). What the service found checking itself every minute.',
    tags: ['health'],
    security: [],
    parameters: [IF_NONE_MATCH],
    responses: {
      200: jsonResponse(
        'The report (a part that is down is reported, not an error).',
        envelopeSchema(200, report),
        ['ETag', 'Cache-Control'],
        RATE_LIMIT_HEADERS,
      ),
      ...Object.fromEntries([304, 405, 429].map((status) => [status, { $ref: `#/components/responses/${statusName(status)}` }])),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Parameters (the row's zod query)

/** A text of the document in both languages, Korean first (the API reference is Korean first, like every page). */
export function bilingual(text: { readonly ko: string; readonly en: string }): string {
  return `${text.ko} / ${text.en}`;
}

/** A query parameter's JSON Schema with its description (both languages) lifted to the parameter. */
interface QueryParameter {
  readonly name: string;
  readonly description?: string;
  readonly schema: JsonSchema;
}

/** The row's query parameters as OpenAPI parameters, in the row's order. */
function describeParameters(endpoint: Endpoint, schema: GraphQLSchema): ParameterObject[] {
  const parameters = queryParameters(endpoint);
  const inPath = new Set(pathParameters(endpoint));
  const { required, base } = requiredParameters(endpoint, parameters);
  for (const name of inPath) required.add(name);
  return parameters.map(({ name, description, schema: valueSchema }) => {
    const fallback = required.has(name) ? undefined : parameterDefault(endpoint, schema, name, valueSchema, base);
    return {
      name,
      in: inPath.has(name) ? 'path' : 'query',
      required: required.has(name),
      ...(description === undefined ? {} : { description }),
      schema: fallback === undefined ? valueSchema : { ...valueSchema, default: fallback },
    };
  });
}

/** zod's JSON Schema of what the query accepts (io: 'input': the strings the parsers take, as their metadata describes them). */
function queryParameters(endpoint: Endpoint): QueryParameter[] {
  const json = z.toJSONSchema(endpoint.query, { io: 'input', target: 'draft-2020-12' });
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    if (typeof property !== 'object') throw new Error(`${endpoint.path}: parameter ${name} has no JSON Schema`);
    const { description, ko, ...schema } = property as JsonSchema;
    const text = typeof description === 'string' ? (typeof ko === 'string' ? bilingual({ ko, en: description }) : description) : undefined;
    return { name, schema, ...(text === undefined ? {} : { description: text }) };
  });
}

/** The day the probes below pass as "today"; any real date does. */
const PROBE_TODAY = '2000-03-01';

/**
 * Two distinct values a parameter accepts, as its parser returns them, to probe the row's
 * `variables` with: the ends of a range, the first and last enum values, both booleans.
 */
function sampleValues(schema: JsonSchema): readonly [unknown, unknown] {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return [schema.enum[0], schema.enum.at(-1)];
  if (schema.type === 'integer') return [Number(schema.minimum ?? 0), Number(schema.maximum ?? 1)];
  if (schema.type === 'boolean') return [true, false];
  if (schema.format === 'date') return ['2000-01-01', '2000-01-02'];
  return ['a', 'b'];
}

/**
 * The parameters a query must have: those the row's `variables` refuse a query without (a
 * BadRequestError naming the parameter, as timetables' grade and classNum). Also returns a query
 * holding a value for each, the base the other parameters are probed on.
 */
function requiredParameters(endpoint: Endpoint, parameters: readonly QueryParameter[]) {
  const required = new Set<string>();
  const base: Record<string, unknown> = {};
  for (;;) {
    try {
      endpoint.variables(base, () => PROBE_TODAY);
      return { required, base };
    } catch (err) {
      const missing = err instanceof BadRequestError ? parameters.find((p) => p.name === err.parameter) : undefined;
      if (!missing || required.has(missing.name)) throw err;
      required.add(missing.name);
      base[missing.name] = sampleValues(missing.schema)[0];
    }
  }
}

/**
 * What the operation gets when the parameter is omitted: find the one place in the variables
 * where the parameter's value lands (probing with two values), then take the row's own value
 * there, or else the GraphQL schema's default of the argument or input field it feeds.
 * Undefined when there is none or the value lands in more than one place (`date`).
 */
function parameterDefault(
  endpoint: Endpoint,
  schema: GraphQLSchema,
  name: string,
  valueSchema: JsonSchema,
  base: Record<string, unknown>,
): unknown {
  const [first, second] = sampleValues(valueSchema);
  const probe = (value: unknown) => endpoint.variables({ ...base, [name]: value }, () => PROBE_TODAY);
  let paths: string[][];
  try {
    const [withFirst, withSecond] = [probe(first), probe(second)];
    paths = leafPaths(withFirst).filter((path) => valueAt(withFirst, path) === first && valueAt(withSecond, path) === second);
  } catch (err) {
    // A parameter that is refused alone (fromDate without toDate) has no default of its own.
    if (err instanceof BadRequestError) return undefined;
    throw err;
  }
  const [path, ...others] = paths;
  if (!path || others.length > 0) return undefined;
  const omitted = endpoint.variables(base, () => PROBE_TODAY);
  return valueAt(omitted, path) ?? graphqlDefault(schema, parse(endpoint.operation), path);
}

function leafPaths(value: unknown, prefix: string[] = []): string[][] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [prefix];
  return Object.entries(value).flatMap(([key, inner]) => leafPaths(inner, [...prefix, key]));
}

function valueAt(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) current = typeof current === 'object' && current !== null ? (current as Record<string, unknown>)[key] : undefined;
  return current;
}

/**
 * The default a variable path gets when the variables lack it: the operation's own default for
 * `$variable`, else the GraphQL schema's default of the argument (or input field) the operation
 * passes `$variable` to, then down the input object's fields.
 */
function graphqlDefault(schema: GraphQLSchema, document: DocumentNode, [variable, ...fields]: readonly string[]): unknown {
  const typeInfo = new TypeInfo(schema);
  let declared: unknown;
  let found: { type: GraphQLInputType | null | undefined; defaultValue: unknown } | undefined;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      VariableDefinition(node) {
        const type = typeFromAST(schema, node.type);
        if (node.variable.name.value === variable && node.defaultValue && type && isInputType(type)) {
          declared = valueFromAST(node.defaultValue, type);
        }
        // The declaration of `$variable` is not a use of it.
        return false;
      },
      Variable(node) {
        if (node.name.value === variable && !found) found = { type: typeInfo.getInputType(), defaultValue: typeInfo.getDefaultValue() };
      },
    }),
  );
  if (declared !== undefined) return valueAt(declared, fields);
  let type = found?.type;
  let defaultValue = found?.defaultValue;
  for (const field of fields) {
    const named = type ? getNamedType(type) : undefined;
    const inputField = named && isInputObjectType(named) ? named.getFields()[field] : undefined;
    type = inputField?.type;
    defaultValue = inputField?.defaultValue;
  }
  return defaultValue;
}

/** The conditional request of docs/decisions.md ("Conditional requests"). */
const IF_NONE_MATCH: ParameterObject = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    '받은 ETag를 다시 보내면, 바뀌지 않은 응답은 본문 없이 304입니다. / An ETag received before: an unchanged answer is 304 with no body.',
  schema: { type: 'string' },
};

// ---------------------------------------------------------------------------------------------
// Response data (the row's GraphQL operation walked against the schema)

/** The 200 answer of a row: the envelope whose `data` is the part of the operation's result the row picks. */
function successResponse(endpoint: Endpoint, schema: GraphQLSchema): ResponseObject {
  return jsonResponse('OK', envelopeSchema(200, dataSchema(endpoint, schema)), SUCCESS_HEADERS);
}

/** The JSON Schema of `data`: the operation's result schema, narrowed to the root field `data()` picks. */
function dataSchema(endpoint: Endpoint, schema: GraphQLSchema): JsonSchema {
  const document = parse(endpoint.operation);
  const errors = validate(schema, document);
  if (errors.length > 0)
    throw new Error(`${endpoint.path}: its operation does not match the schema: ${errors.map((e) => e.message).join('; ')}`);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const queryType = schema.getQueryType();
  if (!operation || !queryType) throw new Error(`${endpoint.path}: no query operation`);
  const fragments = new Map(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
  const result = objectSchema(queryType, operation.selectionSet, fragments);
  const fields = result.properties as Record<string, JsonSchema>;
  const picked = fields[pickedField(endpoint, Object.keys(fields))];
  if (!picked) throw new Error(`${endpoint.path}: data() picked no root field`);
  // The root field's description speaks of GraphQL arguments, not of this answer.
  const { description: _graphqlOnly, ...data } = picked;
  return data;
}

/**
 * Which root field of the result the row's `data()` returns, found by handing it a result whose
 * every root field is a distinct marker.
 */
function pickedField(endpoint: Endpoint, keys: readonly string[]): string {
  const markers = new Map(keys.map((key) => [key, Symbol(key)]));
  const picked = endpoint.data(Object.fromEntries([...markers].map(([key, marker]) => [key, marker])));
  const key = keys.find((k) => markers.get(k) === picked);
  if (key === undefined) throw new Error(`${endpoint.path}: data() must return one root field of its operation`);
  return key;
}

/** An object type's selected fields: one property per response key, all required, nothing else. */
function objectSchema(
  type: GraphQLObjectType,
  selectionSet: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [key, node] of selectedFields(type, selectionSet, fragments)) {
    properties[key] = fieldSchema(type, node, fragments);
  }
  return { type: 'object', title: type.name, properties, required: Object.keys(properties), additionalProperties: false };
}

function fieldSchema(parent: GraphQLObjectType, node: FieldNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>): JsonSchema {
  if (node.name.value === '__typename') return { type: 'string', const: parent.name };
  const field = parent.getFields()[node.name.value];
  if (!field) throw new Error(`${parent.name} has no field ${node.name.value}`);
  const schema = outputSchema(field.type, node.selectionSet, fragments);
  return field.description ? { description: field.description, ...schema } : schema;
}

/** The fields a selection set asks of `type`, by response key, fragments included. */
function selectedFields(
  type: GraphQLObjectType,
  selectionSet: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  into = new Map<string, FieldNode>(),
): Map<string, FieldNode> {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      const key = selection.alias?.value ?? selection.name.value;
      into.set(key, mergeFields(into.get(key), selection));
      continue;
    }
    const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments.get(selection.name.value) : selection;
    if (!fragment) throw new Error(`unknown fragment in the selection of ${type.name}`);
    const condition = fragment.typeCondition?.name.value ?? type.name;
    if (condition !== type.name)
      throw new Error(`fragments on ${condition} inside ${type.name} are not described (no interfaces or unions)`);
    selectedFields(type, fragment.selectionSet, fragments, into);
  }
  return into;
}

/** The same response key selected twice (validation made sure it is the same field): one field, both selections. */
function mergeFields(earlier: FieldNode | undefined, later: FieldNode): FieldNode {
  if (!earlier?.selectionSet || !later.selectionSet) return later;
  return {
    ...later,
    selectionSet: { ...later.selectionSet, selections: [...earlier.selectionSet.selections, ...later.selectionSet.selections] },
  };
}

/** GraphQL's nullability, lists, objects, enums and scalars as JSON Schema. */
function outputSchema(
  type: GraphQLOutputType,
  selectionSet: SelectionSetNode | undefined,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): JsonSchema {
  if (isNonNullType(type)) return nonNullSchema(type.ofType, selectionSet, fragments);
  return nullable(nonNullSchema(type, selectionSet, fragments));
}

function nonNullSchema(
  type: GraphQLOutputType,
  selectionSet: SelectionSetNode | undefined,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): JsonSchema {
  if (isNonNullType(type)) return nonNullSchema(type.ofType, selectionSet, fragments);
  if (isListType(type)) return { type: 'array', items: outputSchema(type.ofType, selectionSet, fragments) };
  if (isObjectType(type) && selectionSet) return objectSchema(type, selectionSet, fragments);
  if (isEnumType(type)) return { type: 'string', title: type.name, enum: type.getValues().map((value) => value.name) };
  if (isScalarType(type)) {
    const scalar = SCALARS[type.name];
    if (!scalar) throw new Error(`The OpenAPI document has no JSON Schema for the scalar ${type.name}; add it to SCALARS`);
    return scalar;
  }
  throw new Error(`The OpenAPI document cannot describe ${type.toString()} (interfaces and unions are not used by REST operations)`);
}

/**
 * The JSON Schema of each scalar. Long is a 64-bit integer sent as a JSON number and LocalDate a
 * YYYY-MM-DD date (schema/base.graphql); a new scalar must be added here or the build fails.
 */
const SCALARS: Readonly<Record<string, JsonSchema>> = {
  Int: { type: 'integer', format: 'int32' },
  Float: { type: 'number' },
  String: { type: 'string' },
  Boolean: { type: 'boolean' },
  ID: { type: 'string' },
  Long: { type: 'integer', format: 'int64' },
  LocalDate: { type: 'string', format: 'date' },
  // An event's data (schema/changes.graphql): {before, after} in the REST shapes, or a batch's counts.
  JSON: {
    type: 'object',
    description:
      '{before, after} in the REST shapes (null for the side that does not exist), or for batch.completed {kind, summary, records, counts} (summary null without STUDENT_READ).',
  },
};

/** A schema that also allows null: `type` gains "null", an `enum` gains null. */
function nullable(schema: JsonSchema): JsonSchema {
  const { type, enum: values } = schema;
  if (type === undefined) return { anyOf: [schema, { type: 'null' }] };
  return {
    ...schema,
    type: [...(Array.isArray(type) ? type : [type]), 'null'],
    ...(Array.isArray(values) ? { enum: [...values, null] } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Envelope, headers and error responses

/** The envelope of docs/decisions.md ("Error envelope"): `{status, code, message, data}`, status named by src/errors/index.ts. */
function envelopeSchema(status: number, data: JsonSchema): JsonSchema {
  return {
    type: 'object',
    properties: {
      status: { type: 'string', const: statusName(status) },
      code: { type: 'integer', const: status },
      message: { type: 'string', description: status < 300 ? 'OK' : 'What went wrong, naming the parameter, scope or limit at fault.' },
      data,
    },
    required: ['status', 'code', 'message', 'data'],
    additionalProperties: false,
  };
}

type HeaderName = keyof typeof HEADERS;

const HEADERS = {
  ETag: {
    description: '응답 본문의 강한 ETag. / A strong entity tag of the exact body; send it back in If-None-Match to revalidate.',
    schema: { type: 'string', pattern: '^"[^"]+"$' },
  },
  'Cache-Control': {
    description: 'Data answers: `private, no-cache` (keep, but revalidate with the ETag); health: `no-store`.',
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'What is left of the key\'s budget: `"default";r=<remaining>;t=<seconds until the window resets>`.',
    schema: { type: 'string', pattern: '^"default";r=\\d+;t=\\d+$' },
  },
  'RateLimit-Policy': {
    description: 'The key\'s budget: `"default";q=<requests>;w=<window in seconds>`.',
    schema: { type: 'string', pattern: '^"default";q=\\d+;w=\\d+$' },
  },
  'X-RateLimit-Limit': { description: 'Requests per window (for older clients).', schema: { type: 'integer', minimum: 1 } },
  'X-RateLimit-Remaining': { description: 'Requests left in this window (for older clients).', schema: { type: 'integer', minimum: 0 } },
  'Retry-After': { description: '다시 시도하기까지의 초. / Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
  Allow: { description: 'The methods the path takes.', schema: { type: 'string' } },
  'X-Request-Id': { description: 'The request id, as the logs have it; quote it when reporting a problem.', schema: { type: 'string' } },
} as const satisfies Record<string, HeaderObject>;

const RATE_LIMIT_HEADERS: readonly HeaderName[] = ['RateLimit', 'RateLimit-Policy', 'X-RateLimit-Limit', 'X-RateLimit-Remaining'];
const SUCCESS_HEADERS: readonly HeaderName[] = ['ETag', 'Cache-Control', ...RATE_LIMIT_HEADERS];

interface StatusResponse {
  readonly status: number;
  readonly description: string;
  /** Headers the answer always carries (X-Request-Id is on every answer). */
  readonly headers: readonly HeaderName[];
  /** Headers it carries on some paths only. */
  readonly sometimes?: readonly HeaderName[];
  /** 304 has no body. */
  readonly noBody?: boolean;
  /** Answered by this endpoint only (410: a change-feed cursor past its retention). */
  readonly onlyFor?: string;
}

/**
 * Every status a data endpoint answers besides 200, along its pipeline (src/surfaces/data.ts:
 * time budget -> API key -> 304 held in memory -> rate limit -> scope -> handler): the rate-limit
 * headers are set once the key's budget is spent from, so 401 lacks them, and so does a 304
 * answered from memory (a 304 spends nothing; one computed anew shows the point given back).
 */
const STATUS_RESPONSES: readonly StatusResponse[] = [
  {
    status: 304,
    description:
      '바뀌지 않음: If-None-Match가 현재 ETag와 같습니다. 요청 한도를 쓰지 않습니다. / Not modified: If-None-Match holds the current ETag; no body, and the rate limit is not spent.',
    headers: ['ETag', 'Cache-Control'],
    sometimes: RATE_LIMIT_HEADERS,
    noBody: true,
  },
  {
    status: 400,
    description: '잘못된 매개변수. / A parameter is malformed, out of range, repeated or missing; the message names it and what it allows.',
    headers: RATE_LIMIT_HEADERS,
  },
  {
    status: 401,
    description: 'API 키가 없거나 잘못되었거나 만료됨. / The key is missing, not a UUID, unknown, revoked or expired.',
    headers: [],
  },
  {
    status: 403,
    description: "키에 이 엔드포인트의 범위(scope)가 없음. / The key lacks the endpoint's scope; the message names it.",
    headers: RATE_LIMIT_HEADERS,
  },
  {
    status: 404,
    description: '그런 프로젝트가 없음. / No project has this id.',
    headers: RATE_LIMIT_HEADERS,
    onlyFor: '/v1/public/projects/{id}',
  },
  {
    status: 405,
    description: '허용되지 않는 메서드. / Another method than GET or HEAD; Allow lists them (OPTIONS answers 204).',
    headers: ['Allow'],
  },
  {
    status: 410,
    description:
      '커서가 보관 기간(30일)보다 오래됨. / The cursor is older than the 30 days of events the feed keeps; read the data afresh, then follow the feed anew.',
    headers: RATE_LIMIT_HEADERS,
    onlyFor: '/v1/changes',
  },
  {
    status: 429,
    description: "요청 한도 초과. / The key's rate limit (or the address's failed-key limit) is spent; Retry-After says when to come back.",
    headers: ['Retry-After'],
    sometimes: RATE_LIMIT_HEADERS,
  },
  {
    status: 500,
    description: '서버 오류. / Internal server error; the cause is logged, never sent.',
    headers: [],
    sometimes: RATE_LIMIT_HEADERS,
  },
  {
    status: 503,
    description:
      '일시적으로 사용할 수 없음. / The database is unreachable, or the request outlived its time budget; Retry-After says when to retry.',
    headers: ['Retry-After'],
    sometimes: RATE_LIMIT_HEADERS,
  },
];

function errorResponse({ status, description, headers, sometimes = [], noBody }: StatusResponse): ResponseObject {
  if (noBody) return { description, headers: headerObjects(headers, sometimes) };
  return jsonResponse(description, envelopeSchema(status, { type: 'null' }), headers, sometimes);
}

function jsonResponse(
  description: string,
  schema: JsonSchema,
  headers: readonly HeaderName[],
  sometimes: readonly HeaderName[] = [],
): ResponseObject {
  return { description, headers: headerObjects(headers, sometimes), content: { [MEDIA_TYPE]: { schema } } };
}

/** The headers an answer carries: `required` when always sent (X-Request-Id is on every answer). */
function headerObjects(always: readonly HeaderName[], sometimes: readonly HeaderName[]): Record<string, HeaderObject> {
  return Object.fromEntries([
    ...['X-Request-Id' as const, ...always].map((name) => [name, { ...HEADERS[name], required: true }]),
    ...sometimes.map((name) => [name, { ...HEADERS[name], required: false }]),
  ]);
}
