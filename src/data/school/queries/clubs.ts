import type { ClubSortBy } from '../../__generated__/enums.js';
import type { ClubDoc } from '../../models/club.model.js';
import { containsText, equals, listQueries, nullsLast, type ListQuery } from './page.js';

export interface ClubCriteria {
  clubId?: number | null;
  clubName?: string | null;
  clubType?: ClubDoc['type'] | null;
  clubStatus?: ClubDoc['status'] | null;
}

/** The tests of a club query's criteria, and its orders per ClubSortBy (made total by the id). */
const CLUBS = listQueries<ClubCriteria, ClubDoc, ClubSortBy>({
  tests: {
    clubId: (id) => equals((club) => club._id, id),
    clubName: (name) => containsText((club) => club.name, name),
    clubType: (type) => equals((club) => club.type, type),
    clubStatus: (status) => equals((club) => club.status, status),
  },
  orders: (direction) => ({
    ID: [],
    NAME: [nullsLast((club) => club.name, direction)],
    TYPE: [nullsLast((club) => club.type, direction)],
  }),
  defaultOrder: 'ID',
});

/** A whole club query: the test, the order, and the id it names (a look-up). */
export function clubQuery(c: ClubCriteria, sortBy: ClubSortBy | null | undefined, direction: 1 | -1): ListQuery<ClubDoc> {
  return { matches: CLUBS.matcher(c), filterKey: CLUBS.key(c), sort: CLUBS.sort(sortBy, direction), id: c.clubId ?? undefined };
}
