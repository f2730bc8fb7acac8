import { expect } from 'chai';
import { academicYearWindow, addDays, daysInclusive, fromCompactDate, nextDailyRun, todayIn, zonedInstant } from '../../src/calendar.js';
import { syncWindow } from '../../src/cli/commands/neis.js';
import type { NeisStateDoc } from '../../src/data/models/neis-state.model.js';
import { covers, replaceRange, segmentsWithin } from '../../src/data/neis/segments.js';
import { BadRequestError } from '../../src/errors/index.js';
import { resolveDateRange } from '../../src/graphql/dates.js';
import { staleReason } from '../../src/neis/scheduler.js';

describe('NEIS: dates, calendar arithmetic', () => {
  it('computes today in Asia/Seoul, also around midnight UTC', () => {
    expect(todayIn('Asia/Seoul', new Date('2026-03-15T14:59:59Z'))).to.equal('2026-03-15');
    expect(todayIn('Asia/Seoul', new Date('2026-03-15T15:00:00Z'))).to.equal('2026-03-16');
    expect(todayIn('Asia/Seoul', new Date('2026-03-15T23:30:00Z'))).to.equal('2026-03-16');
    expect(todayIn('UTC', new Date('2026-03-15T23:30:00Z'))).to.equal('2026-03-15');
  });

  it('adds days across months and leap years, counts days inclusively', () => {
    expect(addDays('2028-02-28', 1)).to.equal('2028-02-29');
    expect(addDays('2026-03-01', -1)).to.equal('2026-02-28');
    expect(daysInclusive('2026-03-01', '2026-03-01')).to.equal(1);
    expect(daysInclusive('2027-03-01', '2028-02-29')).to.equal(366);
  });

  it('reads NEIS YYYYMMDD dates, refusing impossible ones', () => {
    expect(fromCompactDate('20260316')).to.equal('2026-03-16');
    expect(fromCompactDate('20260230')).to.equal(undefined);
    expect(fromCompactDate('2026-03-16')).to.equal(undefined);
  });

  it('takes the academic year from 1 March to the end of February', () => {
    expect(academicYearWindow('2026-11-22')).to.deep.equal({ from: '2026-03-01', to: '2027-02-28' });
    expect(academicYearWindow('2027-02-28')).to.deep.equal({ from: '2026-03-01', to: '2027-02-28' });
    expect(academicYearWindow('2028-01-10')).to.deep.equal({ from: '2027-03-01', to: '2028-02-29' });
    expect(academicYearWindow('2026-03-01')).to.deep.equal({ from: '2026-03-01', to: '2027-02-28' });
  });

  it('finds the next daily run at HH:MM in a zone', () => {
    expect(zonedInstant('2026-03-16', '02:00', 'Asia/Seoul').toISOString()).to.equal('2026-03-15T17:00:00.000Z');
    // 01:00 Seoul: 02:00 is still ahead today.
    expect(nextDailyRun(new Date('2026-03-15T16:00:00Z'), '02:00', 'Asia/Seoul').toISOString()).to.equal('2026-03-15T17:00:00.000Z');
    // Exactly 02:00 Seoul: the next one is tomorrow.
    expect(nextDailyRun(new Date('2026-03-15T17:00:00Z'), '02:00', 'Asia/Seoul').toISOString()).to.equal('2026-03-16T17:00:00.000Z');
    // A zone with daylight saving time: 02:00 in New York after the spring change is 06:00 UTC.
    expect(nextDailyRun(new Date('2026-03-09T12:00:00Z'), '02:00', 'America/New_York').toISOString()).to.equal('2026-03-10T06:00:00.000Z');
  });
});

describe('NEIS: dates, the date parameters of docs/decisions.md', () => {
  const today = '2026-03-16';
  const refusal = (args: Parameters<typeof resolveDateRange>[0]) => {
    try {
      resolveDateRange(args, today);
    } catch (err) {
      expect(err).to.be.instanceOf(BadRequestError);
      return { parameter: (err as BadRequestError).parameter, message: (err as Error).message };
    }
    throw new Error('expected a 400');
  };

  it('uses today without parameters, the date alone, or the range', () => {
    expect(resolveDateRange({}, today)).to.deep.equal({ fromDate: today, toDate: today });
    expect(resolveDateRange({ date: '2026-03-02' }, today)).to.deep.equal({ fromDate: '2026-03-02', toDate: '2026-03-02' });
    expect(resolveDateRange({ fromDate: '2026-03-02', toDate: '2026-03-06' }, today)).to.deep.equal({
      fromDate: '2026-03-02',
      toDate: '2026-03-06',
    });
    expect(resolveDateRange({ fromDate: '2027-03-01', toDate: '2028-02-29' }, today)).to.deep.equal({
      fromDate: '2027-03-01',
      toDate: '2028-02-29',
    });
  });

  it('refuses each invalid combination, naming the parameter', () => {
    expect(refusal({ date: '2026-03-02', fromDate: '2026-03-01', toDate: '2026-03-05' }).parameter).to.equal('date');
    expect(refusal({ date: '2026-03-02', toDate: '2026-03-05' }).parameter).to.equal('date');
    expect(refusal({ fromDate: '2026-03-01' }).parameter).to.equal('toDate');
    expect(refusal({ toDate: '2026-03-01' }).parameter).to.equal('fromDate');
    expect(refusal({ fromDate: '2026-03-05', toDate: '2026-03-01' })).to.deep.equal({
      parameter: 'fromDate',
      message: "Invalid parameter 'fromDate': must not be after toDate (2026-03-01) (got '2026-03-05').",
    });
    expect(refusal({ fromDate: '2026-03-01', toDate: '2027-03-02' }).parameter).to.equal('toDate');
  });
});

