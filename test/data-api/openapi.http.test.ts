import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'chai';
import {
  Kind,
  TypeInfo,
  getNamedType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  parse,
  visit,
  visitWithTypeInfo,
  type GraphQLOutputType,
  type OperationDefinitionNode,
} from 'graphql';
import { z } from 'zod';
import { addDays, todayIn } from '../../src/calendar.js';
import { API_SCOPES } from '../../src/data/keys/store.js';
import { pruneEvents } from '../../src/data/events/outbox.js';
import { CLI_ACTOR } from '../../src/data/school/types.js';
import { SchoolWriter } from '../../src/data/school/writes.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { statusName } from '../../src/errors/index.js';
import { buildSchema } from '../../src/graphql/schema.js';
import { createLogger } from '../../src/logger.js';
import { DEMO_DAYS_AFTER, DEMO_DAYS_BEFORE, seedDemoNeis } from '../../src/neis/seed.js';
import { ENDPOINTS, endpointScopes, isPublic, pathParameters, type Endpoint } from '../../src/rest/endpoints.js';
import {
  buildOpenApiDocument,
  type HeaderObject,
  type JsonSchema,
  type OpenApiDocument,
  type OperationObject,
  type Reference,
  type ResponseObject,
} from '../../src/rest/openapi.js';
import { enumParam, textParam } from '../../src/rest/params.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { issueKey } from '../helpers/factories.js';

/**
 * The OpenAPI document (GET /v1/openapi.json) against its sources and against the running app:
 * every row, parameter and enum value of the endpoint table and the GraphQL schema is in it, it
 * is structurally OpenAPI 3.1 with every $ref resolving, and real answers of every status
 * (demo school data for the 200s) validate against the schema and headers it gives that status.
 */

// ajv-formats is CommonJS whose default export is the plugin; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const PACKAGE_VERSION = z.object({ version: z.string() }).parse(JSON.parse(readFileSync('package.json', 'utf8'))).version;
/** The headers the document must account for whenever an answer carries them. */
const WATCHED_HEADERS = [
  'ETag',
  'Cache-Control',
  'RateLimit',
  'RateLimit-Policy',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'Retry-After',
  'Allow',
];

function newAjv(): Ajv2020 {
  // strict: an unknown keyword or a malformed schema in the document fails to compile.
  return addFormats(new Ajv2020({ strict: true, allErrors: true }));
}

/** Follows a local `$ref` (a JSON pointer into the document); throws when it does not resolve. */
function resolvePointer(doc: unknown, ref: string): unknown {
  expect(ref, 'only local references').to.match(/^#\//);
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof node !== 'object' || node === null || !(key in node)) throw new Error(`$ref ${ref} does not resolve`);
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function response(doc: OpenApiDocument, path: string, status: number): ResponseObject {
  const entry: ResponseObject | Reference | undefined = operationOf(doc, path).responses[String(status)];
  expect(entry, `${path} documents ${status}`).to.not.equal(undefined);
  return (entry && '$ref' in entry ? resolvePointer(doc, entry.$ref) : entry) as ResponseObject;
}

function operationOf(doc: OpenApiDocument, path: string): OperationObject {
  const item = doc.paths[path];
  expect(item, `path ${path}`).to.not.equal(undefined);
  return (item as { get: OperationObject }).get;
}

/** Every `$ref` anywhere in a value. */
function refsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => (key === '$ref' && typeof inner === 'string' ? [inner] : refsIn(inner)));
}

/** The query parameters of a row as zod sees them, independently of the document. */
function zodParameters(endpoint: Endpoint): Record<string, JsonSchema> {
  return z.toJSONSchema(endpoint.query, { io: 'input' }).properties as Record<string, JsonSchema>;
}

