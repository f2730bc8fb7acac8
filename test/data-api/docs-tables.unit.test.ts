import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { eventTypeTable, parameterTable, renderDataApi } from '../../scripts/readme-tables.js';
import { EVENT_TYPES } from '../../src/data/events/types.js';
import { ENDPOINTS, type Endpoint } from '../../src/rest/endpoints.js';
import { buildOpenApiDocument } from '../../src/rest/openapi.js';
import { intParam } from '../../src/rest/params.js';

/**
 * docs/data-api.md's parameter tables are generated from the endpoint table (`npm run docs`,
 * scripts/readme-tables.ts): this fails as soon as the page and the table in the code disagree.
 */
describe('data API: docs/data-api.md parameter tables', () => {
  const page = readFileSync('docs/data-api.md', 'utf8');
  const document = buildOpenApiDocument();

  it('docs/data-api.md is up to date with the endpoint table (run `npm run docs` when this fails)', () => {
    expect(renderDataApi(page, document) === page, 'docs/data-api.md differs from `npm run docs`').to.equal(true);
  });

  it('docs/data-api.md has one table per row, each between its markers', () => {
    for (const { path } of ENDPOINTS) {
      const start = page.indexOf(`<!-- endpoint-table:${path} -->\n| Parameter |`);
      expect(start, path).to.be.greaterThan(0);
      expect(page.indexOf('<!-- /endpoint-table -->', start), path).to.be.greaterThan(start);
    }
  });

  it('a row with a changed parameter makes the page out of date', () => {
    const rows: Endpoint[] = ENDPOINTS.map((row) =>
      row.path === '/v1/clubs'
        ? { ...row, query: row.query.extend({ foundedYear: intParam({ min: 1990, max: 2100 }).optional().describe('Founded.') }) }
        : row,
    );
    const rendered = renderDataApi(page, buildOpenApiDocument(rows));
    expect(rendered).to.not.equal(page);
    expect(rendered).to.include('| `foundedYear` | integer | 1,990 to 2,100 |  | Founded. |\n<!-- /endpoint-table -->');
  });

  it('a row without a section gets one among the new endpoints; a table without a row is refused with the path', () => {
    const withoutMeals = page.replace('<!-- endpoint-table:/v1/neis/meals -->', '<!-- no table -->');
    const placed = renderDataApi(withoutMeals, document);
    const added = placed.slice(placed.indexOf('<!-- new-endpoints -->'), placed.indexOf('<!-- /new-endpoints -->'));
    expect(added).to.include('### GET /v1/neis/meals (scope `NEIS_READ`)').and.include('| `fromDate` | date, `YYYY-MM-DD` |');
    const extra = `${page}\n<!-- endpoint-table:/v1/pupils -->\n<!-- /endpoint-table -->\n`;
    expect(() => renderDataApi(extra, document)).to.throw(/table for \/v1\/pupils, which is no row/);
  });

  it('renders ranges, enum values, defaults and required parameters from the document', () => {
    const timetables = document.paths['/v1/neis/timetables']?.get.parameters.filter((p) => p.in === 'query') ?? [];
    const students = document.paths['/v1/students']?.get.parameters.filter((p) => p.in === 'query') ?? [];
    const lines = [...parameterTable(timetables).split('\n'), ...parameterTable(students).split('\n')];
    expect(lines).to.include('| `grade` | integer | 1 to 3 | required | 학년 (필수). / Grade (required). |');
    expect(lines).to.include('| `size` | integer | 1 to 1,000 | `300` | 한 쪽의 레코드 수. / Records per page. |');
    expect(lines).to.include('| `sex` | `MAN`, `WOMAN` |  |  | 성별. / Sex. |');
    expect(lines).to.include('| `studentId` | integer | at least 1 |  | 이 ID의 학생. / The student with this id. |');
    expect(lines).to.include(
      '| `name` | text | at most 100 characters |  | 이 글자가 들어간 이름 (로마자는 대소문자 무시). / Names containing this text (case-insensitive for Latin letters). |',
    );
    expect(lines).to.include(
      '| `date` | date, `YYYY-MM-DD` |  |  | 하루; 날짜도 기간도 없으면 학교 시간대의 오늘. / One day; with neither date nor a range: today in the school time zone. |',
    );
  });

  it('writes the event types from their table (src/data/events/types.ts), one row each, and needs its markers', () => {
    const table = eventTypeTable();
    expect(page).to.include(`<!-- event-types -->\n${table}<!-- /event-types -->`);
    expect(
      table
        .split('\n')
        .slice(2, -1)
        .map((line) => /^\| `([^`]+)` \|/.exec(line)?.[1]),
    ).to.deep.equal(EVENT_TYPES);
    expect(table).to.include(
      '| `batch.completed` | `STUDENT_READ`; without it, with `CLUB_READ` or `PROJECT_READ`: `kind`, `records` and `counts` only (`summary` null) |',
    );
    expect(() => renderDataApi(page.replace('<!-- event-types -->', ''), document)).to.throw(/exactly one event-type table/);
  });
});
