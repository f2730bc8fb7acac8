import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from '@graphql-codegen/cli';
import { expect } from 'chai';
import { buildClientSchema, getIntrospectionQuery, printSchema, type IntrospectionQuery } from 'graphql';
import ts from 'typescript';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { issueKey } from '../helpers/factories.js';

/**
 * GET /graphql/schema.graphql: the executed schema as SDL, without a key, cacheable; it is what
 * the server answers introspection with, and a consumer's graphql-codegen run against the served
 * address types its operations (checked with the TypeScript compiler).
 */
describe('GraphQL: GET /graphql/schema.graphql', function () {
  this.timeout(120000);
  let t: TestApp;
  let dir: string;

  before(async () => {
    t = await buildTestApp('graphql_sdl', { surfaces: ['data'] });
    dir = mkdtempSync(join(tmpdir(), 'campus-sdl-'));
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is served without a key as plain text with an ETag and Cache-Control, and answers 304 to its ETag', async () => {
    const res = await t.request('/graphql/schema.graphql');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
    expect(res.headers.get('cache-control')).to.equal('public, max-age=300');
    const etag = res.headers.get('etag');
    expect(etag).to.match(/^"[A-Za-z0-9_-]{32}"$/);
    const sdl = await res.text();
    expect(sdl).to.include('type Query {');
    expect(sdl).to.include('meals(date: LocalDate, fromDate: LocalDate, toDate: LocalDate): [Meal!]!');

    const again = await t.request('/graphql/schema.graphql', { headers: { 'If-None-Match': etag ?? '' } });
    expect(again.status).to.equal(304);
    expect(again.headers.get('etag')).to.equal(etag);
    expect(await again.text()).to.equal('');

    const post = await t.request('/graphql/schema.graphql', { method: 'POST' });
    expect(post.status).to.equal(405);
    expect(post.headers.get('allow')).to.equal('HEAD, GET');
  });

  it('equals the schema the server executes (its introspection answer, printed)', async () => {
    const key = await issueKey(t.db);
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-KEY': key },
      body: JSON.stringify({ query: getIntrospectionQuery() }),
    });
    expect(res.status, await res.clone().text()).to.equal(200);
    const { data } = (await res.json()) as { data: IntrospectionQuery };
    const executed = printSchema(buildClientSchema(data));
    const served = await (await t.request('/graphql/schema.graphql')).text();
    expect(served).to.equal(`${executed}\n`);
  });

  it("drives a consumer's graphql-codegen (typescript-operations), whose types check an operation", async () => {
    const operation = join(dir, 'meals.graphql');
    writeFileSync(operation, 'query TodaysMeals($date: LocalDate) { meals(date: $date) { mealType mealMenu mealCalories } }\n');
    const output = join(dir, 'generated.ts');
    // The README's codegen.yml, as an object: the schema is the served address.
    await generate(
      {
        schema: `${t.url}/graphql/schema.graphql`,
        documents: [operation],
        config: { scalars: { Long: 'number', LocalDate: 'string' } },
        generates: { [output]: { plugins: ['typescript-operations'] } },
        silent: true,
      },
      true,
    );
    const good = join(dir, 'good.ts');
    writeFileSync(
      good,
      [
        "import type { TodaysMealsQuery, TodaysMealsQueryVariables } from './generated.js';",
        "export const variables: TodaysMealsQueryVariables = { date: '2026-03-02' };",
        'export function lunch(data: TodaysMealsQuery): string[] {',
        "  return data.meals.filter((meal) => meal.mealType === 'LUNCH').flatMap((meal) => meal.mealMenu);",
        '}',
        '',
      ].join('\n'),
    );
    const bad = join(dir, 'bad.ts');
    writeFileSync(
      bad,
      [
        "import type { TodaysMealsQuery } from './generated.js';",
        // Not selected by the operation, so not in its type.
        'export const origin = (data: TodaysMealsQuery) => data.meals[0]?.originInfo;',
        "export const wrong = (data: TodaysMealsQuery) => data.meals.filter((meal) => meal.mealType === 'SNACK');",
        '',
      ].join('\n'),
    );
    const check = (file: string) =>
      ts
        .getPreEmitDiagnostics(
          ts.createProgram([file], {
            strict: true,
            noEmit: true,
            module: ts.ModuleKind.NodeNext,
            moduleResolution: ts.ModuleResolutionKind.NodeNext,
            target: ts.ScriptTarget.ES2022,
            skipLibCheck: true,
            types: [],
          }),
        )
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(check(good)).to.deep.equal([]);
    const errors = check(bad);
    expect(errors).to.have.length(2);
    expect(errors[0]).to.include("Property 'originInfo' does not exist");
    expect(errors[1]).to.include('"SNACK"');
  });
});
