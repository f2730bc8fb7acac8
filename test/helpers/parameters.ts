import { expect } from 'chai';
import type { ApiScope } from '../../src/data/keys/store.js';
import type { Database } from '../../src/data/database.js';
import { buildTestApp, type TestApp } from './app.js';
import { expectEnvelope, expectOk } from './expect.js';
import { issueKey } from './factories.js';

/** A data API request with a query string (`?size=1`). */
export type Get = (query: string) => Promise<Response>;

/** Asserts the refusal of a query parameter: 400, the envelope, the parameter named and what it says. */
export async function expectRefused(get: Get, query: string, parameter: string, says: string): Promise<void> {
  const body = await expectEnvelope(await get(query), 400, 'BAD_REQUEST', `Invalid parameter '${parameter}': `);
  expect(body.message, query).to.include(says);
}

/**
 * The `it`s of integer parameters (inside a describe): each `name=value` of `ranges` answers 200, or
 * 400 naming the parameter and its range; each of `malformed` is refused for each name, and so is
 * a name given twice.
 */
export function itChecksIntegers(get: Get, ranges: readonly (readonly [string, 200 | 400])[], malformed: readonly string[]): void {
  for (const [query, status] of ranges) {
    it(`${query} -> ${status}`, async () => {
      const res = await get(`?${query}`);
      const name = query.split('=')[0] ?? '';
      if (status === 200) await expectOk(res);
      else
        await expectEnvelope(
          res,
          400,
          'BAD_REQUEST',
          new RegExp(`^Invalid parameter '${name}': must be an integer from \\d+ to \\d+ \\(got '-?\\d+'\\)\\.$`),
        );
    });
  }
  for (const name of new Set(ranges.map(([query]) => query.split('=')[0] ?? ''))) {
    for (const raw of malformed) {
      it(`${name}='${raw}' -> 400`, () => expectRefused(get, `?${name}=${encodeURIComponent(raw)}`, name, 'must be an integer from'));
    }
    it(`${name} given twice -> 400`, () => expectRefused(get, `?${name}=1&${name}=2`, name, 'must be given only once'));
  }
}

/** The `it`s of enum parameters: each wrong value is refused listing the allowed ones, and so is a name given twice. */
export function itChecksEnums(get: Get, enums: readonly (readonly [name: string, allowed: string, wrong: readonly string[]])[]): void {
  for (const [name, allowed, wrong] of enums) {
    for (const raw of wrong) {
      it(`${name}='${raw}' -> 400 listing ${allowed}`, async () => {
        const body = await expectEnvelope(await get(`?${name}=${raw}`), 400, 'BAD_REQUEST');
        expect(body.message).to.equal(`Invalid parameter '${name}': must be one of ${allowed} (got '${raw}').`);
      });
    }
    it(`${name} given twice -> 400`, () => expectRefused(get, `?${name}=${wrong[0] ?? ''}&${name}=x`, name, 'must be given only once'));
  }
}

/**
 * The suite of a list's default page size: with `pageSize + 1` records (`insert`), the first page
 * holds `pageSize` of them and the second the last one.
 */
export function describeDefaultPageSize(o: {
  readonly path: string;
  readonly list: string;
  readonly scope: ApiScope;
  readonly pageSize: number;
  insert(db: Database, count: number): Promise<void>;
}): void {
  describe(`data API: GET ${o.path} default page size`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(`${o.list}_default_size`, { surfaces: ['data'] });
      await o.insert(t.db, o.pageSize + 1);
    });
    after(() => t.close());

    it(`is ${o.pageSize}`, async () => {
      const key = await issueKey(t.db, { scopes: [o.scope] });
      const page = async (query: string) => {
        const data = await expectOk<Record<string, unknown>>(await t.request(`${o.path}${query}`, { headers: { 'X-API-KEY': key } }));
        const ids = (data[o.list] as { id: number }[]).map((record) => record.id);
        return { totalPages: data['totalPages'], totalElements: data['totalElements'], ids };
      };
      const first = await page('');
      expect([first.totalPages, first.totalElements, first.ids.length, first.ids[o.pageSize - 1]]).to.deep.equal([
        2,
        o.pageSize + 1,
        o.pageSize,
        o.pageSize,
      ]);
      expect((await page('?page=1')).ids).to.deep.equal([o.pageSize + 1]);
    });
  });
}

