import { expect } from 'chai';
import type { CommandStartedEvent } from 'mongodb';
import type { Database } from '../../src/data/database.js';
import { MAX_COST, MAX_DEPTH, MAX_ROOT_FIELDS, MAX_TOKENS, ROUND_TRIP_COST, UNSIZED_LIST } from '../../src/graphql/limits.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { expectEnvelope } from '../helpers/expect.js';
import { buildClub, buildStudent, insertSchool, issueKey, STUDENT_RECORD_FIELDS } from '../helpers/factories.js';

/**
 * The static limits of POST /graphql (src/graphql/limits.ts): documents built to be costly refused
 * with 400 in under a second and before any database work, one test per cap, the cost of variables
 * and date ranges, and rate-limit points spent in proportion to the cost.
 */

interface GraphQLBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** `n` aliased copies of `field`, written compactly (as a caller squeezing under the body limit would). */
function aliases(n: number, field: string): string {
  return Array.from({ length: n }, (_, i) => `a${i}:${field}`).join(' ');
}

/** The collections of served data: a refused document must send nothing to them. */
const DATA_COLLECTIONS = new Set(['students', 'clubs', 'projects', 'neis_meals', 'neis_schedules', 'neis_timetables', 'neis_state']);

describe('GraphQL: the limits of POST /graphql', () => {
  let db: Database & { drop(): Promise<void> };
  let t: TestApp;
  let key: string;
  const dataCommands: string[] = [];

  const gql = async (query: string, variables?: Record<string, unknown>, apiKey = key) => {
    const started = performance.now();
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-KEY': apiKey },
      body: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
    });
    const body = (await res.json()) as GraphQLBody;
    return { res, body, ms: performance.now() - started };
  };

  /** Asserts a refusal by a limit: 400, no data, one BAD_REQUEST error with exactly `message`. */
  const expectRefused = (answer: { res: Response; body: GraphQLBody }, message: string, code = 'BAD_REQUEST') => {
    expect(answer.res.status).to.equal(400);
    expect(answer.body.data).to.equal(undefined);
    expect(answer.body.errors).to.have.length(1);
    expect(answer.body.errors?.[0]?.message).to.equal(message);
    expect(answer.body.errors?.[0]?.extensions?.code).to.equal(code);
  };

  const expectServed = (answer: { res: Response; body: GraphQLBody }) => {
    expect(answer.body.errors, JSON.stringify(answer.body.errors)).to.equal(undefined);
    expect(answer.res.status).to.equal(200);
  };

  before(async () => {
    db = await createTestDatabase('graphql_limits', { monitorCommands: true });
    db.client.on('commandStarted', (e: CommandStartedEvent) => {
      const collection = String(e.command[e.commandName]);
      if (DATA_COLLECTIONS.has(collection)) dataCommands.push(`${e.commandName} ${collection}`);
    });
    await insertSchool(db, {
      students: [
        buildStudent({ _id: 1, name: 'Kim Minsu', majorClubId: 10 }),
        buildStudent({ _id: 2, name: 'Lee Jiwoo', majorClubId: 10 }),
      ],
      clubs: [buildClub({ _id: 10, name: 'Robotics', leaderId: 1 })],
    });
    t = await buildTestApp('graphql_limits', { db, surfaces: ['data'] });
    key = await issueKey(db, { rateLimit: { points: 1_000_000, durationSeconds: 60 } });
  });
  after(async () => {
    await t.close();
    await db.drop();
  });
  beforeEach(() => {
    dataCommands.length = 0;
  });

  describe('documents built to be costly (thousands of aliases, a size hidden in a variable default) are refused with 400 in under a second, before any database work', () => {
    const tokenMessage = `Syntax Error: Document contains more that ${MAX_TOKENS} tokens. Parsing aborted.`;

    it('1,999 aliases of meals for a year', async () => {
      const query = `query($f:LocalDate,$t:LocalDate){${aliases(1999, 'meals(fromDate:$f,toDate:$t){mealId}')}}`;
      const answer = await gql(query, { f: '2026-03-01', t: '2027-02-28' });
      expectRefused(answer, tokenMessage, 'GRAPHQL_PARSE_FAILED');
      expect(answer.ms).to.be.below(1000);
      expect(dataCommands).to.deep.equal([]);
    });

    it('2,700 aliases of students(size: 1) { totalElements }', async () => {
      const answer = await gql(`{${aliases(2700, 'students(size:1){totalElements}')}}`);
      expectRefused(answer, tokenMessage, 'GRAPHQL_PARSE_FAILED');
      expect(answer.ms).to.be.below(1000);
      expect(dataCommands).to.deep.equal([]);
    });

    it('clubs(size: $s) costed with the variable default $s = 1000, not the field default 100', async () => {
      const query = `query($s: Int = 1000) {
        a: clubs(size: $s) { clubs { name leader { name } participants { name } } }
        b: clubs(size: $s) { clubs { name } }
        c: clubs(size: $s) { clubs { name participants { name } } }
      }`;
      // Each root field: a round trip, the page object, and `size` clubs holding their objects.
      const cost =
        ROUND_TRIP_COST +
        1 +
        1000 * (1 + 1 + UNSIZED_LIST) +
        (ROUND_TRIP_COST + 1 + 1000 * 1) +
        (ROUND_TRIP_COST + 1 + 1000 * (1 + UNSIZED_LIST));
      expect(cost).to.equal(3 * ROUND_TRIP_COST + 104_003);
      const answer = await gql(query);
      expectRefused(
        answer,
        `Query is too costly: estimated cost ${cost}, at most ${MAX_COST} allowed; ask for smaller pages, shorter date ranges or fewer nested lists.`,
      );
      expect(answer.ms).to.be.below(1000);
      expect(dataCommands).to.deep.equal([]);
      // With the variable at the field's default the same document is served.
      expectServed(await gql(query, { s: 100 }));
    });
  });

  describe('one cap each', () => {
    it(`root fields and aliases: ${MAX_ROOT_FIELDS} are served, one more is refused`, async () => {
      expectServed(await gql(`{${aliases(MAX_ROOT_FIELDS, 'viewerScopes')}}`));
      expectRefused(
        await gql(`{${aliases(MAX_ROOT_FIELDS + 1, 'viewerScopes')}}`),
        `Query has too many root fields and aliases: ${MAX_ROOT_FIELDS + 1}, at most ${MAX_ROOT_FIELDS} allowed.`,
      );
      // Aliases below the root count too, and so do root fields spread from fragments.
      expectRefused(
        await gql(`{ students { students { ${aliases(MAX_ROOT_FIELDS, 'id')} } } }`),
        `Query has too many root fields and aliases: ${MAX_ROOT_FIELDS + 1}, at most ${MAX_ROOT_FIELDS} allowed.`,
      );
      expectRefused(
        await gql(
          `{ ...F ...G } fragment F on Query { ${aliases(20, 'viewerScopes')} } fragment G on Query { ${aliases(11, 'viewerScopes')} }`,
        ),
        `Query has too many root fields and aliases: 31, at most ${MAX_ROOT_FIELDS} allowed.`,
      );
      expect(dataCommands).to.deep.equal([]);
    });

    it(`depth: ${MAX_DEPTH} object levels are served, ${MAX_DEPTH + 1} are refused (also through fragments)`, async () => {
      const deep = (levels: number) => {
        let inner = 'id';
        for (let level = levels; level > 2; level--) inner = `${level % 2 === 1 ? 'majorClub' : 'leader'} { ${inner} }`;
        return `{ students { students { ${inner} } } }`;
      };
      expectServed(await gql(deep(MAX_DEPTH)));
      dataCommands.length = 0;
      expectRefused(await gql(deep(MAX_DEPTH + 1)), `Query is too deep: depth ${MAX_DEPTH + 1}, at most ${MAX_DEPTH} allowed.`);
      expectRefused(
        await gql(
          '{ students { students { ...C } } } fragment C on Student { majorClub { leader { majorClub { leader { majorClub { leader { majorClub { leader { majorClub { id } } } } } } } } } }',
        ),
        `Query is too deep: depth 11, at most ${MAX_DEPTH} allowed.`,
      );
      expect(dataCommands).to.deep.equal([]);
    });

    it(`tokens: a document of ${MAX_TOKENS} tokens is served, one more token is refused by the parser`, async () => {
      // `{ students { students {` and `} } }` are 8 tokens; the rest are field names (15 kinds,
      // repeated, so that graphql's check of overlapping fields stays within its own budget).
      const names = STUDENT_RECORD_FIELDS.filter((name) => !name.endsWith('Club'));
      const fields = (n: number) =>
        `{ students { students { ${Array.from({ length: n }, (_, i) => names[i % names.length]).join(' ')} } } }`;
      expectServed(await gql(fields(MAX_TOKENS - 8)));
      dataCommands.length = 0;
      const answer = await gql(fields(MAX_TOKENS - 7));
      expectRefused(answer, `Syntax Error: Document contains more that ${MAX_TOKENS} tokens. Parsing aborted.`, 'GRAPHQL_PARSE_FAILED');
      expect(dataCommands).to.deep.equal([]);
    });

    it('text arguments: 100 characters are served, 101 are refused as REST refuses them (literal or variable)', async () => {
      expectServed(await gql(`{ students(filter: { name: "${'k'.repeat(100)}" }) { totalElements } }`));
      dataCommands.length = 0;
      const long = 'k'.repeat(101);
      const message = `Invalid parameter 'name': must be at most 100 characters (got '${'k'.repeat(64)}…').`;
      expectRefused(await gql(`{ students(filter: { name: "${long}" }) { totalElements } }`), message);
      expectRefused(await gql('query($f: StudentFilter) { students(filter: $f) { totalElements } }', { f: { name: long } }), message);
      expectRefused(
        await gql('query($n: String) { clubs(filter: { clubName: $n }) { totalElements } }', { n: long }),
        `Invalid parameter 'clubName': must be at most 100 characters (got '${'k'.repeat(64)}…').`,
      );
      expect(dataCommands).to.deep.equal([]);
      // REST says the same about the same text.
      await expectEnvelope(await t.request(`/v1/students?name=${long}`, { headers: { 'X-API-KEY': key } }), 400, 'BAD_REQUEST', message);
    });
  });

  describe('cost', () => {
    const tooCostly = (cost: number) =>
      `Query is too costly: estimated cost ${cost}, at most ${MAX_COST} allowed; ask for smaller pages, shorter date ranges or fewer nested lists.`;

    it('is computed on coerced variables, defaults included', async () => {
      const query = 'query($s: Int = 1000) { clubs(size: $s) { clubs { participants { id } } } }';
      const cost = ROUND_TRIP_COST + 1 + 1000 * (1 + UNSIZED_LIST);
      expectRefused(await gql(query), tooCostly(cost));
      expectRefused(await gql(query, { s: 1000 }), tooCostly(cost));
      expectServed(await gql(query, { s: 100 }));
      // A variable that does not coerce is refused by graphql itself, before any resolver runs.
      dataCommands.length = 0;
      const bad = await gql(query, { s: 'many' });
      expect(bad.res.status).to.equal(400);
      expect(bad.body.errors?.[0]?.message).to.equal(
        'Variable "$s" got invalid value "many"; Int cannot represent non-integer value: "many"',
      );
      expect(dataCommands).to.deep.equal([]);
    });

    it('a date range costs its days times the rows a day holds (meals 3, events 5, periods 10)', async () => {
      // 2026-03-01..2027-02-28 is 365 days.
      const meals = ROUND_TRIP_COST + 365 * 3;
      const year = 'fromDate: "2026-03-01", toDate: "2027-02-28"';
      const fits = Math.floor(MAX_COST / meals);
      expectServed(await gql(`{${aliases(fits, `meals(${year}) { mealId }`)}}`));
      expectRefused(await gql(`{${aliases(fits + 1, `meals(${year}) { mealId }`)}}`), tooCostly((fits + 1) * meals));
      const schedules = ROUND_TRIP_COST + 365 * 5;
      expectRefused(
        await gql(`{${aliases(Math.floor(MAX_COST / schedules) + 1, `schedules(${year}) { scheduleId }`)}}`),
        tooCostly((Math.floor(MAX_COST / schedules) + 1) * schedules),
      );
      const timetables = ROUND_TRIP_COST + 365 * 10;
      expectRefused(await gql(`{${aliases(6, `timetables(grade: 1, classNum: 1, ${year}) { timetableId }`)}}`), tooCostly(6 * timetables));
      // A single day, given or today's (the injected clock's), costs one day's rows.
      const oneDay = ROUND_TRIP_COST + 3;
      expectRefused(
        await gql(
          `{ m: meals { mealId } d: meals(date: "2026-03-02") { mealId } s: students(size: 1000) { students { majorClub { participants { id } } } } }`,
        ),
        tooCostly(2 * oneDay + ROUND_TRIP_COST + 1 + 1000 * (1 + 1 * (1 + UNSIZED_LIST))),
      );
    });
  });

  describe('rate-limit points follow the cost', () => {
    it('a costly document spends one point per 1000 of its cost, and the headers say so', async () => {
      const own = await issueKey(db, { rateLimit: { points: 100, durationSeconds: 60 } });
      // 500 + 1 + 1000 * (1 + 1) = 2501: three points.
      const three = await gql('{ students(size: 1000) { students { id majorClub { id } } } }', undefined, own);
      expectServed(three);
      expect(three.res.headers.get('ratelimit')).to.match(/^"default";r=97;t=(59|60)$/);
      expect(three.res.headers.get('x-ratelimit-remaining')).to.equal('97');
      expect(three.res.headers.get('ratelimit-policy')).to.equal('"default";q=100;w=60');
      // A cheap document still spends one point.
      const one = await gql('{ viewerScopes }', undefined, own);
      expect(one.res.headers.get('x-ratelimit-remaining')).to.equal('96');
      // 12 aliases of a year of meals: 12 * (500 + 365 * 3) = 19140, twenty points.
      expect(12 * (ROUND_TRIP_COST + 365 * 3)).to.equal(19_140);
      const twenty = await gql(`{${aliases(12, 'meals(fromDate: "2026-03-01", toDate: "2027-02-28") { mealId }')}}`, undefined, own);
      expectServed(twenty);
      expect(twenty.res.headers.get('x-ratelimit-remaining')).to.equal('76');
    });

    it('a document costing more points than remain is refused (429 envelope) and keeps the points it did not get', async () => {
      const small = await issueKey(db, { rateLimit: { points: 10, durationSeconds: 60 } });
      const res = await t.request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-API-KEY': small },
        body: JSON.stringify({ query: `{${aliases(10, 'meals(fromDate: "2026-03-01", toDate: "2027-02-28") { mealId }')}}` }),
      });
      // 10 * (500 + 365 * 3) = 15950: sixteen points, of ten.
      const retryAfter = res.headers.get('retry-after') ?? '';
      expect(Number(retryAfter)).to.be.within(1, 60);
      await expectEnvelope(
        res,
        429,
        'TOO_MANY_REQUESTS',
        `This query costs 16 rate-limit points (one per 1000 of its estimated cost 15950) and 9 remain; retry after ${retryAfter} seconds or ask for less.`,
      );
      // The door took one point; the other fifteen were given back.
      expect(res.headers.get('x-ratelimit-remaining')).to.equal('9');
      expect(res.headers.get('ratelimit')).to.match(/^"default";r=9;t=\d+$/);
      expect(dataCommands.filter((c) => c.includes('neis'))).to.deep.equal([]);
      const after = await gql('{ viewerScopes }', undefined, small);
      expectServed(after);
      expect(after.res.headers.get('x-ratelimit-remaining')).to.equal('8');
    });
  });
});
