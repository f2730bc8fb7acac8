import { expect } from 'chai';
import { parse } from 'graphql';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { z } from 'zod';
import { toStudentRecord } from '../../src/data/models/student.model.js';
import { excludedRoles, studentFilter, studentSort } from '../../src/data/queries/students.js';
import { measureOperation } from '../../src/graphql/limits.js';
import { loadTypeDefs } from '../../src/graphql/server.js';
import { isLocalDate } from '../../src/graphql/resolvers/scalars.js';
import { boolParam, dateParam, enumParam, intParam, parseQuery, textParam } from '../../src/rest/v1/params.js';
import { ResponseCache, etagOf, matchesIfNoneMatch } from '../../src/rest/v1/response-cache.js';
import { BadRequestError } from '../../src/errors/index.js';

describe('unit: student record rule', () => {
  const base = {
    _id: 7, name: 'Kim', sex: 'MAN', email: 'Kim@School.test', grade: 2, classNum: 3, number: 12, major: 'AI',
    dormitoryFloor: 3, dormitoryRoom: 305, majorClubId: 1, autonomousClubId: null,
  } as const;

  it('derives studentNumber as grade, class, two-digit number', () => {
    const s = toStudentRecord({ ...base, role: 'GENERAL_STUDENT' });
    expect([s.studentNumber, s.email, s.enrolledRank, s.dormitoryRank]).to.deep.equal([2312, 'kim@school.test', 0, 0]);
  });

  it('refuses an enrolled student without grade, class, number or major', () => {
    expect(() => toStudentRecord({ ...base, grade: null, role: 'GENERAL_STUDENT' })).to.throw(
      'student 7: grade is required for an enrolled (GENERAL_STUDENT) student',
    );
    expect(() => toStudentRecord({ ...base, major: null, role: 'STUDENT_COUNCIL' })).to.throw('major is required');
  });

  for (const role of ['GRADUATE', 'WITHDRAWN'] as const) {
    it(`a ${role} student has null grade, classNum, number, studentNumber and major`, () => {
      const s = toStudentRecord({ ...base, role });
      expect([s.grade, s.classNum, s.number, s.studentNumber, s.major, s.enrolledRank]).to.deep.equal([null, null, null, null, null, 1]);
    });
  }
});

describe('unit: enrolment rules and sorts', () => {
  const cases: [boolean, boolean, boolean, string[]][] = [
    [false, false, false, ['GRADUATE', 'WITHDRAWN']],
    [false, true, false, ['WITHDRAWN']],
    [false, false, true, ['GRADUATE']],
    [false, true, true, []],
    [true, false, false, ['GRADUATE', 'WITHDRAWN']],
    [true, true, false, ['GRADUATE', 'WITHDRAWN']],
    [true, false, true, ['GRADUATE', 'WITHDRAWN']],
    [true, true, true, ['GRADUATE', 'WITHDRAWN']],
  ];
  for (const [onlyEnrolled, includeGraduates, includeWithdrawn, excluded] of cases) {
    it(`onlyEnrolled=${onlyEnrolled} includeGraduates=${includeGraduates} includeWithdrawn=${includeWithdrawn} excludes [${excluded.join(', ')}]`, () => {
      expect(excludedRoles({ onlyEnrolled, includeGraduates, includeWithdrawn })).to.deep.equal(excluded);
    });
  }

  it('an explicit role that the rules exclude matches nothing', () => {
    expect(studentFilter({ role: 'GRADUATE' })).to.deep.equal({ role: { $in: [] } });
    expect(studentFilter({ role: 'GRADUATE', includeGraduates: true })).to.deep.equal({ role: 'GRADUATE' });
  });

  it('nullable sorts keep nulls last in both directions and end with the id', () => {
    expect(studentSort('STUDENT_NUMBER', -1)).to.deep.equal({ enrolledRank: 1, grade: -1, classNum: -1, number: -1, _id: 1 });
    expect(studentSort('DORMITORY_ROOM', 1)).to.deep.equal({ dormitoryRank: 1, dormitoryRoom: 1, _id: 1 });
    expect(studentSort(undefined, 1)).to.deep.equal({ _id: 1 });
    expect(studentSort('ID', -1)).to.deep.equal({ _id: -1 });
  });

  it('substring filters take the text literally', () => {
    expect(studentFilter({ name: 'a.b*' })).to.deep.include({ name: { $regex: 'a\\.b\\*', $options: 'i' } });
  });
});