/**
 * The `it` of a list's pages: for each size, totalPages is ceil(totalElements / size) and a page
 * holds at most `size`; a page past the end is empty, and so is the answer to `unmatched`.
 */
export function itPages(get: Get, list: string, total: number, sizes: readonly number[], unmatched: string): void {
  it('totalPages is ceil(totalElements / size); a page past the end is empty', async () => {
    const page = async (query: string) => expectOk<Record<string, unknown>>(await get(query));
    for (const size of sizes) {
      const data = await page(`?size=${size}`);
      expect([data['totalPages'], data['totalElements'], (data[list] as unknown[]).length], `size ${size}`).to.deep.equal([
        Math.ceil(total / size),
        total,
        Math.min(size, total),
      ]);
    }
    const pages = Math.ceil(total / (sizes[1] ?? 1));
    expect(await page(`?size=${sizes[1] ?? 1}&page=${pages}`)).to.deep.equal({ totalPages: pages, totalElements: total, [list]: [] });
    expect(await page('?page=2147483647&size=1000')).to.deep.equal({ totalPages: 1, totalElements: total, [list]: [] });
    expect(await page(unmatched)).to.deep.equal({ totalPages: 0, totalElements: 0, [list]: [] });
  });
}

/** The ids of a list's records in the answer to `query`. */
async function idsOf(get: Get, list: string, query: string): Promise<number[]> {
  return ((await expectOk<Record<string, unknown>>(await get(query)))[list] as { id: number }[]).map((r) => r.id);
}

/**
 * The ids of every page of a list's `query` (which starts with `?`), `size` at a time, in order:
 * each page counts the same totals and holds `size` records (the last what is left), and the page
 * after the last is empty, so that the pages put together neither overlap nor skip.
 */
export async function walkPages(get: Get, list: string, query: string, size: number): Promise<number[]> {
  const page = async (n: number) => {
    const data = await expectOk<Record<string, unknown>>(await get(`${query}&size=${size}&page=${n}`));
    return { totals: [data['totalPages'], data['totalElements']] as const, ids: (data[list] as { id: number }[]).map((r) => r.id) };
  };
  const first = await page(0);
  const [totalPages, totalElements] = first.totals as readonly [number, number];
  const seen = [...first.ids];
  for (let n = 1; n < totalPages; n++) {
    const next = await page(n);
    expect(next.totals, `page ${n} of ${query}`).to.deep.equal(first.totals);
    expect(next.ids.length, `page ${n} of ${query}`).to.equal(Math.min(size, totalElements - n * size));
    seen.push(...next.ids);
  }
  expect((await page(totalPages)).ids).to.deep.equal([]);
  return seen;
}

/**
 * The `it`s of a list's sorts: for each sortBy of `order` and each direction, the exact order of
 * the ids in one answer, and walked `sizes` at a time (walkPages).
 */
export function itSorts(
  get: Get,
  list: string,
  order: Readonly<Record<string, { ASC: number[]; DESC: number[] }>>,
  sizes: readonly number[],
): void {
  for (const [sortBy, expected] of Object.entries(order)) {
    for (const dir of ['ASC', 'DESC'] as const) {
      it(`sortBy=${sortBy} sortDirection=${dir}: exact order (ties by id), pages of ${sizes.join(' and ')} neither overlap nor skip`, async () => {
        const query = `?sortBy=${sortBy}&sortDirection=${dir}`;
        expect(await idsOf(get, list, query)).to.deep.equal(expected[dir]);
        for (const size of sizes) expect(await walkPages(get, list, query, size), `pages of ${size}`).to.deep.equal(expected[dir]);
      });
    }
  }
}
