import type { ProjectDoc } from '../models/project.model.js';
import { containsInsensitive, withIdTieBreaker, type SortSpec } from './page.js';

export interface ProjectCriteria {
  projectId?: number | null;
  projectName?: string | null;
  clubId?: number | null;
  status?: ProjectDoc['status'] | null;
}

export type ProjectSortBy = 'ID' | 'NAME';

export function projectFilter(c: ProjectCriteria): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  if (c.projectId != null) filter['_id'] = c.projectId;
  if (c.projectName != null) filter['name'] = containsInsensitive(c.projectName);
  if (c.clubId != null) filter['clubId'] = c.clubId;
  if (c.status != null) filter['status'] = c.status;
  return filter;
}

export function projectSort(sortBy: ProjectSortBy | null | undefined, direction: 1 | -1): SortSpec {
  const specs: Record<ProjectSortBy, SortSpec> = { ID: { _id: direction }, NAME: { name: direction } };
  return withIdTieBreaker(specs[sortBy ?? 'ID']);
}
