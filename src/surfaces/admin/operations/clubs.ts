import { DELETE_OUTCOME } from './records.js';

/** The club list of the admin console. */
export const ADMIN_CLUBS = /* GraphQL */ `
  query AdminClubs($filter: ClubFilter, $page: Int, $size: Int) {
    clubs(filter: $filter, page: $page, size: $size, sortBy: NAME) {
      totalPages
      totalElements
      clubs {
        id
        name
        type
        status
        foundedYear
        abolishedYear
        recordedLeader {
          name
          studentNumber
        }
        members {
          id
        }
      }
    }
  }
`;

/** One club for the edit form: its recorded leader and its members by email. */
export const ADMIN_CLUB = /* GraphQL */ `
  query AdminClub($id: Long!) {
    clubs(filter: { clubId: $id }, size: 1) {
      clubs {
        id
        name
        type
        status
        foundedYear
        abolishedYear
        recordedLeader {
          email
          name
        }
        members {
          email
          name
          studentNumber
        }
      }
    }
  }
`;

/** What a club's mutations answer: the club, the refusals in the page's language, and the batch written. */
const CLUB_OUTCOME = /* GraphQL */ `
  fragment ClubOutcome on ClubPayload {
    club {
      id
    }
    errors {
      field
      message(lang: $lang)
    }
    batchId
  }
`;

export const CREATE_CLUB =
  /* GraphQL */ `
  mutation CreateClub($input: ClubInput!, $lang: Language!) {
    createClub(input: $input) {
      ...ClubOutcome
    }
  }
` + CLUB_OUTCOME;

export const UPDATE_CLUB =
  /* GraphQL */ `
  mutation UpdateClub($id: Long!, $input: ClubInput!, $lang: Language!) {
    updateClub(id: $id, input: $input) {
      ...ClubOutcome
    }
  }
` + CLUB_OUTCOME;

export const ABOLISH_CLUB =
  /* GraphQL */ `
  mutation AbolishClub($id: Long!, $lang: Language!) {
    abolishClub(id: $id) {
      ...ClubOutcome
    }
  }
` + CLUB_OUTCOME;

export const DELETE_CLUB =
  /* GraphQL */ `
  mutation DeleteClub($id: Long!, $lang: Language!) {
    deleteClub(id: $id) {
      ...DeleteOutcome
    }
  }
` + DELETE_OUTCOME;
