import type { ClubDoc } from '../models/club.model.js';
import { containsInsensitive, withIdTieBreaker, type SortSpec } from './page.js';

export interface ClubCriteria {
  clubId?: number | null;
  clubName?: string | null;
  clubType?: ClubDoc['type'] | null;
  clubStatus?: ClubDoc['status'] | null;
}

export type ClubSortBy = 'ID' | 'NAME' | 'TYPE';

export function clubFilter(c: ClubCriteria): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  if (c.clubId != null) filter['_id'] = c.clubId;
  if (c.clubName != null) filter['name'] = containsInsensitive(c.clubName);
  if (c.clubType != null) filter['type'] = c.clubType;
  if (c.clubStatus != null) filter['status'] = c.clubStatus;
  return filter;
}

export function clubSort(sortBy: ClubSortBy | null | undefined, direction: 1 | -1): SortSpec {
  const specs: Record<ClubSortBy, SortSpec> = { ID: { _id: direction }, NAME: { name: direction }, TYPE: { type: direction } };
  return withIdTieBreaker(specs[sortBy ?? 'ID']);
}
