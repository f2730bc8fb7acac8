/** The school a NEIS record belongs to: the first fields of every meal, calendar event and period the API shows. */
export interface NeisSchoolFields {
  schoolCode: string;
  schoolName: string;
  officeCode: string;
  officeName: string;
}

/**
 * The paths every stored NEIS record has: the sync generation it belongs to (a sync writes a new
 * generation whole, then switches to it) and its school.
 */
export const NEIS_RECORD_PATHS = {
  generation: { type: String, required: true },
  schoolCode: { type: String, required: true },
  schoolName: { type: String, required: true },
  officeCode: { type: String, required: true },
  officeName: { type: String, required: true },
} as const;
