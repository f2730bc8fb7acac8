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

/** The fields of a project anyone may see (GET /v1/public/projects): no person's data. */
const PUBLIC_PROJECT_FIELDS = /* GraphQL */ `
  fragment PublicProjectFields on PublicProject {
    id
    name
    description
    clubName
    startYear
    endYear
    status
    participantCount
  }
`;

/** The operation GET /v1/public/projects runs (no key). */
export const PUBLIC_PROJECTS_OPERATION =
  /* GraphQL */ `
  query RestPublicProjects($page: Int, $size: Int) {
    publicProjects(page: $page, size: $size) {
      totalPages
      totalElements
      projects {
        ...PublicProjectFields
      }
    }
  }
` + PUBLIC_PROJECT_FIELDS;

/** The operation GET /v1/public/projects/{id} runs (no key). */
export const PUBLIC_PROJECT_OPERATION =
  /* GraphQL */ `
  query RestPublicProject($id: Long!) {
    publicProject(id: $id) {
      ...PublicProjectFields
    }
  }
` + PUBLIC_PROJECT_FIELDS;
