import { expect } from 'chai';
import { NeisError, exponentialBackoff, parseEnvelope } from '../../src/neis/client.js';

/** NEIS's envelope, read without the network (the HTTP tests run the client against the fake). */
describe("NEIS: the client's envelope", () => {
  const page = (code: string, total: number, rows: unknown[]) => ({
    mealServiceDietInfo: [
      { head: [{ list_total_count: total }, { RESULT: { CODE: code, MESSAGE: '정상 처리되었습니다.' } }] },
      { row: rows },
    ],
  });
  const failure = (body: unknown): NeisError => {
    try {
      parseEnvelope('mealServiceDietInfo', body);
    } catch (err) {
      expect(err).to.be.instanceOf(NeisError);
      return err as NeisError;
    }
    throw new Error('expected a NeisError');
  };

  it('reads rows and the total of a successful page', () => {
    expect(parseEnvelope('mealServiceDietInfo', page('INFO-000', 3, [{ a: 1 }]))).to.deep.equal({
      kind: 'rows',
      total: 3,
      rows: [{ a: 1 }],
    });
  });

  it('tells "no data" (INFO-200) from a failure', () => {
    expect(parseEnvelope('mealServiceDietInfo', { RESULT: { CODE: 'INFO-200', MESSAGE: '해당하는 데이터가 없습니다.' } })).to.deep.equal({
      kind: 'empty',
    });
  });

  it('reports ERROR-* and INFO-300 as failures; only ERROR-500 and ERROR-600 are transient', () => {
    const bad = failure({ RESULT: { CODE: 'ERROR-290', MESSAGE: '인증키가 유효하지 않습니다.' } });
    expect([bad.code, bad.transient, bad.message]).to.deep.equal([
      'ERROR-290',
      false,
      'NEIS mealServiceDietInfo answered ERROR-290: 인증키가 유효하지 않습니다.',
    ]);
    expect(failure({ RESULT: { CODE: 'INFO-300' } }).transient).to.equal(false);
    expect(failure({ RESULT: { CODE: 'ERROR-337' } }).transient).to.equal(false);
    expect(failure({ RESULT: { CODE: 'ERROR-500' } }).transient).to.equal(true);
    expect(failure({ RESULT: { CODE: 'ERROR-600' } }).transient).to.equal(true);
  });

  it('reports bodies of another shape as malformed', () => {
    expect(failure([]).code).to.equal('MALFORMED');
    expect(failure({ other: 1 }).code).to.equal('MALFORMED');
    expect(failure({ mealServiceDietInfo: [{ head: [{ list_total_count: 1 }] }, { row: [] }] }).code).to.equal('MALFORMED');
    expect(failure({ mealServiceDietInfo: [{ head: [{ RESULT: { CODE: 'INFO-000' } }] }, { row: [] }] }).code).to.equal('MALFORMED');
  });

  it('backs off exponentially with jitter, within bounds', () => {
    const low = exponentialBackoff(500, 8000, () => 0);
    const high = exponentialBackoff(500, 8000, () => 1);
    expect([1, 2, 3, 4, 5, 6].map(low)).to.deep.equal([250, 500, 1000, 2000, 4000, 4000]);
    expect([1, 2, 3, 4, 5, 6].map(high)).to.deep.equal([500, 1000, 2000, 4000, 8000, 8000]);
  });
});
