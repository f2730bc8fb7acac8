import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { envSchema } from '../src/config/index.js';
import { EVENT_TYPES, eventTypeRow } from '../src/data/events/types.js';
import { ENDPOINTS, endpointScopes } from '../src/rest/endpoints.js';
import { buildOpenApiDocument, type JsonSchema, type OpenApiDocument, type ParameterObject } from '../src/rest/openapi.js';

/**
 * `npm run docs`: writes the reference tables that a table in the code already holds, so that no
 * table is written twice:
 * - docs/data-api.md: each endpoint's parameter table, between `<!-- endpoint-table:/v1/... -->`
 *   and `<!-- /endpoint-table -->` in the endpoint's own section, from the OpenAPI document
 *   (src/rest/openapi.ts), itself built from the endpoint table (src/rest/endpoints.ts); a row
 *   without a section yet gets one, with its summary and table, between `<!-- new-endpoints -->`
 *   and `<!-- /new-endpoints -->` (so adding a row needs no edit here); and the event types, between
 *   `<!-- event-types -->` and `<!-- /event-types -->`, from their table (src/data/events/types.ts);
 * - docs/configuration.md: every environment variable, between `<!-- configuration -->` and
 *   `<!-- /configuration -->`, with its default, values and description from the config schema
 *   (src/config/index.ts);
 * - docs/operations.md: the nginx site configuration, between `<!-- nginx-site -->` and
 *   `<!-- /nginx-site -->`, copied from deploy/nginx/campus.conf (the file the restart test runs).
 * Unit tests (test/data-api/docs-tables.unit.test.ts,
 * test/operations/configuration-doc.unit.test.ts, test/operations/nginx-doc.unit.test.ts) fail
 * when a page differs from what this writes.
 * (The file keeps its first name: package.json's `docs` script and src/rest/openapi.ts cite it.)
 */

const DATA_API = fileURLToPath(new URL('../docs/data-api.md', import.meta.url));
const CONFIGURATION = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
const OPERATIONS = fileURLToPath(new URL('../docs/operations.md', import.meta.url));
export const NGINX_SITE = fileURLToPath(new URL('../deploy/nginx/campus.conf', import.meta.url));
const TABLE = /(<!-- endpoint-table:(\S+) -->\n)[\s\S]*?(<!-- \/endpoint-table -->)/g;
const EVENTS = /(<!-- event-types -->\n)[\s\S]*?(<!-- \/event-types -->)/g;
const NEW_ENDPOINTS = /(<!-- new-endpoints -->\n)[\s\S]*?(<!-- \/new-endpoints -->)/g;
const VARIABLES = /(<!-- configuration -->\n)[\s\S]*?(<!-- \/configuration -->)/g;
const NGINX = /(<!-- nginx-site -->\n)[\s\S]*?(<!-- \/nginx-site -->)/g;

/** docs/data-api.md with every endpoint table and the event-type table rewritten; throws when a row has no table or a table no row. */
export function renderDataApi(
  page: string,
  document: OpenApiDocument = buildOpenApiDocument(),
  paths: readonly string[] = ENDPOINTS.map((e) => e.path),
): string {
  const seen = new Set<string>();
  const rendered = page.replace(TABLE, (_whole, open: string, path: string, close: string) => {
    const parameters = document.paths[path]?.get.parameters;
    if (!parameters || !paths.includes(path))
      throw new Error(`docs/data-api.md has a table for ${path}, which is no row of src/rest/endpoints.ts`);
    seen.add(path);
    return `${open}${parameterTable(parameters.filter((p) => p.in === 'query'))}${close}`;
  });
  const unplaced = paths.filter((path) => !seen.has(path));
  if ((rendered.match(NEW_ENDPOINTS) ?? []).length !== 1) {
    throw new Error('docs/data-api.md needs exactly one <!-- new-endpoints --> <!-- /new-endpoints --> pair, for rows without a section');
  }
  if ((rendered.match(EVENTS) ?? []).length !== 1) {
    throw new Error(
      'docs/data-api.md needs exactly one event-type table: <!-- event-types --> and <!-- /event-types --> in its change-feed section',
    );
  }
  return rendered
    .replace(EVENTS, (_whole, open: string, close: string) => `${open}${eventTypeTable()}${close}`)
    .replace(
      NEW_ENDPOINTS,
      (_whole, open: string, close: string) => `${open}${unplaced.map((path) => newEndpointSection(path, document)).join('\n')}${close}`,
    );
}

