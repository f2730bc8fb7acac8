import type { ProjectSortBy } from '../../__generated__/enums.js';
import type { ProjectDoc } from '../../models/project.model.js';
import { containsText, equals, listQueries, nullsLast, type ListQuery } from './page.js';

export interface ProjectCriteria {
  projectId?: number | null;
  projectName?: string | null;
  clubId?: number | null;
  status?: ProjectDoc['status'] | null;
}

/** The tests of a project query's criteria, and its orders per ProjectSortBy (made total by the id). */
const PROJECTS = listQueries<ProjectCriteria, ProjectDoc, ProjectSortBy>({
  tests: {
    projectId: (id) => equals((p) => p._id, id),
    projectName: (name) => containsText((p) => p.name, name),
    clubId: (clubId) => equals((p) => p.clubId, clubId),
    status: (status) => equals((p) => p.status, status),
  },
  orders: (direction) => ({ ID: [], NAME: [nullsLast((p) => p.name, direction)] }),
  defaultOrder: 'ID',
});

/** A whole project query: the test, the order, and the id or club it names (look-ups). */
export function projectQuery(c: ProjectCriteria, sortBy: ProjectSortBy | null | undefined, direction: 1 | -1): ListQuery<ProjectDoc> {
  return {
    matches: PROJECTS.matcher(c),
    filterKey: PROJECTS.key(c),
    sort: PROJECTS.sort(sortBy, direction),
    id: c.projectId ?? undefined,
    clubId: c.clubId ?? undefined,
  };
}