/** Every field an operation selects, with its GraphQL type, by its response path below the root field. */
function selectedFields(operation: string): { path: string[]; type: GraphQLOutputType }[] {
  const typeInfo = new TypeInfo(buildSchema());
  const document = parse(operation);
  const found: { path: string[]; type: GraphQLOutputType }[] = [];
  const stack: string[] = [];
  const fragmentPaths = new Map<string, string[][]>();
  // Fragments are visited where they are defined: first note the paths of the fields spreading each.
  visit(document, {
    Field: { enter: (node) => void stack.push(node.alias?.value ?? node.name.value), leave: () => void stack.pop() },
    FragmentSpread: (node) => void fragmentPaths.set(node.name.value, [...(fragmentPaths.get(node.name.value) ?? []), [...stack]]),
  });
  let prefixes: string[][] = [];
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      OperationDefinition: () => void (prefixes = [[]]),
      FragmentDefinition: (node) => void (prefixes = fragmentPaths.get(node.name.value) ?? []),
      Field: {
        enter(node) {
          stack.push(node.alias?.value ?? node.name.value);
          const type = typeInfo.getType();
          if (!type) throw new Error(`unknown field ${node.name.value}`);
          // Paths below the root field (the document's `data`); the root field itself is `data`.
          for (const prefix of prefixes) if (prefix.length + stack.length > 1) found.push({ path: [...prefix, ...stack].slice(1), type });
        },
        leave: () => void stack.pop(),
      },
    }),
  );
  return found;
}

/** The JSON types GraphQL's scalars are sent as (Long: a JSON number; LocalDate: a YYYY-MM-DD string). */
const SCALAR_JSON: Record<string, { type: string; format?: string }> = {
  Int: { type: 'integer' },
  Long: { type: 'integer', format: 'int64' },
  String: { type: 'string' },
  Boolean: { type: 'boolean' },
  LocalDate: { type: 'string', format: 'date' },
  // An event's data (schema/changes.graphql): always an object.
  JSON: { type: 'object' },
};

/** Asserts a JSON Schema says what a GraphQL type says: nullability, lists, objects, enum values, scalars. */
function expectDescribes(node: JsonSchema, type: GraphQLOutputType, where: string): void {
  const types = [node.type].flat();
  expect(types.includes('null'), `${where} is nullable exactly when the schema says`).to.equal(!isNonNullType(type));
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) {
    expect(types, where).to.include('array');
    expectDescribes(node.items as JsonSchema, inner.ofType, `${where}[]`);
  } else if (isObjectType(inner)) {
    expect(types, where).to.include('object');
    expect(node.additionalProperties, where).to.equal(false);
  } else if (isEnumType(inner)) {
    expect(node.enum, where).to.include.members(inner.getValues().map((v) => v.name));
  } else {
    const scalar = SCALAR_JSON[getNamedType(inner).name];
    expect(scalar, `${where}: a scalar this test knows`).to.not.equal(undefined);
    expect(types, where).to.include(scalar?.type);
    if (scalar?.format) expect(node.format, where).to.equal(scalar.format);
  }
}

/** Walks a JSON Schema along response keys, through arrays. */
function schemaAt(schema: JsonSchema, path: readonly string[]): JsonSchema {
  let node = schema;
  for (const key of path) {
    while (node.items) node = node.items as JsonSchema;
    const next = (node.properties as Record<string, JsonSchema> | undefined)?.[key];
    if (!next) throw new Error(`no property ${key} in the schema (path ${path.join('.')})`);
    node = next;
  }
  return node;
}

