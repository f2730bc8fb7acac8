import { Schema, type Connection, type Model } from 'mongoose';
import { defineModel } from './define.js';
import { NEIS_RECORD_PATHS, type NeisSchoolFields } from './neis-record.js';

/** The spec's MealType values, in serving order. */
import { MealType } from '../__generated__/enums.js';

export type { MealType } from '../__generated__/enums.js';

/** Sort rank of a meal type: the order of a day's meals (docs/decisions.md). */
export const MEAL_TYPE_RANK: Readonly<Record<MealType, number>> = { BREAKFAST: 1, LUNCH: 2, DINNER: 3 };

/** A meal exactly as the API shows it (the spec's Meal record). */
export interface MealRecord extends NeisSchoolFields {
  mealId: string;
  mealDate: string;
  mealType: MealType;
  mealMenu: string[];
  mealAllergyInfo: string[] | null;
  mealCalories: string | null;
  originInfo: string | null;
  nutritionInfo: string | null;
  mealServeCount: number | null;
}

/** A stored meal: the record, the sync generation it belongs to, and its sort rank. */
export interface MealDoc extends MealRecord {
  generation: string;
  mealTypeRank: number;
}

const mealSchema = new Schema(
  {
    ...NEIS_RECORD_PATHS,
    mealId: { type: String, required: true },
    mealDate: { type: String, required: true },
    mealType: { type: String, enum: Object.values(MealType), required: true },
    // Numeric so that "by date, then breakfast, lunch, dinner" is a plain index sort.
    mealTypeRank: { type: Number, required: true },
    mealMenu: { type: [String], required: true },
    mealAllergyInfo: { type: [String], default: undefined },
    mealCalories: { type: String, default: null },
    originInfo: { type: String, default: null },
    nutritionInfo: { type: String, default: null },
    mealServeCount: { type: Number, default: null },
  },
  { versionKey: false, collection: 'neis_meals' },
);

mealSchema.index({ generation: 1, mealDate: 1, mealTypeRank: 1 });

export type MealModel = Model<MealDoc>;

/** The meals model (collection neis_meals). */
export function mealModel(connection: Connection): MealModel {
  return defineModel<MealDoc>(connection, 'Meal', mealSchema);
}
