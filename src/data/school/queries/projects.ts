import type { ProjectSortBy } from '../../__generated__/enums.js';
import type { ProjectDoc } from '../../models/project.model.js';
import { allOf, containsText, criteriaKey, equals, nullsLast, sortRule, type Compare, type ListQuery, type SortRule } from './page.js';

export interface ProjectCriteria {
  projectId?: number | null;
  projectName?: string | null;
  clubId?: number | null;
  status?: ProjectDoc['status'] | null;
}

/** Every criterion of ProjectCriteria (the type refuses a list that misses one), for criteriaKey. */
const CRITERIA = Object.keys({ projectId: true, projectName: true, clubId: true, status: true } satisfies Record<
  keyof ProjectCriteria,
  true
>) as (keyof ProjectCriteria)[];

/** The test of a project query; omitted criteria are not applied. */
export function projectMatcher(c: ProjectCriteria): (project: ProjectDoc) => boolean {
  const tests: ((project: ProjectDoc) => boolean)[] = [];
  if (c.projectId != null) tests.push(equals((p) => p._id, c.projectId));
  if (c.projectName != null) tests.push(containsText((p) => p.name, c.projectName));
  if (c.clubId != null) tests.push(equals((p) => p.clubId, c.clubId));
  if (c.status != null) tests.push(equals((p) => p.status, c.status));
  return allOf(tests);
}

/** The order of a project query per ProjectSortBy, made total by the id. */
export function projectSort(sortBy: ProjectSortBy | null | undefined, direction: 1 | -1): SortRule<ProjectDoc> {
  const parts: Record<ProjectSortBy, Compare<ProjectDoc>[]> = {
    ID: [],
    NAME: [nullsLast((p) => p.name, direction)],
  };
  const key = sortBy ?? 'ID';
  return sortRule(key, direction, ...parts[key]);
}

/** A whole project query: the test, the order, and the id or club it names (look-ups). */
export function projectQuery(c: ProjectCriteria, sortBy: ProjectSortBy | null | undefined, direction: 1 | -1): ListQuery<ProjectDoc> {
  return {
    matches: projectMatcher(c),
    filterKey: criteriaKey(c, CRITERIA),
    sort: projectSort(sortBy, direction),
    id: c.projectId ?? undefined,
    clubId: c.clubId ?? undefined,
  };
}