/** A section for an endpoint that has none of its own yet: its path and scope, its summary, its parameters. */
function newEndpointSection(path: string, document: OpenApiDocument): string {
  const operation = document.paths[path]?.get;
  const endpoint = ENDPOINTS.find((row) => row.path === path);
  const scopes = endpoint ? endpointScopes(endpoint) : [];
  const scope = scopes.length > 0 ? ` (scope ${scopes.map((s) => `\`${s}\``).join(' or ')})` : ' (no key)';
  const parameters = (operation?.parameters ?? []).filter((p) => p.in === 'query');
  return `### GET ${path}${scope}\n\n${endpoint?.summary.en ?? ''}\n\n${parameters.length > 0 ? parameterTable(parameters) : 'No query parameters.\n'}`;
}

/** A Markdown table of the event types: type, the scope that receives it (and its lesser form), description. */
export function eventTypeTable(): string {
  const rows = EVENT_TYPES.map((type) => {
    const row = eventTypeRow(type);
    const partial = row.partial
      ? `; without it, with ${row.partial.scopes.map((scope) => `\`${scope}\``).join(' or ')}: ${row.partial.shows}`
      : '';
    return [`\`${type}\``, `\`${row.scope}\`${partial}`, row.description].map(escapeCell);
  });
  return markdownTable(['Type', 'Scope', 'When, and its `data`'], rows);
}

/** A Markdown table: name, type or values, range, default (or "required"), description. */
export function parameterTable(parameters: readonly ParameterObject[]): string {
  const rows = parameters.map((p) =>
    [`\`${p.name}\``, typeCell(p.schema), rangeCell(p.schema), defaultCell(p), p.description ?? ''].map(escapeCell),
  );
  return markdownTable(['Parameter', 'Type / values', 'Range', 'Default', 'Description'], rows);
}

/** docs/configuration.md with its table of variables rewritten; throws unless the page has exactly one. */
export function renderConfiguration(page: string, shape: Readonly<Record<string, z.core.$ZodType>> = envSchema.shape): string {
  if ((page.match(VARIABLES) ?? []).length !== 1) {
    throw new Error('docs/configuration.md needs exactly one table of variables: <!-- configuration --> and <!-- /configuration -->');
  }
  return page.replace(VARIABLES, (_whole, open: string, close: string) => `${open}${configurationTable(shape)}${close}`);
}

/** docs/operations.md with the nginx site configuration copied in as a code block; throws unless the page has exactly one place for it. */
export function renderOperations(page: string, site: string = readFileSync(NGINX_SITE, 'utf8')): string {
  if ((page.match(NGINX) ?? []).length !== 1) {
    throw new Error('docs/operations.md needs exactly one place for the nginx configuration: <!-- nginx-site --> and <!-- /nginx-site -->');
  }
  return page.replace(NGINX, (_whole, open: string, close: string) => `${open}\`\`\`nginx\n${site}\`\`\`\n${close}`);
}

/** A Markdown table of the environment variables, in the schema's order: name, default, values, description. */
export function configurationTable(shape: Readonly<Record<string, z.core.$ZodType>> = envSchema.shape): string {
  const rows = Object.entries(shape).map(([name, schema]) => {
    const description = z.globalRegistry.get(schema)?.description;
    if (!description) throw new Error(`${name} has no description: give it .describe('...') in src/config/index.ts`);
    return [`\`${name}\``, variableDefault(schema), variableValues(schema), description].map(escapeCell);
  });
  return markdownTable(['Variable', 'Default', 'Values', 'Meaning'], rows);
}

