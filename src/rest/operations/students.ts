import { STUDENT_RECORD } from './student-record.js';

/** The GraphQL operation GET /v1/students runs; its selection is the REST response shape. */
export const STUDENTS_OPERATION =
  /* GraphQL */ `
  query RestStudents($filter: StudentFilter, $page: Int, $size: Int, $sortBy: StudentSortBy, $sortDirection: SortDirection) {
    students(filter: $filter, page: $page, size: $size, sortBy: $sortBy, sortDirection: $sortDirection) {
      totalPages
      totalElements
      students {
        ...StudentRecord
      }
    }
  }
` + STUDENT_RECORD;
