import { expect } from 'chai';
import type { GraphQLSchema } from 'graphql';
import { accountPrincipal, type Principal } from '../../src/auth/principal.js';
import { findStanding } from '../../src/data/accounts/standing.js';
import { rootFieldRules, type AccessRule } from '../../src/graphql/access.js';
import { createContext } from '../../src/graphql/context.js';
import { buildSchema } from '../../src/graphql/schema.js';
import { createGraphQLServer, runOperation, type GraphQLServer } from '../../src/graphql/server.js';
import { createLogger } from '../../src/logger.js';
import { AccountService } from '../../src/oauth/accounts.js';
import type { PageRoute } from '../../src/surfaces/types.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { issueKey } from '../helpers/factories.js';
import { documentFor, rootFieldNames } from '../helpers/graphql.js';
import { signInToConsole, type ConsoleSession } from '../helpers/oauth.js';

/**
 * The declared rules, walked from their tables (src/auth/policy.ts): every GraphQL root field
 * by its @access directive (src/graphql/access.ts) and every page route by its route table's
 * rule (src/surfaces/web/routes.ts), as anonymous, an API key with every scope, USER, TEACHER
 * and an ADMIN without a second factor under ADMIN_MFA=required. A new mutation or page is walked
 * here without editing this file.
 */

const PASSWORD = 'the walk password 1';
const PEOPLE = ['USER', 'TEACHER', 'ADMIN'] as const;
type Person = (typeof PEOPLE)[number];

describe('accounts and sign-in: the declared rules, every GraphQL root field and every page route walked from their tables', function () {
  this.timeout(120000);
  let t: TestApp;
  let schema: GraphQLSchema;
  let server: GraphQLServer;
  let key: string;
  const ids: Partial<Record<Person, number>> = {};
  const sessions: Partial<Record<Person, ConsoleSession>> = {};

  before(async () => {
    t = await buildTestApp('access_rules', { env: { ADMIN_MFA: 'required', TEACHER_KEYS_MFA: 'true' } });
    schema = buildSchema();
    server = await createGraphQLServer(createLogger('silent'), schema);
    key = await issueKey(t.db);
    for (const role of PEOPLE) {
      const email = `walk-${role.toLowerCase()}@school.test`;
      ids[role] = (await new AccountService(t.db).create({ email, password: PASSWORD, role })).id;
      sessions[role] = await signInToConsole(t, { email, password: PASSWORD });
    }
  });
  after(async () => {
    await server.stop();
    await t.close();
  });

  /** The principal our pages build for a person signed in with their password alone (src/surfaces/web/web.ts, identify). */
  async function signedInAs(role: Person): Promise<Principal> {
    const standing = await findStanding(t.db, ids[role] ?? 0);
    if (!standing) throw new Error(`no standing for ${role}`);
    return accountPrincipal(
      standing,
      `walk-${role.toLowerCase()}@school.test`,
      { secondFactor: false, authTime: Date.now() },
      t.config.policy,
    );
  }

  async function runAs(principal: Principal | undefined, document: string): Promise<string | undefined> {
    const context = createContext({ principal, db: t.db, log: createLogger('silent'), timeZone: 'Asia/Seoul', now: () => new Date() });
    try {
      await runOperation(server, { query: document, variables: {} }, context);
      return undefined;
    } catch (err) {
      return (err as { code?: string }).code;
    }
  }

  it('every root field declares a rule; the staff fields are refused to anonymous, an API key, USER, TEACHER and an ADMIN without a second factor', async () => {
    const rules = rootFieldRules(schema);
    const mutationFields = rootFieldNames(schema, 'Mutation');
    expect(mutationFields.length).to.be.greaterThan(20);
    for (const name of mutationFields) expect(rules.get(`Mutation.${name}`), name).to.deep.equal({ rule: 'STAFF' });
    const staff = [...rules].filter(([, rule]) => rule.rule === 'STAFF');
    const anonymous = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: documentFor(schema, 'Mutation', mutationFields[0] ?? '') }),
    });
    expect(anonymous.status).to.equal(401);
    expect(staff.filter(([name]) => name.startsWith('Query.')).length).to.be.greaterThan(5);
    for (const [name] of staff) {
      const [operation, field] = name.split('.') as ['Query' | 'Mutation', string];
      const document = documentFor(schema, operation, field);
      // Over HTTP as /graphql takes it (without a key it is 401 before any document is read: below), with a key with every scope.
      const keyed = (await (
        await t.request('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'X-API-KEY': key },
          body: JSON.stringify({ query: document }),
        })
      ).json()) as { errors?: { extensions?: { code?: string } }[] };
      expect(keyed.errors?.[0]?.extensions?.code, `${name} with an API key`).to.equal('FORBIDDEN');
      // In-process as the admin console runs it, as each person.
      expect(await runAs(undefined, document), `${name} anonymous`).to.equal('UNAUTHORIZED');
      for (const role of PEOPLE) expect(await runAs(await signedInAs(role), document), `${name} as ${role}`).to.equal('FORBIDDEN');
    }
  });

  it('the data fields need their scopes: a key without any is refused every one of them', async () => {
    const rules = rootFieldRules(schema);
    const data = [...rules].filter((entry): entry is [string, Extract<AccessRule, { rule: 'DATA' }>] => entry[1].rule === 'DATA');
    expect(data.map(([name]) => name)).to.include.members([
      'Query.students',
      'Query.clubs',
      'Query.projects',
      'Query.meals',
      'Query.changes',
    ]);
    for (const [name] of data) {
      const [, field] = name.split('.') as ['Query', string];
      // A signed-in USER holds no data scope.
      expect(await runAs(await signedInAs('USER'), documentFor(schema, 'Query', field)), name).to.equal('FORBIDDEN');
    }
  });

  it('every page route: anonymous is sent to sign in; USER and TEACHER get 403 on staff routes; an ADMIN without a second factor is sent to set one up', async () => {
    const pages: readonly PageRoute[] = t.app.pages;
    const guarded = pages.filter((p) => p.rule !== 'anyone');
    expect(guarded.filter((p) => p.rule === 'account').length).to.be.greaterThan(20);
    expect(guarded.filter((p) => p.rule === 'staff-fresh').length).to.be.greaterThan(40);
    const call = async (route: PageRoute, cookie: string): Promise<Response> => {
      const path = route.path.replace(/:\w+/g, 'x');
      const res = await fetch(`${t.url}${path}`, {
        method: route.method,
        redirect: 'manual',
        headers: {
          cookie,
          origin: t.url,
          accept: 'text/html',
          ...(route.method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(route.method === 'POST' ? { body: '' } : {}),
      });
      await res.arrayBuffer();
      return res;
    };
    for (const route of guarded) {
      const what = `${route.method} ${route.path} (${route.rule})`;
      const anonymous = await call(route, '');
      expect(anonymous.status, `${what} anonymous`).to.equal(303);
      expect(anonymous.headers.get('location'), what).to.match(/^\/web\/signin\?next=/);
      if (route.rule === 'account') continue;
      for (const role of ['USER', 'TEACHER'] as const) {
        expect((await call(route, sessions[role]?.jar.header() ?? '')).status, `${what} as ${role}`).to.equal(403);
      }
      const admin = await call(route, sessions.ADMIN?.jar.header() ?? '');
      expect(admin.status, `${what} as an ADMIN without a second factor`).to.equal(403);
    }
  });
});
