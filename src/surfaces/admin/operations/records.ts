/*
 * The selections the admin console's school-record operations share (a student's, a club's or a
 * project's page): the clubs its selects offer (and the query of a new record's), and what a delete answers. Each payload's own
 * answer is beside its mutations (STUDENT_OUTCOME in ./students.ts, ...).
 */

/** The clubs a record's selects offer (a student's two clubs, a project's club), all of them by name. */
export const CLUB_CHOICES = /* GraphQL */ `
  fragment ClubChoices on Query {
    clubs(size: 1000, sortBy: NAME) {
      clubs {
        id
        name
        type
        status
      }
    }
  }
`;

/** The clubs a new record's form offers. */
export const ADMIN_CLUB_CHOICES =
  /* GraphQL */ `
  query AdminClubChoices {
    ...ClubChoices
  }
` + CLUB_CHOICES;

/** What a delete answers: its refusals in the page's language, and the batch it wrote. */
export const DELETE_OUTCOME = /* GraphQL */ `
  fragment DeleteOutcome on DeletePayload {
    errors {
      field
      message(lang: $lang)
    }
    batchId
  }
`;
