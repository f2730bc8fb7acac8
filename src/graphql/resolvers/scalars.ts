import { GraphQLScalarType, Kind } from 'graphql';

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

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a real calendar date written YYYY-MM-DD. */
export function isLocalDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [, y, m, d] = match.map(Number) as [number, number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** LocalDate: an ISO 8601 calendar date, YYYY-MM-DD, that exists on the calendar. */
export const LocalDate = new GraphQLScalarType<string, string>({
  name: 'LocalDate',
  description: 'An ISO 8601 calendar date, YYYY-MM-DD.',
  serialize: (value) => String(value),
  parseValue: (value) => {
    if (typeof value !== 'string' || !isLocalDate(value)) throw new TypeError('LocalDate must be a real date written YYYY-MM-DD');
    return value;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING || !isLocalDate(ast.value)) throw new TypeError('LocalDate must be a real date written YYYY-MM-DD');
    return ast.value;
  },
});