describe('data API: the OpenAPI document', () => {
  const doc = buildOpenApiDocument();

  it('is structurally OpenAPI 3.1: version, info (title, package version, Korean first), paths, components', () => {
    expect(doc.openapi).to.equal('3.1.0');
    expect(doc.info.title).to.be.a('string').and.not.equal('');
    expect(doc.info.version).to.equal(PACKAGE_VERSION);
    // Korean first, English after.
    expect(doc.info.description).to.match(/^[^A-Za-z]*[가-힣]/);
    expect(doc.info.description).to.match(/\n\nThe school's read-only data API/);
    expect(Object.keys(doc.paths).length).to.be.greaterThan(0);
    for (const [path, item] of Object.entries(doc.paths)) {
      expect(path).to.match(/^\/v1\//);
      expect(Object.keys(item)).to.deep.equal(['get']);
      const operation = item.get;
      expect(operation.operationId).to.match(/^get[A-Z]\w+$/);
      expect(Object.keys(operation.responses).length).to.be.greaterThan(0);
      for (const status of Object.keys(operation.responses)) expect(status).to.match(/^[1-5]\d\d$/);
    }
    const ids = Object.values(doc.paths).map((item) => item.get.operationId);
    expect(new Set(ids).size, 'operationIds are unique').to.equal(ids.length);
    expect(doc.components.securitySchemes.apiKey).to.include({ type: 'apiKey', in: 'header', name: 'X-API-KEY' });
    expect(doc.components.securitySchemes['machineToken']).to.include({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  });

  it('every $ref resolves, and every schema in it compiles as JSON Schema 2020-12 (strict)', () => {
    const refs = refsIn(doc);
    expect(refs.length).to.be.greaterThan(0);
    for (const ref of refs) expect(() => resolvePointer(doc, ref), ref).to.not.throw();
    const ajv = newAjv();
    let compiled = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const parameter of item.get.parameters) {
        ajv.compile(parameter.schema);
        compiled++;
      }
      for (const status of Object.keys(item.get.responses)) {
        const answer = response(doc, path, Number(status));
        for (const header of Object.values(answer.headers ?? {})) ajv.compile(header.schema);
        for (const media of Object.values(answer.content ?? {})) {
          ajv.compile(media.schema);
          compiled++;
        }
      }
    }
    expect(compiled).to.be.greaterThan(ENDPOINTS.length * 2);
  });

  it('has every path of the endpoint table with its scope, and /v1/health and /v1/status without a key', () => {
    expect(Object.keys(doc.paths).sort()).to.deep.equal([...ENDPOINTS.map((e) => e.path), '/v1/health', '/v1/status'].sort());
    for (const endpoint of ENDPOINTS) {
      const operation = operationOf(doc, endpoint.path);
      // The public project list takes no key.
      // A key or a machine token (src/oauth/machine-tokens.ts), each holding the endpoint's scope.
      const scopes = [...endpointScopes(endpoint)];
      expect(operation.security, endpoint.path).to.deep.equal(isPublic(endpoint) ? [] : [{ apiKey: scopes }, { machineToken: scopes }]);
      if (isPublic(endpoint)) expect(operation.description).to.include('No API key needed');
      // Korean first, then English (src/rest/openapi.ts `bilingual`).
      expect(operation.summary).to.equal(`${endpoint.summary.ko} / ${endpoint.summary.en}`);
      for (const scope of endpointScopes(endpoint)) expect(operation.description).to.include(scope);
    }
    expect(operationOf(doc, '/v1/health').security).to.deep.equal([]);
    expect(operationOf(doc, '/v1/status').security).to.deep.equal([]);
  });

  it("has every parameter of each row's zod schema, with its ranges, enums, formats, lengths and description", () => {
    for (const endpoint of ENDPOINTS) {
      const documented = new Map(operationOf(doc, endpoint.path).parameters.map((p) => [`${p.in} ${p.name}`, p]));
      const inPath = pathParameters(endpoint);
      for (const [name, { description, ko, ...schema }] of Object.entries(zodParameters(endpoint))) {
        const parameter = documented.get(`${inPath.includes(name) ? 'path' : 'query'} ${name}`);
        expect(parameter, `${endpoint.path} ${name}`).to.not.equal(undefined);
        expect(ko, `${endpoint.path} ${name}: a Korean description`).to.be.a('string');
        expect(parameter?.description, `${endpoint.path} ${name}`).to.equal(`${String(ko)} / ${String(description)}`);
        const { default: _default, ...documentedSchema } = parameter?.schema ?? {};
        expect(documentedSchema, `${endpoint.path} ${name}`).to.deep.equal(schema);
      }
      const queryNames = [...documented.values()].filter((p) => p.in === 'query').map((p) => p.name);
      expect(queryNames, endpoint.path).to.deep.equal(Object.keys(zodParameters(endpoint)).filter((name) => !inPath.includes(name)));
      expect(documented.get('header If-None-Match'), endpoint.path).to.not.equal(undefined);
    }
  });

  it('has every enum value: of the parameters, and of every enum field the operations select', () => {
    let enums = 0;
    for (const endpoint of ENDPOINTS) {
      const parameters = new Map(operationOf(doc, endpoint.path).parameters.map((p) => [p.name, p]));
      for (const [name, schema] of Object.entries(zodParameters(endpoint))) {
        if (!Array.isArray(schema.enum)) continue;
        expect(parameters.get(name)?.schema.enum, `${endpoint.path} ${name}`).to.deep.equal(schema.enum);
        enums++;
      }
      const data = (response(doc, endpoint.path, 200).content?.['application/json']?.schema.properties as Record<string, JsonSchema>).data;
      expect(data).to.be.an('object');
      for (const field of selectedFields(endpoint.operation)) {
        const named = getNamedType(field.type);
        if (!isEnumType(named)) continue;
        const documented = schemaAt(data as JsonSchema, field.path).enum as unknown[];
        expect(documented, `${endpoint.path} ${field.path.join('.')}`).to.include.members(named.getValues().map((v) => v.name));
        enums++;
      }
    }
    // Students alone have sex, role, major, sortBy, sortDirection parameters and enum fields.
    expect(enums).to.be.greaterThan(20);
  });

  it('describes every field each operation selects: required, nullable where the schema says, lists, objects, enums, Long, LocalDate', () => {
    let fields = 0;
    for (const endpoint of ENDPOINTS) {
      const data = (response(doc, endpoint.path, 200).content?.['application/json']?.schema.properties as Record<string, JsonSchema>).data;
      for (const field of selectedFields(endpoint.operation)) {
        const where = `${endpoint.path} data.${field.path.join('.')}`;
        const parent = schemaAt(data as JsonSchema, field.path.slice(0, -1));
        const object = parent.items ? (parent.items as JsonSchema) : parent;
        expect(object.required, `${where} is always sent`).to.include(field.path.at(-1));
        expectDescribes(schemaAt(data as JsonSchema, field.path), field.type, where);
        fields++;
      }
    }
    expect(fields).to.be.greaterThan(60);
  });

  it('derives required parameters and defaults from the rows and the GraphQL schema', () => {
    const parameter = (path: string, name: string) => operationOf(doc, path).parameters.find((p) => p.name === name);
    const required = Object.fromEntries(
      ENDPOINTS.map((e) => [
        e.path,
        operationOf(doc, e.path)
          .parameters.filter((p) => p.required)
          .map((p) => p.name),
      ]),
    );
    expect(required).to.deep.equal({
      '/v1/students': [],
      '/v1/clubs': [],
      '/v1/projects': [],
      '/v1/neis/meals': [],
      '/v1/neis/schedules': [],
      '/v1/neis/timetables': ['grade', 'classNum'],
      '/v1/changes': [],
      '/v1/public/projects': [],
      '/v1/public/projects/{id}': ['id'],
    });
    // Defaults of src/limits.ts (through the schema), of the schema's inputs, and of a row itself.
    expect(parameter('/v1/students', 'size')?.schema.default).to.equal(300);
    expect(parameter('/v1/clubs', 'size')?.schema.default).to.equal(100);
    expect(parameter('/v1/projects', 'page')?.schema.default).to.equal(0);
    expect(parameter('/v1/students', 'sortDirection')?.schema.default).to.equal('ASC');
    expect(parameter('/v1/students', 'includeGraduates')?.schema.default).to.equal(false);
    expect(parameter('/v1/clubs', 'includeLeaderInParticipants')?.schema.default).to.equal(false);
    expect(parameter('/v1/neis/meals', 'date')?.schema).to.not.have.property('default');
  });

  it('gives every data endpoint every status it can answer, in the envelope with the status names of src/errors', () => {
    for (const endpoint of ENDPOINTS) {
      const path = endpoint.path;
      // 410 only where a cursor can outlive its events (the change feed); 404 where a path names a
      // record; 401 and 403 only where a key is needed.
      const gone = path === '/v1/changes' ? [410] : path === '/v1/public/projects/{id}' ? [404] : [];
      const keyed = isPublic(endpoint) ? [] : [401, 403];
      expect(Object.keys(operationOf(doc, path).responses), path).to.have.members([
        '200',
        '304',
        '400',
        ...keyed.map(String),
        '405',
        ...gone.map(String),
        '429',
        '500',
        '503',
      ]);
      for (const status of [400, ...keyed, 405, ...gone, 429, 500, 503]) {
        const properties = response(doc, path, status).content?.['application/json']?.schema.properties as Record<string, JsonSchema>;
        expect(properties.status, `${path} ${status}`).to.deep.equal({ type: 'string', const: statusName(status) });
        expect(properties.code).to.deep.equal({ type: 'integer', const: status });
        expect(properties.data).to.deep.equal({ type: 'null' });
      }
      expect(response(doc, path, 304).content, '304 has no body').to.equal(undefined);
      expect(response(doc, path, 304).headers).to.include.keys('ETag');
      expect(response(doc, path, 429).headers?.['Retry-After']?.required).to.equal(true);
      expect(response(doc, path, 503).headers?.['Retry-After']?.required).to.equal(true);
    }
    expect(Object.keys(operationOf(doc, '/v1/health').responses)).to.have.members(['200', '503', '405']);
  });

  it('follows the rows: a new row, parameter or enum appears without touching the document code', () => {
    const [students] = ENDPOINTS;
    if (!students) throw new Error('no rows');
    const row: Endpoint = {
      ...students,
      path: '/v1/pupils',
      query: students.query.extend({
        nickname: textParam().optional().describe('A nickname.'),
        mood: enumParam(['CALM', 'BUSY']).optional().describe('Mood.'),
      }),
    };
    const changed = buildOpenApiDocument([row]);
    const parameters = operationOf(changed, '/v1/pupils').parameters;
    expect(parameters.find((p) => p.name === 'nickname')).to.deep.equal({
      name: 'nickname',
      in: 'query',
      required: false,
      description: 'A nickname.',
      schema: { type: 'string', maxLength: 100 },
    });
    expect(parameters.find((p) => p.name === 'mood')?.schema).to.deep.equal({ type: 'string', enum: ['CALM', 'BUSY'] });
    expect(Object.keys(changed.paths)).to.deep.equal(['/v1/pupils', '/v1/health', '/v1/status']);
  });

  it("follows the operation: its selection is `data`, its variables' defaults are the parameters' defaults", () => {
    const [students] = ENDPOINTS;
    if (!students) throw new Error('no rows');
    const operation = students.operation.replace('$size: Int', '$size: Int = 7').replace(/^\s*githubUrl\n/m, '');
    expect(operation).to.not.equal(students.operation);
    const changed = buildOpenApiDocument([{ ...students, operation }]);
    const size = operationOf(changed, students.path).parameters.find((p) => p.name === 'size');
    expect(size?.schema.default).to.equal(7);
    const data = (response(changed, students.path, 200).content?.['application/json']?.schema.properties as Record<string, JsonSchema>)
      .data;
    const student = schemaAt(data as JsonSchema, ['students']).items as JsonSchema;
    expect(student.properties).to.include.keys('githubId').and.not.have.property('githubUrl');
    expect(student.required).to.not.include('githubUrl');
  });
});

describe('data API: OpenAPI served, and real answers validate against it', function () {
  this.timeout(120000);
  let t: TestApp;
  let key: string;
  let served: OpenApiDocument;
  const ajv = newAjv();
  const validators = new Map<string, ValidateFunction>();

  before(async () => {
    t = await buildTestApp('openapi');
    await seedDemoSchool(t.db);
    await seedDemoNeis(t.db, t.config, createLogger('silent'));
    key = await issueKey(t.db, { rateLimit: { points: 100_000, durationSeconds: 60 } });
    const res = await t.request('/v1/openapi.json');
    served = (await res.json()) as OpenApiDocument;
  });
  after(() => t.close());

  /** A 200 query that returns the demo school's data, nulls included. */
  function richQuery(endpoint: Endpoint): string {
    const today = todayIn(t.config.schoolTimeZone, new Date());
    const parameters = operationOf(served, endpoint.path).parameters;
    const query = new URLSearchParams();
    for (const p of parameters.filter((p) => p.required)) query.set(p.name, String(p.schema.minimum ?? (p.schema.enum as unknown[])[0]));
    const names = new Set(parameters.map((p) => p.name));
    if (names.has('fromDate')) {
      query.set('fromDate', addDays(today, -DEMO_DAYS_BEFORE));
      query.set('toDate', addDays(today, DEMO_DAYS_AFTER));
    }
    // Graduates and withdrawn students have null grades and majors.
    for (const flag of ['includeGraduates', 'includeWithdrawn']) if (names.has(flag)) query.set(flag, 'true');
    if (names.has('size')) query.set('size', '1000');
    return query.size ? `?${query}` : '';
  }

  /** Asserts the answer's body and headers are what the document says for its status. */
  async function expectDocumented(res: Response, path: string, status: number): Promise<unknown> {
    expect(res.status, `${path} answered`).to.equal(status);
    const documented = response(served, path, status);
    const text = await res.text();
    const schema = documented.content?.['application/json']?.schema;
    let body: unknown;
    if (schema) {
      body = JSON.parse(text);
      const id = `${path} ${status}`;
      const validate = validators.get(id) ?? ajv.compile(schema);
      validators.set(id, validate);
      expect(validate(body), `${id}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
    } else {
      expect(text, `${path} ${status} has no body`).to.equal('');
    }
    expectHeaders(res, documented.headers ?? {}, `${path} ${status}`);
    return body;
  }

  function expectHeaders(res: Response, headers: Record<string, HeaderObject>, what: string): void {
    for (const [name, header] of Object.entries(headers)) {
      const value = res.headers.get(name);
      if (header.required) expect(value, `${what}: header ${name}`).to.be.a('string');
      if (value === null) continue;
      const validate = ajv.compile(header.schema);
      const typed = header.schema.type === 'integer' ? Number(value) : value;
      expect(validate(typed), `${what}: header ${name}: ${value}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
    }
    for (const name of WATCHED_HEADERS) {
      if (res.headers.has(name)) expect(headers, `${what}: header ${name} is documented`).to.have.property(name);
    }
  }

  it('GET /v1/openapi.json: no key, public for five minutes, revalidated by its ETag; the document of the rows', async () => {
    const res = await t.request('/v1/openapi.json');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).to.equal('public, max-age=300');
    expect(await res.json()).to.deep.equal(JSON.parse(JSON.stringify(buildOpenApiDocument())));
    const etag = res.headers.get('etag') ?? '';
    expect(etag).to.match(/^"[\w-]+"$/);
    // As a browser revalidates (fetch() would add `Cache-Control: no-cache`, an end-to-end reload).
    const again = await t.request('/v1/openapi.json', { headers: { 'If-None-Match': etag, 'Cache-Control': 'max-age=0' } });
    expect(again.status).to.equal(304);
    expect((await t.request('/v1/openapi.json', { method: 'POST' })).status).to.equal(405);
  });

  for (const endpoint of ENDPOINTS.filter((e) => !isPublic(e))) {
    it(`${endpoint.path}: 200 (demo data), 304, 400, 401, 403 and 405 answers match the document`, async () => {
      const path = endpoint.path;
      // The change feed has events once the school changes (an admin's edit through the one write path).
      if (path === '/v1/changes') await new SchoolWriter(t.db, CLI_ACTOR).updateProject(1, { description: 'Changed for the feed' });
      const ok = await t.request(`${path}${richQuery(endpoint)}`, { headers: { 'X-API-KEY': key } });
      const body = (await expectDocumented(ok, path, 200)) as { data: unknown };
      const records = Array.isArray(body.data) ? body.data : Object.values(body.data as object).find(Array.isArray);
      expect(records, `${path} answered demo records`).to.have.length.greaterThan(0);

      const etag = ok.headers.get('etag') ?? '';
      await expectDocumented(
        await t.request(`${path}${richQuery(endpoint)}`, { headers: { 'X-API-KEY': key, 'If-None-Match': etag } }),
        path,
        304,
      );
      // Every parser refuses a repeated parameter.
      const [first] = Object.keys(zodParameters(endpoint));
      await expectDocumented(await t.request(`${path}?${first}=1&${first}=2`, { headers: { 'X-API-KEY': key } }), path, 400);
      await expectDocumented(await t.request(path), path, 401);
      const without = await issueKey(t.db, { scopes: API_SCOPES.filter((s) => !endpointScopes(endpoint).includes(s)) });
      await expectDocumented(await t.request(path, { headers: { 'X-API-KEY': without } }), path, 403);
      await expectDocumented(await t.request(path, { method: 'POST', headers: { 'X-API-KEY': key } }), path, 405);
      if (path === '/v1/changes') {
        // Past the retention: a later change prunes the events, and the old cursor is 410.
        await pruneEvents(t.db, new Date(Date.now() + 31 * 24 * 3600 * 1000));
        await expectDocumented(await t.request(`${path}?after=0`, { headers: { 'X-API-KEY': key } }), path, 410);
      }
    });
  }

  // The endpoints without a key (test/data-api/public-projects.http.test.ts has their 429 per address).
  for (const endpoint of ENDPOINTS.filter(isPublic)) {
    it(`${endpoint.path}: 200 (demo data), 304, 400 and 405 answers without a key match the document`, async () => {
      const path = endpoint.path;
      const at = (id: string) => path.replace('{id}', id);
      const ok = await t.request(at('1'));
      const body = (await expectDocumented(ok, path, 200)) as { data: unknown };
      expect(body.data).to.be.an('object');
      const etag = ok.headers.get('etag') ?? '';
      await expectDocumented(await t.request(at('1'), { headers: { 'If-None-Match': etag } }), path, 304);
      await expectDocumented(await t.request(path.includes('{id}') ? at('x') : `${path}?page=-1`), path, 400);
      await expectDocumented(await t.request(at('1'), { method: 'POST' }), path, 405);
      if (path.includes('{id}')) await expectDocumented(await t.request(at('999999')), path, 404);
    });
  }

  it('429 answers of every endpoint with a key match the document', async () => {
    const spent = await issueKey(t.db, { rateLimit: { points: 1, durationSeconds: 600 } });
    await t.request('/v1/students?size=1', { headers: { 'X-API-KEY': spent } });
    for (const { path } of ENDPOINTS.filter((e) => !isPublic(e)))
      await expectDocumented(await t.request(path, { headers: { 'X-API-KEY': spent } }), path, 429);
  });

  it('/v1/health answers match the document', async () => {
    await expectDocumented(await t.request('/v1/health'), '/v1/health', 200);
    await expectDocumented(await t.request('/v1/health', { method: 'DELETE' }), '/v1/health', 405);
  });

  it('/v1/status answers match the document', async () => {
    const answer = await t.request('/v1/status');
    const etag = answer.headers.get('etag') ?? '';
    await expectDocumented(answer, '/v1/status', 200);
    await expectDocumented(await t.request('/v1/status', { headers: { 'If-None-Match': etag } }), '/v1/status', 304);
    await expectDocumented(await t.request('/v1/status', { method: 'DELETE' }), '/v1/status', 405);
  });
});

/** The single root field every REST operation has (the walk above strips it). */
describe("data API: the OpenAPI tests' premises", () => {
  it('every row runs an operation with one root field', () => {
    for (const endpoint of ENDPOINTS) {
      const operation = parse(endpoint.operation).definitions.find(
        (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
      );
      expect(operation?.selectionSet.selections, endpoint.path).to.have.length(1);
    }
  });
});
