import { CLUB_CHOICES, DELETE_OUTCOME } from './records.js';

/** The project list of the admin console. */
export const ADMIN_PROJECTS = /* GraphQL */ `
  query AdminProjects($filter: ProjectFilter, $page: Int, $size: Int) {
    projects(filter: $filter, page: $page, size: $size, sortBy: NAME) {
      totalPages
      totalElements
      projects {
        id
        name
        status
        startYear
        endYear
        club {
          name
        }
        participants {
          id
        }
      }
    }
  }
`;

/** One project for the edit form, and the clubs its select offers. */
export const ADMIN_PROJECT =
  /* GraphQL */ `
  query AdminProject($id: Long!) {
    projects(filter: { projectId: $id }, size: 1) {
      projects {
        id
        name
        description
        status
        startYear
        endYear
        club {
          id
        }
        participants {
          email
        }
      }
    }
    ...ClubChoices
  }
` + CLUB_CHOICES;

/** What a project's mutations answer: the project, the refusals in the page's language, and the batch written. */
const PROJECT_OUTCOME = /* GraphQL */ `
  fragment ProjectOutcome on ProjectPayload {
    project {
      id
    }
    errors {
      field
      message(lang: $lang)
    }
    batchId
  }
`;

export const CREATE_PROJECT =
  /* GraphQL */ `
  mutation CreateProject($input: ProjectInput!, $lang: Language!) {
    createProject(input: $input) {
      ...ProjectOutcome
    }
  }
` + PROJECT_OUTCOME;

export const UPDATE_PROJECT =
  /* GraphQL */ `
  mutation UpdateProject($id: Long!, $input: ProjectInput!, $lang: Language!) {
    updateProject(id: $id, input: $input) {
      ...ProjectOutcome
    }
  }
` + PROJECT_OUTCOME;

export const END_PROJECT =
  /* GraphQL */ `
  mutation EndProject($id: Long!, $endYear: Int, $lang: Language!) {
    endProject(id: $id, endYear: $endYear) {
      ...ProjectOutcome
    }
  }
` + PROJECT_OUTCOME;

export const REOPEN_PROJECT =
  /* GraphQL */ `
  mutation ReopenProject($id: Long!, $lang: Language!) {
    reopenProject(id: $id) {
      ...ProjectOutcome
    }
  }
` + PROJECT_OUTCOME;

export const DELETE_PROJECT =
  /* GraphQL */ `
  mutation DeleteProject($id: Long!, $lang: Language!) {
    deleteProject(id: $id) {
      ...DeleteOutcome
    }
  }
` + DELETE_OUTCOME;
