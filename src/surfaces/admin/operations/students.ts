import { STUDENT_RECORD } from '../../../rest/operations/student-record.js';
import { CLUB_CHOICES, DELETE_OUTCOME } from './records.js';

/** The student list of the admin console: one page, filtered. */
export const ADMIN_STUDENTS = /* GraphQL */ `
  query AdminStudents($filter: StudentFilter, $page: Int, $size: Int) {
    students(filter: $filter, page: $page, size: $size, sortBy: STUDENT_NUMBER) {
      totalPages
      totalElements
      students {
        id
        name
        email
        studentNumber
        major
        role
        dormitoryRoom
        majorClub {
          name
        }
        autonomousClub {
          name
        }
      }
    }
  }
`;

/** One student for the edit form (as the data API shows it), and the clubs its selects offer. */
export const ADMIN_STUDENT =
  /* GraphQL */ `
  query AdminStudent($id: Long!) {
    students(filter: { studentId: $id, includeGraduates: true, includeWithdrawn: true }, size: 1) {
      students {
        ...StudentRecord
      }
    }
    ...ClubChoices
  }
` +
  STUDENT_RECORD +
  CLUB_CHOICES;

/** What a student's mutations answer: the student, the refusals in the page's language, and the batch written. */
const STUDENT_OUTCOME = /* GraphQL */ `
  fragment StudentOutcome on StudentPayload {
    student {
      id
    }
    errors {
      field
      message(lang: $lang)
    }
    batchId
  }
`;

export const CREATE_STUDENT =
  /* GraphQL */ `
  mutation CreateStudent($input: CreateStudentInput!, $lang: Language!) {
    createStudent(input: $input) {
      ...StudentOutcome
    }
  }
` + STUDENT_OUTCOME;

export const UPDATE_STUDENT =
  /* GraphQL */ `
  mutation UpdateStudent($id: Long!, $input: UpdateStudentInput!, $lang: Language!) {
    updateStudent(id: $id, input: $input) {
      ...StudentOutcome
    }
  }
` + STUDENT_OUTCOME;

export const GRADUATE_STUDENT =
  /* GraphQL */ `
  mutation GraduateStudent($id: Long!, $lang: Language!) {
    graduateStudent(id: $id) {
      ...StudentOutcome
    }
  }
` + STUDENT_OUTCOME;

export const WITHDRAW_STUDENT =
  /* GraphQL */ `
  mutation WithdrawStudent($id: Long!, $lang: Language!) {
    withdrawStudent(id: $id) {
      ...StudentOutcome
    }
  }
` + STUDENT_OUTCOME;

export const REACTIVATE_STUDENT =
  /* GraphQL */ `
  mutation ReactivateStudent($id: Long!, $input: ReactivateStudentInput!, $lang: Language!) {
    reactivateStudent(id: $id, input: $input) {
      ...StudentOutcome
    }
  }
` + STUDENT_OUTCOME;

export const DELETE_STUDENT =
  /* GraphQL */ `
  mutation DeleteStudent($id: Long!, $lang: Language!) {
    deleteStudent(id: $id) {
      ...DeleteOutcome
    }
  }
` + DELETE_OUTCOME;
