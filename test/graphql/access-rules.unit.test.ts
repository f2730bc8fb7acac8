import { makeExecutableSchema } from '@graphql-tools/schema';
import { expect } from 'chai';
import { parse } from 'graphql';
import { guardRootFields, rootFieldRules, UndeclaredAccessError } from '../../src/graphql/access.js';
import { resolvers } from '../../src/graphql/resolvers/index.js';
import { buildSchema, loadTypeDefs } from '../../src/graphql/schema.js';

/** The schema with one more SDL document, built as src/graphql/schema.ts builds it. */
function schemaWith(sdl: string) {
  return guardRootFields(makeExecutableSchema({ typeDefs: [...loadTypeDefs(), parse(sdl)], resolvers }));
}

describe('GraphQL: root-field rules (src/graphql/access.ts), declared in the schema or the schema does not build', () => {
  it('the schema builds, and every Query and Mutation field has a rule', () => {
    const schema = buildSchema();
    const rules = rootFieldRules(schema);
    const fields = [schema.getQueryType(), schema.getMutationType()].flatMap((type) =>
      Object.keys(type?.getFields() ?? {}).map((field) => `${type?.name ?? ''}.${field}`),
    );
    expect([...rules.keys()].sort()).to.deep.equal(fields.sort());
  });

  it('a mutation added without @access stops the build, naming it', () => {
    expect(() => schemaWith('extend type Mutation { forgetEverything: Boolean }')).to.throw(
      UndeclaredAccessError,
      'Mutation.forgetEverything declares no @access rule',
    );
  });

  it('a query without @access, DATA without scopes, and STAFF with scopes stop the build too', () => {
    expect(() => schemaWith('extend type Query { secrets: String }')).to.throw(
      UndeclaredAccessError,
      'Query.secrets declares no @access rule',
    );
    expect(() => schemaWith('extend type Query { secrets: String @access(rule: DATA) }')).to.throw(
      UndeclaredAccessError,
      'Query.secrets: @access(rule: DATA) needs its scopes.',
    );
    expect(() => schemaWith('extend type Mutation { wipe: Boolean @access(rule: STAFF, scopes: [STUDENT_READ]) }')).to.throw(
      UndeclaredAccessError,
      'Mutation.wipe: @access(rule: STAFF) takes no scopes.',
    );
  });

  it('a declared mutation builds', () => {
    expect(rootFieldRules(schemaWith('extend type Mutation { fine: Boolean @access(rule: STAFF) }')).get('Mutation.fine')).to.deep.equal({
      rule: 'STAFF',
    });
  });
});
