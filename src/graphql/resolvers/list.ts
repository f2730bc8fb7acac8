import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SortDirection } from '../../data/__generated__/enums.js';
import type { ListQuery } from '../../data/school/queries/page.js';
import type { PageResult, SchoolSnapshot } from '../../data/school/read-model.js';
import type { DEFAULT_PAGE_SIZE, Range } from '../../limits.js';
import { checkPaging, checkRange, direction } from '../args.js';
import type { GraphQLContext } from '../context.js';
import { toPage, type Page } from '../page.js';

/** What tells one paged list (students, clubs, projects) from another. */
export interface ListSpec<TDoc, TFilter, TSort> {
  readonly list: keyof typeof DEFAULT_PAGE_SIZE;
  /** The integer filters and their ranges, checked as strictly as the REST parameters. */
  readonly ranges: { readonly [K in keyof TFilter]?: Range };
  /** The query (test, order, look-ups) of a filter and sort (src/data/school/queries/). */
  readonly query: (criteria: TFilter, sortBy: TSort | null | undefined, direction: 1 | -1) => ListQuery<TDoc>;
  /** One page of the query from the school in memory (src/data/school/read-model.ts). */
  readonly page: (school: SchoolSnapshot, query: ListQuery<TDoc>, page: number, size: number) => PageResult<TDoc>;
}

export interface ListArgs<TFilter, TSort> {
  readonly filter?: TFilter | null;
  readonly page?: number | null;
  readonly size?: number | null;
  readonly sortBy?: TSort | null;
  readonly sortDirection?: SortDirection | null;
}

/**
 * The one shape of a list root field: paging and ranges checked (its @access rule admitted the
 * caller: src/graphql/access.ts), then one page and its total, filtered, sorted and paged in
 * memory from the snapshot of the current data version.
 */
export function listResolver<TDoc, TFilter extends object, TSort>(spec: ListSpec<TDoc, TFilter, TSort>) {
  return async (_parent: unknown, args: ListArgs<TFilter, TSort>, ctx: GraphQLContext): Promise<Page<TDoc>> => {
    const filter = args.filter ?? ({} as TFilter);
    const { page, size } = checkPaging(args.page, args.size, spec.list);
    for (const [name, range] of Object.entries(spec.ranges) as [keyof TFilter & string, Range][]) {
      const value = filter[name];
      checkRange(name, typeof value === 'number' ? value : null, range);
    }
    const query = spec.query(filter, args.sortBy, direction(args.sortDirection));
    const school = await ctx.db.school.snapshot();
    // A page is computed synchronously from memory; without this turn a document of 30 such
    // fields would hold the event loop for all 30, and health, login and userinfo would wait
    // behind it (docs/limits-and-security.md, "Every data request"; test/data-api/isolation.http.test.ts).
    await nextTurn();
    const { items, total } = spec.page(school, query, page, size);
    return toPage(items, total, size);
  };
}
