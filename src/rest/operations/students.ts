/** The GraphQL operation GET /v1/students runs; its selection is the REST response shape. */
export const STUDENTS_OPERATION = /* GraphQL */ `
  query RestStudents($filter: StudentFilter, $page: Int, $size: Int, $sortBy: StudentSortBy, $sortDirection: SortDirection) {
    students(filter: $filter, page: $page, size: $size, sortBy: $sortBy, sortDirection: $sortDirection) {
      totalPages
      totalElements
      students {
        id
        name
        sex
        email
        grade
        classNum
        number
        studentNumber
        major
        role
        dormitoryFloor
        dormitoryRoom
        majorClub {
          id
          name
          type
        }
        autonomousClub {
          id
          name
          type
        }
        specialty
        githubId
        githubUrl
      }
    }
  }
`;
