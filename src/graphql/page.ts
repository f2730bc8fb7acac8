import type { StudentDoc } from '../data/models/student.model.js';
import type { ClubDoc } from '../data/models/club.model.js';
import type { ProjectDoc } from '../data/models/project.model.js';

/** A page of records as the list resolvers return it (mapped parent types of *Page). */
export interface Page<T> {
  totalPages: number;
  totalElements: number;
  items: T[];
}

export type StudentPageParent = Page<StudentDoc>;
export type ClubPageParent = Page<ClubDoc>;
export type ProjectPageParent = Page<ProjectDoc>;

/** totalPages is ceil(totalElements / size) (docs/decisions.md). */
export function toPage<T>(items: T[], totalElements: number, size: number): Page<T> {
  return { items, totalElements, totalPages: Math.ceil(totalElements / size) };
}
