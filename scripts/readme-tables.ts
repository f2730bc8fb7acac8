import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { EVENT_TYPES, eventTypeRow } from '../src/data/events/types.js';
import { ENDPOINTS } from '../src/rest/endpoints.js';
import { buildOpenApiDocument, type JsonSchema, type OpenApiDocument, type ParameterObject } from '../src/rest/openapi.js';

/**
 * `npm run docs`: writes each endpoint's parameter table into README.md, between
 * `<!-- endpoint-table:/v1/... -->` and `<!-- /endpoint-table -->`, from the OpenAPI document
 * (src/rest/openapi.ts), itself built from the endpoint table (src/rest/endpoints.ts); and the
 * event types, between `<!-- event-types -->` and `<!-- /event-types -->`, from their table
 * (src/data/events/types.ts). A unit test (test/unit/readme-tables.test.ts) fails when README.md
 * differs from what this writes.
 */

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const TABLE = /(<!-- endpoint-table:(\S+) -->\n)[\s\S]*?(<!-- \/endpoint-table -->)/g;
const EVENTS = /(<!-- event-types -->\n)[\s\S]*?(<!-- \/event-types -->)/g;

/** README text with every endpoint table and the event-type table rewritten; throws when a row has no table or a table no row. */
export function renderReadme(
  readme: string,
  document: OpenApiDocument = buildOpenApiDocument(),
  paths: readonly string[] = ENDPOINTS.map((e) => e.path),
): string {
  const seen = new Set<string>();
  const rendered = readme.replace(TABLE, (_whole, open: string, path: string, close: string) => {
    const parameters = document.paths[path]?.get.parameters;
    if (!parameters || !paths.includes(path))
      throw new Error(`README.md has a table for ${path}, which is no row of src/rest/endpoints.ts`);
    seen.add(path);
    return `${open}${parameterTable(parameters.filter((p) => p.in === 'query'))}${close}`;
  });
  const missing = paths.filter((path) => !seen.has(path));
  if (missing.length > 0) {
    throw new Error(
      `README.md has no parameter table for ${missing.join(', ')}: add <!-- endpoint-table:PATH --><!-- /endpoint-table --> to its section`,
    );
  }
  if ((rendered.match(EVENTS) ?? []).length !== 1) {
    throw new Error('README.md needs exactly one event-type table: <!-- event-types --> and <!-- /event-types --> in its "Events" section');
  }
  return rendered.replace(EVENTS, (_whole, open: string, close: string) => `${open}${eventTypeTable()}${close}`);
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
  return [['Type', 'Scope', 'When, and its `data`'], ['---', '---', '---'], ...rows].map((cells) => `| ${cells.join(' | ')} |\n`).join('');
}

/** A Markdown table: name, type or values, range, default (or "required"), description. */
export function parameterTable(parameters: readonly ParameterObject[]): string {
  const rows = parameters.map((p) =>
    [`\`${p.name}\``, typeCell(p.schema), rangeCell(p.schema), defaultCell(p), p.description ?? ''].map(escapeCell),
  );
  return [['Parameter', 'Type / values', 'Range', 'Default', 'Description'], ['---', '---', '---', '---', '---'], ...rows]
    .map((cells) => `| ${cells.join(' | ')} |\n`)
    .join('');
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

function main(): void {
  const readme = readFileSync(README, 'utf8');
  const rendered = renderReadme(readme);
  if (rendered === readme) {
    console.log(`README.md: ${ENDPOINTS.length} parameter tables and the event-type table, already up to date.`);
    return;
  }
  writeFileSync(README, rendered);
  console.log(`README.md: ${ENDPOINTS.length} parameter tables and the event-type table written.`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
