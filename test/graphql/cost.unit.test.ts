import { expect } from 'chai';
import { parse } from 'graphql';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { ROUND_TRIP_COST, measureOperation } from '../../src/graphql/limits.js';
import { loadTypeDefs } from '../../src/graphql/schema.js';

describe('GraphQL: cost and depth', () => {
  const schema = makeExecutableSchema({ typeDefs: loadTypeDefs() });
  /** Measures a document with already-coerced variables (the plugin coerces them first). */
  const measure = (query: string, variables: Record<string, unknown> = {}) => {
    const document = parse(query);
    const operation = document.definitions[0];
    if (operation?.kind !== 'OperationDefinition') throw new Error('no operation');
    return measureOperation({ schema, document, operation, variables, today: '2026-03-02' });
  };

  it('scales with the page size, from arguments or variables; each root field adds a round trip', () => {
    expect(measure('{ students(size: 10) { students { id majorClub { id } } } }')).to.deep.equal({
      cost: ROUND_TRIP_COST + 1 + 10 * (1 + 1),
      introspectionCost: 0,
      depth: 3,
      fields: 1,
    });
    expect(measure('query($s: Int) { students(size: $s) { students { id } } }', { s: 1000 }).cost).to.equal(ROUND_TRIP_COST + 1 + 1000);
    expect(measure('{ students { students { id } } }').cost).to.equal(ROUND_TRIP_COST + 1 + 300);
  });

  it('multiplies nested unsized lists', () => {
    expect(measure('{ clubs(size: 100) { clubs { participants { id } } } }').cost).to.equal(ROUND_TRIP_COST + 1 + 100 * (1 + 50));
  });
});
