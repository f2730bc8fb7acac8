/** The GraphQL operation GET /v1/projects runs; its selection is the REST response shape. */
export const PROJECTS_OPERATION = /* GraphQL */ `
  query RestProjects($filter: ProjectFilter, $page: Int, $size: Int, $sortBy: ProjectSortBy, $sortDirection: SortDirection) {
    projects(filter: $filter, page: $page, size: $size, sortBy: $sortBy, sortDirection: $sortDirection) {
      totalPages
      totalElements
      projects {
        id
        name
        description
        club {
          id
          name
          type
        }
        participants {
          id
          name
          email
          studentNumber
          major
          sex
        }
        startYear
        endYear
        status
      }
    }
  }
`;