describe('NEIS: dates, segments of live generations', () => {
  const seg = (from: string, to: string, generation: string) => ({ from, to, generation });

  it('replaces the middle of a segment, retiring only the covered part', () => {
    const result = replaceRange([seg('2026-03-01', '2027-02-28', 'a')], seg('2026-04-01', '2026-04-30', 'b'));
    expect(result.segments).to.deep.equal([
      seg('2026-03-01', '2026-03-31', 'a'),
      seg('2026-04-01', '2026-04-30', 'b'),
      seg('2026-05-01', '2027-02-28', 'a'),
    ]);
    expect(result.retired).to.deep.equal([seg('2026-04-01', '2026-04-30', 'a')]);
  });

  it('replaces whole and partial neighbours, keeps disjoint ones', () => {
    const result = replaceRange(
      [seg('2026-01-01', '2026-01-31', 'x'), seg('2026-03-01', '2026-03-10', 'a'), seg('2026-03-11', '2026-03-20', 'b')],
      seg('2026-03-05', '2026-03-25', 'c'),
    );
    expect(result.segments).to.deep.equal([
      seg('2026-01-01', '2026-01-31', 'x'),
      seg('2026-03-01', '2026-03-04', 'a'),
      seg('2026-03-05', '2026-03-25', 'c'),
    ]);
    expect(result.retired).to.deep.equal([seg('2026-03-05', '2026-03-10', 'a'), seg('2026-03-11', '2026-03-20', 'b')]);
  });

  it('clips segments to a query window in date order, and tells coverage', () => {
    const segments = [seg('2026-03-01', '2026-03-10', 'a'), seg('2026-03-11', '2026-03-20', 'b')];
    expect(segmentsWithin(segments, '2026-03-08', '2026-03-12')).to.deep.equal([
      seg('2026-03-08', '2026-03-10', 'a'),
      seg('2026-03-11', '2026-03-12', 'b'),
    ]);
    expect(segmentsWithin(segments, '2026-04-01', '2026-04-02')).to.deep.equal([]);
    expect(covers(segments, '2026-03-20')).to.equal(true);
    expect(covers(segments, '2026-03-21')).to.equal(false);
  });
});

describe('NEIS: dates, when the start-up sync runs', () => {
  const now = new Date('2026-03-16T03:00:00Z');
  const state = (overrides: Partial<NeisStateDoc> = {}): NeisStateDoc => ({
    _id: 'neis',
    school: 'F10/7380292',
    segments: {
      meals: [{ from: '2026-03-01', to: '2027-02-28', generation: 'g' }],
      schedules: [{ from: '2026-03-01', to: '2027-02-28', generation: 'g' }],
      timetables: [],
    },
    retired: [],
    pending: [],
    lastSync: null,
    lastSuccessAt: new Date('2026-03-15T17:00:00Z'),
    ...overrides,
  });
  const day = 26 * 3_600_000;

  it('does not run when today is covered and the last success is recent', () => {
    expect(staleReason(state(), 'F10/7380292', '2026-03-16', now, day)).to.equal(undefined);
  });

  it('runs when data is missing, for another school, not covering today, or old', () => {
    expect(staleReason(null, 'F10/7380292', '2026-03-16', now, day)).to.match(/no NEIS data/);
    expect(staleReason(state({ school: 'B10/7010000' }), 'F10/7380292', '2026-03-16', now, day)).to.match(/belongs to B10/);
    expect(staleReason(state(), 'F10/7380292', '2027-03-02', now, day)).to.match(/today/);
    expect(staleReason(state({ lastSuccessAt: new Date('2026-03-14T00:00:00Z') }), 'F10/7380292', '2026-03-16', now, day)).to.match(
      /too old/,
    );
  });
});

describe('NEIS: dates, the window of campus neis sync', () => {
  it('defaults to the academic year and takes --from with --to', () => {
    expect(syncWindow({}, '2027-01-15')).to.deep.equal({ from: '2026-03-01', to: '2027-02-28' });
    expect(syncWindow({ from: '2026-03-01', to: '2026-03-31' }, '2027-01-15')).to.deep.equal({ from: '2026-03-01', to: '2026-03-31' });
  });

  it('refuses one end only, bad dates, reversed or overlong windows', () => {
    expect(() => syncWindow({ from: '2026-03-01' }, '2026-03-16')).to.throw(/--from and --to go together/);
    expect(() => syncWindow({ from: '2026-02-30', to: '2026-03-01' }, '2026-03-16')).to.throw(/--from must be a real date/);
    expect(() => syncWindow({ from: '2026-03-02', to: '2026-03-01' }, '2026-03-16')).to.throw(/must not be after/);
    expect(() => syncWindow({ from: '2026-03-01', to: '2027-03-02' }, '2026-03-16')).to.throw(/at most 366 days/);
  });
});
