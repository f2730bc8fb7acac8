/**
 * The Student record of the data API (GET /v1/students), as one selection: the REST operation
 * answers it and the admin console's edit form reads it (codegen.yml gives it to both). Its
 * builder outside GraphQL is src/data/school/student-record.ts.
 */
export const STUDENT_RECORD = /* GraphQL */ `
  fragment StudentRecord on Student {
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
`;
