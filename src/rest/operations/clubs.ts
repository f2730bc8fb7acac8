/** The GraphQL operation GET /v1/clubs runs; its selection is the REST response shape. */
export const CLUBS_OPERATION = /* GraphQL */ `
  query RestClubs(
    $filter: ClubFilter
    $page: Int
    $size: Int
    $sortBy: ClubSortBy
    $sortDirection: SortDirection
    $includeLeader: Boolean
  ) {
    clubs(filter: $filter, page: $page, size: $size, sortBy: $sortBy, sortDirection: $sortDirection) {
      totalPages
      totalElements
      clubs {
        id
        name
        type
        leader {
          ...RestParticipant
        }
        participants(includeLeader: $includeLeader) {
          ...RestParticipant
        }
        foundedYear
        status
        abolishedYear
      }
    }
  }

  fragment RestParticipant on Student {
    id
    name
    email
    studentNumber
    major
    sex
  }
`;
