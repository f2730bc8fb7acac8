import type { ClubSortBy } from '../../__generated__/enums.js';
import type { ClubDoc } from '../../models/club.model.js';
import { allOf, containsText, criteriaKey, equals, nullsLast, sortRule, type Compare, type ListQuery, type SortRule } from './page.js';

export interface ClubCriteria {
  clubId?: number | null;
  clubName?: string | null;
  clubType?: ClubDoc['type'] | null;
  clubStatus?: ClubDoc['status'] | null;
}

/** Every criterion of ClubCriteria (the type refuses a list that misses one), for criteriaKey. */
const CRITERIA = Object.keys({ clubId: true, clubName: true, clubType: true, clubStatus: true } satisfies Record<
  keyof ClubCriteria,
  true
>) as (keyof ClubCriteria)[];

/** The test of a club query; omitted criteria are not applied. */
export function clubMatcher(c: ClubCriteria): (club: ClubDoc) => boolean {
  const tests: ((club: ClubDoc) => boolean)[] = [];
  if (c.clubId != null) tests.push(equals((club) => club._id, c.clubId));
  if (c.clubName != null) tests.push(containsText((club) => club.name, c.clubName));
  if (c.clubType != null) tests.push(equals((club) => club.type, c.clubType));
  if (c.clubStatus != null) tests.push(equals((club) => club.status, c.clubStatus));
  return allOf(tests);
}

/** The order of a club query per ClubSortBy, made total by the id. */
export function clubSort(sortBy: ClubSortBy | null | undefined, direction: 1 | -1): SortRule<ClubDoc> {
  const parts: Record<ClubSortBy, Compare<ClubDoc>[]> = {
    ID: [],
    NAME: [nullsLast((club) => club.name, direction)],
    TYPE: [nullsLast((club) => club.type, direction)],
  };
  const key = sortBy ?? 'ID';
  return sortRule(key, direction, ...parts[key]);
}

/** A whole club query: the test, the order, and the id it names (a look-up). */
export function clubQuery(c: ClubCriteria, sortBy: ClubSortBy | null | undefined, direction: 1 | -1): ListQuery<ClubDoc> {
  return { matches: clubMatcher(c), filterKey: criteriaKey(c, CRITERIA), sort: clubSort(sortBy, direction), id: c.clubId ?? undefined };
}
