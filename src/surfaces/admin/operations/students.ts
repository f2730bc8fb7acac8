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

/** One student for the edit form, and the clubs its selects offer. */
export const ADMIN_STUDENT = /* GraphQL */ `
  query AdminStudent($id: Long!) {
    students(filter: { studentId: $id, includeGraduates: true, includeWithdrawn: true }, size: 1) {
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
        dormitoryRoom
        majorClub {
          id
        }
        autonomousClub {
          id
        }
        specialty
        githubId
      }
    }
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

/** The clubs the new-student form offers. */
export const ADMIN_CLUB_CHOICES = /* GraphQL */ `
  query AdminClubChoices {
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

export const CREATE_STUDENT = /* GraphQL */ `
  mutation CreateStudent($input: CreateStudentInput!, $lang: Language!) {
    createStudent(input: $input) {
      student {
        id
      }
      errors {
        field
        message(lang: $lang)
      }
      batchId
    }
  }
`;

export const UPDATE_STUDENT = /* GraphQL */ `
  mutation UpdateStudent($id: Long!, $input: UpdateStudentInput!, $lang: Language!) {
    updateStudent(id: $id, input: $input) {
      student {
        id
      }
      errors {
        field
        message(lang: $lang)
      }
      batchId
    }
  }
`;

export const GRADUATE_STUDENT = /* GraphQL */ `
  mutation GraduateStudent($id: Long!, $lang: Language!) {
    graduateStudent(id: $id) {
      errors {
        field
        message(lang: $lang)
      }
      batchId
    }
  }
`;

export const WITHDRAW_STUDENT = /* GraphQL */ `
  mutation WithdrawStudent($id: Long!, $lang: Language!) {
    withdrawStudent(id: $id) {
      errors {
        field
        message(lang: $lang)
      }
      batchId
    }
  }
`;

export const REACTIVATE_STUDENT = /* GraphQL */ `
  mutation ReactivateStudent($id: Long!, $input: ReactivateStudentInput!, $lang: Language!) {
    reactivateStudent(id: $id, input: $input) {
      errors {
        field
        message(lang: $lang)
      }
      batchId
    }
  }
`;

export const DELETE_STUDENT = /* GraphQL */ `
  mutation DeleteStudent($id: Long!, $lang: Language!) {
    deleteStudent(id: $id) {
      errors {
        field
        message(lang: $lang)
      }
      batchId
    }
  }
`;