describe('unit: strict query parsing', () => {
  const schema = z.object({
    n: intParam({ min: 1, max: 3 }).optional(),
    b: boolParam().optional(),
    e: enumParam(['ASC', 'DESC']).optional(),
    t: textParam().optional(),
    d: dateParam().optional(),
  });
  const message = (query: Record<string, string | string[]>) => {
    try {
      parseQuery(schema, query);
    } catch (err) {
      expect(err).to.be.instanceOf(BadRequestError);
      return (err as Error).message;
    }
    return 'no error';
  };

  it('accepts exact values and ignores unknown parameters', () => {
    expect(parseQuery(schema, { n: '3', b: 'TRUE', e: 'DESC', t: '', d: '2024-02-29', other: 'x' })).to.deep.equal({
      n: 3, b: true, e: 'DESC', t: undefined, d: '2024-02-29',
    });
  });

  it('names the parameter, the rule and the value for each kind of bad input', () => {
    expect(message({ n: '4' })).to.equal("Invalid parameter 'n': must be an integer from 1 to 3 (got '4').");
    expect(message({ n: '1.5' })).to.equal("Invalid parameter 'n': must be an integer from 1 to 3 (got '1.5').");
    expect(message({ n: '0x2' })).to.equal("Invalid parameter 'n': must be an integer from 1 to 3 (got '0x2').");
    expect(message({ n: ['1', '2'] })).to.equal("Invalid parameter 'n': must be given only once (got '1', '2').");
    expect(message({ b: 'yes' })).to.equal("Invalid parameter 'b': must be true or false (got 'yes').");
    expect(message({ e: 'asc' })).to.equal("Invalid parameter 'e': must be one of ASC, DESC (got 'asc').");
    expect(message({ d: '2023-02-29' })).to.equal("Invalid parameter 'd': must be a real calendar date written YYYY-MM-DD (got '2023-02-29').");
    expect(message({ t: 'x'.repeat(101) })).to.match(/^Invalid parameter 't': must be at most 100 characters/);
  });

  it('knows real calendar dates', () => {
    expect(['2024-02-29', '2026-12-31'].map(isLocalDate)).to.deep.equal([true, true]);
    expect(['2023-02-29', '2026-13-01', '2026-1-01', '20260101'].map(isLocalDate)).to.deep.equal([false, false, false, false]);
  });
});

describe('unit: conditional requests and the answer cache', () => {
  const body = Buffer.from('{"status":"OK"}');
  const etag = etagOf(body);

  it('makes a strong ETag from the exact bytes', () => {
    expect(etag).to.match(/^"[A-Za-z0-9_-]{32}"$/);
    expect(etagOf(Buffer.from('{"status":"OK"} '))).not.to.equal(etag);
  });

  it('compares If-None-Match weakly, with * and lists', () => {
    expect(matchesIfNoneMatch(etag, etag)).to.equal(true);
    expect(matchesIfNoneMatch(`W/${etag}`, etag)).to.equal(true);
    expect(matchesIfNoneMatch(`"other", ${etag}`, etag)).to.equal(true);
    expect(matchesIfNoneMatch('*', etag)).to.equal(true);
    expect(matchesIfNoneMatch('"other"', etag)).to.equal(false);
    expect(matchesIfNoneMatch('', etag)).to.equal(false);
  });

  it('serves an answer only at the data version it was made for, within a byte budget', () => {
    const cache = new ResponseCache(40);
    cache.set('a', 1, { body: Buffer.alloc(20), etag: '"a"' });
    expect(cache.get('a', 1)?.etag).to.equal('"a"');
    expect(cache.get('a', 2)).to.equal(undefined);
    cache.set('b', 1, { body: Buffer.alloc(20), etag: '"b"' });
    cache.set('c', 1, { body: Buffer.alloc(20), etag: '"c"' });
    expect([cache.get('a', 1), cache.get('b', 1)?.etag, cache.get('c', 1)?.etag]).to.deep.equal([undefined, '"b"', '"c"']);
  });
});

describe('unit: GraphQL cost and depth', () => {
  const schema = makeExecutableSchema({ typeDefs: loadTypeDefs() });
  const measure = (query: string, variables: Record<string, unknown> = {}) => {
    const document = parse(query);
    const operation = document.definitions[0];
    if (operation?.kind !== 'OperationDefinition') throw new Error('no operation');
    return measureOperation({ schema, fragments: {}, variables }, operation);
  };

  it('scales with the page size, from arguments or variables', () => {
    expect(measure('{ students(size: 10) { students { id majorClub { id } } } }')).to.deep.equal({ cost: 1 + 10 * (1 + 1), depth: 3 });
    expect(measure('query($s: Int) { students(size: $s) { students { id } } }', { s: 1000 }).cost).to.equal(1 + 1000);
    expect(measure('{ students { students { id } } }').cost).to.equal(1 + 300);
  });

  it('multiplies nested unsized lists', () => {
    expect(measure('{ clubs(size: 100) { clubs { participants { id } } } }').cost).to.equal(1 + 100 * (1 + 50));
  });
});