/** The value a variable takes when unset, as the schema declares it (`.default` or `.prefault`); "unset" when it has none. */
function variableDefault(schema: z.core.$ZodType): string {
  const value = declaredDefault(schema);
  if (value === undefined) return 'unset';
  const text = String(value);
  return text === '' ? 'empty' : `\`${text}\``;
}

function declaredDefault(schema: z.core.$ZodType): unknown {
  if (schema instanceof z.core.$ZodDefault || schema instanceof z.core.$ZodPrefault) return schema._zod.def.defaultValue;
  if (schema instanceof z.core.$ZodPipe) return declaredDefault(schema._zod.def.in);
  return undefined;
}

/** The values the schema allows, where it lists them: an enum's names, an integer's range. */
function variableValues(schema: z.core.$ZodType): string {
  const inner = innermost(schema);
  if (inner instanceof z.ZodEnum) return inner.options.map((option) => `\`${String(option)}\``).join(', ');
  if (inner instanceof z.ZodNumber && inner.minValue !== null && inner.maxValue !== null) {
    return `${number(inner.minValue)} to ${number(inner.maxValue)}`;
  }
  return '';
}

/** The schema a variable's text is first read by, under its default, optionality and transforms. */
function innermost(schema: z.core.$ZodType): z.core.$ZodType {
  if (schema instanceof z.core.$ZodDefault || schema instanceof z.core.$ZodPrefault || schema instanceof z.core.$ZodOptional) {
    return innermost(schema._zod.def.innerType);
  }
  if (schema instanceof z.core.$ZodPipe) return innermost(schema._zod.def.in);
  return schema;
}

function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |\n`).join('');
}

function typeCell(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => `\`${String(value)}\``).join(', ');
  if (schema.type === 'boolean') return '`true`, `false`';
  if (schema.format === 'date') return 'date, `YYYY-MM-DD`';
  if (schema.type === 'string') return 'text';
  return String(schema.type);
}

function rangeCell(schema: JsonSchema): string {
  if (typeof schema.maxLength === 'number') return `at most ${number(schema.maxLength)} characters`;
  if (typeof schema.minimum !== 'number') return '';
  // Ids go up to the largest integer a JSON number holds exactly: no bound worth writing.
  if (schema.maximum === undefined || schema.maximum === Number.MAX_SAFE_INTEGER) return `at least ${number(schema.minimum)}`;
  return `${number(schema.minimum)} to ${number(Number(schema.maximum))}`;
}

function defaultCell(parameter: ParameterObject): string {
  if (parameter.required) return 'required';
  return parameter.schema.default === undefined ? '' : `\`${String(parameter.schema.default)}\``;
}

function number(value: number): string {
  return value.toLocaleString('en-US');
}

function escapeCell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

/** One generated page: where it lives, how it is rendered, and what the tables hold (for the message). */
const PAGES = [
  {
    file: DATA_API,
    name: 'docs/data-api.md',
    render: (page: string) => renderDataApi(page),
    holds: `${ENDPOINTS.length} parameter tables and the event-type table`,
  },
  {
    file: CONFIGURATION,
    name: 'docs/configuration.md',
    render: (page: string) => renderConfiguration(page),
    holds: `${Object.keys(envSchema.shape).length} variables`,
  },
  {
    file: OPERATIONS,
    name: 'docs/operations.md',
    render: (page: string) => renderOperations(page),
    holds: 'the nginx configuration of deploy/nginx/campus.conf',
  },
] as const;

function main(): void {
  for (const { file, name, render, holds } of PAGES) {
    const page = readFileSync(file, 'utf8');
    const rendered = render(page);
    if (rendered === page) {
      console.log(`${name}: ${holds}, already up to date.`);
      continue;
    }
    writeFileSync(file, rendered);
    console.log(`${name}: ${holds} written.`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
