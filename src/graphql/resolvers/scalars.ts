import { GraphQLScalarType, Kind } from 'graphql';
import { isCalendarDate } from '../../calendar.js';

/** Long: a safe JSON integer (ids and counts never exceed 2^53 here). */
export const Long = new GraphQLScalarType<number, number>({
  name: 'Long',
  description: 'A 64-bit integer (ids, counts), sent as a JSON number.',
  serialize: (value) => Number(value),
  parseValue: (value) => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new TypeError('Long must be an integer');
    return value;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.INT) throw new TypeError('Long must be an integer');
    const value = Number(ast.value);
    if (!Number.isSafeInteger(value)) throw new TypeError('Long is out of range');
    return value;
  },
});

/** LocalDate: an ISO 8601 calendar date, YYYY-MM-DD, that exists on the calendar. */
export const LocalDate = new GraphQLScalarType<string, string>({
  name: 'LocalDate',
  description: 'An ISO 8601 calendar date, YYYY-MM-DD.',
  serialize: (value) => String(value),
  parseValue: (value) => {
    if (typeof value !== 'string' || !isCalendarDate(value)) throw new TypeError('LocalDate must be a real date written YYYY-MM-DD');
    return value;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING || !isCalendarDate(ast.value)) throw new TypeError('LocalDate must be a real date written YYYY-MM-DD');
    return ast.value;
  },
});
