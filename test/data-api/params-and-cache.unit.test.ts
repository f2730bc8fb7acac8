import { expect } from 'chai';
import { z } from 'zod';
import { isCalendarDate as isLocalDate } from '../../src/calendar.js';
import { BadRequestError } from '../../src/errors/index.js';
import { pathParameters, pathPattern } from '../../src/rest/endpoints.js';
import { boolParam, dateParam, enumParam, intParam, parseQuery, textParam } from '../../src/rest/params.js';
import { ResponseCache, etagOf, matchesIfNoneMatch } from '../../src/rest/response-cache.js';

describe('data API: strict query parsing', () => {
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
      n: 3,
      b: true,
      e: 'DESC',
      t: undefined,
      d: '2024-02-29',
    });
  });

  it('names the parameter, the rule and the value for each kind of bad input', () => {
    expect(message({ n: '4' })).to.equal("Invalid parameter 'n': must be an integer from 1 to 3 (got '4').");
    expect(message({ n: '1.5' })).to.equal("Invalid parameter 'n': must be an integer from 1 to 3 (got '1.5').");
    expect(message({ n: '0x2' })).to.equal("Invalid parameter 'n': must be an integer from 1 to 3 (got '0x2').");
    expect(message({ n: ['1', '2'] })).to.equal("Invalid parameter 'n': must be given only once (got '1', '2').");
    expect(message({ b: 'yes' })).to.equal("Invalid parameter 'b': must be true or false (got 'yes').");
    expect(message({ e: 'asc' })).to.equal("Invalid parameter 'e': must be one of ASC, DESC (got 'asc').");
    expect(message({ d: '2023-02-29' })).to.equal(
      "Invalid parameter 'd': must be a real calendar date written YYYY-MM-DD (got '2023-02-29').",
    );
    expect(message({ t: 'x'.repeat(101) })).to.match(/^Invalid parameter 't': must be at most 100 characters/);
  });

  it('knows real calendar dates', () => {
    expect(['2024-02-29', '2026-12-31'].map(isLocalDate)).to.deep.equal([true, true]);
    expect(['2023-02-29', '2026-13-01', '2026-1-01', '20260101'].map(isLocalDate)).to.deep.equal([false, false, false, false]);
  });
});

describe('data API: path parameters (src/rest/endpoints.ts)', () => {
  it('a path template matches one segment per parameter, captured in the order they are named', () => {
    const path = '/v1/clubs/{clubId}/projects/{id}';
    expect(pathParameters({ path })).to.deep.equal(['clubId', 'id']);
    expect(pathPattern(path).exec('/v1/clubs/7/projects/%ED%95%9C/')?.slice(1)).to.deep.equal(['7', '%ED%95%9C']);
    for (const other of ['/v1/clubs/7/projects', '/v1/clubs/7/projects/1/2', '/v1/clubs//projects/1', 'x/v1/clubs/7/projects/1'])
      expect(pathPattern(path).test(other), other).to.equal(false);
    // The rest of the template is matched literally.
    expect(pathPattern('/v1/a.b/{id}').test('/v1/aXb/1')).to.equal(false);
  });
});

describe('data API: conditional requests and the answer cache', () => {
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
