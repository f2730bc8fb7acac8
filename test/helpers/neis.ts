/*
 * The fields of the NEIS records as the API shows them (docs/decisions.md), in order: written out
 * here, not read from the code, so that a test of the order fails when the code's order changes.
 */

export const MEAL_FIELDS = [
  'mealId',
  'schoolCode',
  'schoolName',
  'officeCode',
  'officeName',
  'mealDate',
  'mealType',
  'mealMenu',
  'mealAllergyInfo',
  'mealCalories',
  'originInfo',
  'nutritionInfo',
  'mealServeCount',
] as const;

export const SCHEDULE_FIELDS = [
  'scheduleId',
  'schoolCode',
  'schoolName',
  'officeCode',
  'officeName',
  'scheduleDate',
  'academicYear',
  'eventName',
  'eventContent',
  'dayCategory',
  'schoolCourseType',
  'dayNightType',
  'targetGrades',
] as const;
