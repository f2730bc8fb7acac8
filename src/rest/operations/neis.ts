/** The GraphQL operations of the NEIS endpoints; each selection is the REST response shape. */

export const MEALS_OPERATION = /* GraphQL */ `
  query RestMeals($fromDate: LocalDate!, $toDate: LocalDate!) {
    meals(fromDate: $fromDate, toDate: $toDate) {
      mealId
      schoolCode
      schoolName
      officeCode
      officeName
      mealDate
      mealType
      mealMenu
      mealAllergyInfo
      mealCalories
      originInfo
      nutritionInfo
      mealServeCount
    }
  }
`;

export const SCHEDULES_OPERATION = /* GraphQL */ `
  query RestSchedules($fromDate: LocalDate!, $toDate: LocalDate!) {
    schedules(fromDate: $fromDate, toDate: $toDate) {
      scheduleId
      schoolCode
      schoolName
      officeCode
      officeName
      scheduleDate
      academicYear
      eventName
      eventContent
      dayCategory
      schoolCourseType
      dayNightType
      targetGrades
    }
  }
`;

export const TIMETABLES_OPERATION = /* GraphQL */ `
  query RestTimetables($grade: Int!, $classNum: Int!, $fromDate: LocalDate!, $toDate: LocalDate!) {
    timetables(grade: $grade, classNum: $classNum, fromDate: $fromDate, toDate: $toDate) {
      timetableId
      schoolCode
      schoolName
      officeCode
      officeName
      timetableDate
      academicYear
      semester
      grade
      classNum
      period
      subject
      departmentName
      classroomName
    }
  }
`;
