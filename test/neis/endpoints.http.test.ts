import { expect } from 'chai';
import { createLogger } from '../../src/logger.js';
import { NeisStore } from '../../src/data/neis/store.js';
import { NeisClient } from '../../src/neis/client.js';
import { fakeMealRows, fakeSchool, fakeScheduleRows } from '../../src/neis/fake-fixtures.js';
import { startFakeNeis, type FakeNeis } from '../../src/neis/fake-server.js';
import { mapMeals, mapSchedules } from '../../src/neis/mappers.js';
import { NeisSync } from '../../src/neis/sync.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { issueKey } from '../helpers/factories.js';
import { MEAL_FIELDS, SCHEDULE_FIELDS } from '../helpers/neis.js';

/**
 * GET /v1/neis/{meals,schedules,timetables} over HTTP: data synced from the fake NEIS server
 * through the real client and sync, served by the real app on a real listener and database.
 */

const ANCHOR = '2026-03-16';
const SCHOOL = fakeSchool('F10', '7380292');
const ENDPOINTS = [
  { name: 'meals', path: '/v1/neis/meals?' },
  { name: 'schedules', path: '/v1/neis/schedules?' },
  { name: 'timetables', path: '/v1/neis/timetables?grade=1&classNum=1&' },
] as const;

interface Meal {
  mealId: string;
  mealDate: string;
  mealType: string;
  mealMenu: string[];
}

/** What the API must answer for a day: the fixture rows through the mappers, exact spec fields. */
function expectedMeals(date: string): unknown[] {
  return mapMeals(fakeMealRows(SCHOOL, date, ANCHOR)).records;
}

describe('NEIS: the endpoints', () => {
  let fake: FakeNeis;
  let t: TestApp;
  let key: string;
  // The app's clock: 12:00 in Seoul on the anchor day unless a test moves it.
  let clock = new Date('2026-03-16T03:00:00Z');
  const get = (path: string, headers: Record<string, string> = {}) => t.request(path, { headers: { 'X-API-KEY': key, ...headers } });

  const syncMarch = () =>
    new NeisSync({
      store: new NeisStore(t.db),
      client: new NeisClient({ baseUrl: fake.url, officeCode: 'F10', schoolCode: '7380292', timeoutMs: 2000, backoffMs: () => 0 }),
      officeCode: 'F10',
      schoolCode: '7380292',
      logger: createLogger('silent'),
    }).run({ from: '2026-03-01', to: '2026-03-31', trigger: 'cli' });

  before(async () => {
    fake = await startFakeNeis({ anchor: ANCHOR });
    t = await buildTestApp('neis_endpoints', { surfaces: ['data'], now: () => clock });
    expect((await syncMarch()).outcome).to.equal('ok');
    key = await issueKey(t.db, { scopes: ['NEIS_READ'], now: clock, rateLimit: { points: 100000, durationSeconds: 60 } });
  });
  after(async () => {
    await t.close();
    await fake.close();
  });
  afterEach(() => {
    clock = new Date('2026-03-16T03:00:00Z');
    fake.reset();
  });

  describe('GET /v1/neis/meals', () => {
    it('?date= returns that day: breakfast, lunch, dinner with exactly the spec fields', async () => {
      const res = await get('/v1/neis/meals?date=2026-03-16');
      const meals = await expectOk<Record<string, unknown>[]>(res);
      expect(meals.map((m) => Object.keys(m))).to.deep.equal([MEAL_FIELDS, MEAL_FIELDS, MEAL_FIELDS]);
      expect(meals).to.deep.equal(expectedMeals('2026-03-16'));
      expect(meals.map((m) => [m['mealId'], m['mealType']])).to.deep.equal([
        ['7380292_20260316_1', 'BREAKFAST'],
        ['7380292_20260316_2', 'LUNCH'],
        ['7380292_20260316_3', 'DINNER'],
      ]);
      expect(res.headers.get('cache-control')).to.equal('private, no-cache');
      // fetch asks for gzip, and the day's answer is over 1 KB: the ETag names the gzip bytes.
      expect(res.headers.get('etag')).to.match(/^"[A-Za-z0-9_-]{32}-gz"$/);
    });

    it('shows clean dish names, allergy codes as strings, served counts as integers', async () => {
      // The fake writes the 17th in NEIS's old style (src/neis/fake-fixtures.ts, fakeMenu): dishes apart by
      // spaces, codes stuck to names ("돈까스#1.2.5.6.10.12."), markers * and #, lunch's count as the text "451".
      const meals = await expectOk<
        { mealType: string; mealMenu: string[]; mealAllergyInfo: string[] | null; mealServeCount: number | null; originInfo: string }[]
      >(await get('/v1/neis/meals?date=2026-03-17'));
      expect(meals.map((m) => [m.mealType, m.mealMenu, m.mealAllergyInfo, m.mealServeCount])).to.deep.equal([
        ['BREAKFAST', ['흑미밥', '감자국', '돈까스', '잣죽', '배추김치'], ['5', '6', '1', '2', '10', '12', '19', '9', '13'], 422],
        ['LUNCH', ['현미밥', '북엇국', '제육볶음', '콩나물무침', '깍두기', '바나나우유'], ['1', '5', '6', '10', '13', '9', '2'], 451],
        ['DINNER', ['쌀밥', '김치찌개', '닭갈비', '계란말이', '배추김치'], ['5', '6', '9', '10', '13', '15', '1'], 396],
      ]);
      for (const meal of meals) {
        expect(meal.originInfo.split('\n')).to.have.length(8);
        expect(meal.originInfo).to.not.include('<br');
      }
    });

    it('?fromDate=&toDate= returns the range ordered by date, then meal type', async () => {
      const meals = await expectOk<Meal[]>(await get('/v1/neis/meals?fromDate=2026-03-02&toDate=2026-03-04'));
      expect(meals.map((m) => `${m.mealDate} ${m.mealType}`)).to.deep.equal([
        '2026-03-02 BREAKFAST',
        '2026-03-02 LUNCH',
        '2026-03-02 DINNER',
        '2026-03-03 BREAKFAST',
        '2026-03-03 LUNCH',
        '2026-03-03 DINNER',
        '2026-03-04 BREAKFAST',
        '2026-03-04 LUNCH',
        '2026-03-04 DINNER',
      ]);
      expect(meals).to.deep.equal([...expectedMeals('2026-03-02'), ...expectedMeals('2026-03-03'), ...expectedMeals('2026-03-04')]);
    });

    it('a day without data returns [] (a holiday; a day never synced)', async () => {
      expect(await expectOk(await get('/v1/neis/meals?date=2026-03-01'))).to.deep.equal([]);
      expect(await expectOk(await get('/v1/neis/meals?date=2026-06-01'))).to.deep.equal([]);
      // A range that reaches past the synced window returns what there is.
      const meals = await expectOk<Meal[]>(await get('/v1/neis/meals?fromDate=2026-03-31&toDate=2026-04-02'));
      expect(meals.map((m) => m.mealDate)).to.deep.equal(['2026-03-31', '2026-03-31', '2026-03-31']);
    });

    it('without a date parameter returns today in Asia/Seoul', async () => {
      const meals = await expectOk<Meal[]>(await get('/v1/neis/meals'));
      expect(meals).to.deep.equal(expectedMeals(ANCHOR));
    });

    it('near midnight UTC, "today" is the Seoul date (and a cached answer does not outlive its day)', async () => {
      clock = new Date('2026-03-15T14:59:59Z'); // 23:59:59 on the 15th in Seoul
      const before = await expectOk<Meal[]>(await get('/v1/neis/meals'));
      expect([...new Set(before.map((m) => m.mealDate))]).to.deep.equal(['2026-03-15']);
      clock = new Date('2026-03-15T15:00:00Z'); // 00:00 on the 16th in Seoul, still the 15th in UTC
      const after = await expectOk<Meal[]>(await get('/v1/neis/meals'));
      expect([...new Set(after.map((m) => m.mealDate))]).to.deep.equal(['2026-03-16']);
      clock = new Date('2026-03-16T14:30:00Z'); // 23:30 on the 16th in Seoul
      const late = await expectOk<Meal[]>(await get('/v1/neis/meals'));
      expect([...new Set(late.map((m) => m.mealDate))]).to.deep.equal(['2026-03-16']);
    });

    it('ignores unknown parameters', async () => {
      expect(await expectOk(await get('/v1/neis/meals?date=2026-03-16&schoolCode=X&status=1'))).to.deep.equal(expectedMeals('2026-03-16'));
    });
  });

  describe('GET /v1/neis/schedules', () => {
    it('?date= returns several events of one day as several records with distinct ids', async () => {
      const events = await expectOk<Record<string, unknown>[]>(await get('/v1/neis/schedules?date=2026-03-02'));
      expect(events.map((e) => Object.keys(e))).to.deep.equal([SCHEDULE_FIELDS, SCHEDULE_FIELDS, SCHEDULE_FIELDS]);
      expect(events).to.deep.equal(mapSchedules(fakeScheduleRows(SCHOOL, '2026-03-02')).records);
      expect(events.map((e) => [e['eventName'], e['targetGrades']])).to.deep.equal([
        ['입학식', [1]],
        ['시업식', [2, 3]],
        ['기숙사 입사', [1, 2, 3]],
      ]);
      expect(new Set(events.map((e) => e['scheduleId'])).size).to.equal(3);
      expect(events[0]).to.include({
        academicYear: '2026',
        eventContent: '신입생 입학식 (강당 10:00)',
        dayCategory: '해당없음',
        schoolCourseType: '고등학교',
        dayNightType: '주간',
      });
    });

    it('ranges are ordered by date; no parameter means today in Seoul', async () => {
      const range = await expectOk<{ scheduleDate: string }[]>(await get('/v1/neis/schedules?fromDate=2026-03-13&toDate=2026-03-15'));
      expect(range.map((e) => e.scheduleDate)).to.deep.equal(['2026-03-13', '2026-03-14', '2026-03-15']);
      const today = await expectOk<{ scheduleDate: string; eventName: string }[]>(await get('/v1/neis/schedules'));
      expect(today.map((e) => [e.scheduleDate, e.eventName])).to.deep.equal([[ANCHOR, '방과후학교']]);
      expect(await expectOk(await get('/v1/neis/schedules?date=2026-05-01'))).to.deep.equal([]);
    });
  });

  describe('GET /v1/neis/timetables', () => {
    it('returns the periods of one class, by date then period', async () => {
      const periods = await expectOk<Record<string, unknown>[]>(await get('/v1/neis/timetables?grade=2&classNum=3&date=2026-03-16'));
      expect(periods.map((p) => p['period'])).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
      expect(periods[0]).to.deep.include({
        timetableId: '7380292_20260316_2_3_1',
        timetableDate: '2026-03-16',
        grade: 2,
        classNum: 3,
        academicYear: '2026',
        semester: '1',
        departmentName: '스마트IoT과',
        classroomName: '2-3',
      });
      const week = await expectOk<{ timetableDate: string }[]>(
        await get('/v1/neis/timetables?grade=1&classNum=4&fromDate=2026-03-13&toDate=2026-03-16'),
      );
      expect([...new Set(week.map((p) => p.timetableDate))]).to.deep.equal(['2026-03-13', '2026-03-16']);
      expect(week).to.have.length(6 + 7);
      const today = await expectOk<{ timetableDate: string }[]>(await get('/v1/neis/timetables?grade=3&classNum=1'));
      expect([...new Set(today.map((p) => p.timetableDate))]).to.deep.equal([ANCHOR]);
      expect(await expectOk(await get('/v1/neis/timetables?grade=1&classNum=1&date=2026-03-14'))).to.deep.equal([]);
    });

    it('requires grade (1-3) and classNum (1-4)', async () => {
      await expectEnvelope(await get('/v1/neis/timetables?classNum=1'), 400, 'BAD_REQUEST', /^Missing parameter 'grade'/);
      await expectEnvelope(await get('/v1/neis/timetables?grade=1'), 400, 'BAD_REQUEST', /^Missing parameter 'classNum'/);
      await expectEnvelope(
        await get('/v1/neis/timetables?grade=4&classNum=1'),
        400,
        'BAD_REQUEST',
        "Invalid parameter 'grade': must be an integer from 1 to 3 (got '4').",
      );
      await expectEnvelope(await get('/v1/neis/timetables?grade=1&classNum=0'), 400, 'BAD_REQUEST', "Invalid parameter 'classNum'");
      await expectEnvelope(await get('/v1/neis/timetables?grade=one&classNum=1'), 400, 'BAD_REQUEST', "Invalid parameter 'grade'");
    });
  });

  describe('date parameters: every invalid combination is 400 naming the parameter', () => {
    const cases: [string, string, RegExp][] = [
      [
        'date=2026-03-16&fromDate=2026-03-01&toDate=2026-03-31',
        'date',
        /^Invalid parameter 'date': must not be combined with fromDate or toDate/,
      ],
      ['date=2026-03-16&toDate=2026-03-31', 'date', /^Invalid parameter 'date': must not be combined/],
      ['date=2026-03-16&fromDate=2026-03-01', 'date', /^Invalid parameter 'date': must not be combined/],
      ['fromDate=2026-03-01', 'toDate', /^Missing parameter 'toDate': a range needs both fromDate and toDate/],
      ['toDate=2026-03-31', 'fromDate', /^Missing parameter 'fromDate': a range needs both fromDate and toDate/],
      [
        'fromDate=2026-03-10&toDate=2026-03-09',
        'fromDate',
        /^Invalid parameter 'fromDate': must not be after toDate \(2026-03-09\) \(got '2026-03-10'\)\.$/,
      ],
      ['fromDate=2026-03-01&toDate=2027-03-02', 'toDate', /^Invalid parameter 'toDate': must be at most 366 days from fromDate/],
      ['date=2026-02-30', 'date', /^Invalid parameter 'date': must be a real calendar date written YYYY-MM-DD \(got '2026-02-30'\)\.$/],
      ['date=20260316', 'date', /^Invalid parameter 'date': must be a real calendar date/],
      ['date=', 'date', /^Invalid parameter 'date'/],
      ['fromDate=2026-13-01&toDate=2026-12-31', 'fromDate', /^Invalid parameter 'fromDate': must be a real calendar date/],
      ['fromDate=2026-03-01&toDate=2026-3-31', 'toDate', /^Invalid parameter 'toDate': must be a real calendar date/],
      ['date=2026-03-16&date=2026-03-17', 'date', /^Invalid parameter 'date': must be given only once/],
    ];
    for (const { name, path } of ENDPOINTS) {
      for (const [query, parameter, message] of cases) {
        it(`${name}: ${query} -> 400 naming ${parameter}`, async () => {
          await expectEnvelope(await get(`${path}${query}`), 400, 'BAD_REQUEST', message);
        });
      }
      it(`${name}: a range of exactly 366 days is allowed`, async () => {
        await expectOk(await get(`${path}fromDate=2027-03-01&toDate=2028-02-29`));
      });
    }
  });

  describe('API key, scope, rate limit', () => {
    for (const { name, path } of ENDPOINTS) {
      it(`${name}: no key -> 401, malformed or unknown key -> 401`, async () => {
        const missing = await t.request(`${path}date=2026-03-16`);
        await expectEnvelope(missing, 401, 'UNAUTHORIZED', /^Missing API key: send it in the X-API-KEY header\.$/);
        expect(missing.headers.get('ratelimit-policy')).to.equal(null);
        await expectEnvelope(
          await t.request(`${path}date=2026-03-16`, { headers: { 'X-API-KEY': 'nope' } }),
          401,
          'UNAUTHORIZED',
          /^Malformed API key/,
        );
        await expectEnvelope(
          await t.request(`${path}date=2026-03-16`, { headers: { 'X-API-KEY': '0b9f0c1e-9a1c-4c37-9e1d-0a6f3f1f2a77' } }),
          401,
          'UNAUTHORIZED',
          /^Invalid API key: it is not recognised\.$/,
        );
      });

      it(`${name}: a key without NEIS_READ -> 403 naming the scope`, async () => {
        const other = await issueKey(t.db, { scopes: ['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ'], now: clock });
        const res = await t.request(`${path}date=2026-03-16`, { headers: { 'X-API-KEY': other } });
        await expectEnvelope(res, 403, 'FORBIDDEN', 'This API key lacks the NEIS_READ scope that this endpoint requires.');
      });
    }

    it('an expired key -> 401', async () => {
      const old = await issueKey(t.db, { scopes: ['NEIS_READ'], now: new Date('2026-01-01T00:00:00Z') });
      await expectEnvelope(await t.request('/v1/neis/meals', { headers: { 'X-API-KEY': old } }), 401, 'UNAUTHORIZED', /^Expired API key/);
    });

    it('counts every request against the key: headers, then 429 with Retry-After', async () => {
      const limited = await issueKey(t.db, { scopes: ['NEIS_READ'], now: clock, rateLimit: { points: 2, durationSeconds: 60 } });
      const headers = { 'X-API-KEY': limited };
      const first = await t.request('/v1/neis/meals', { headers });
      await expectOk(first);
      expect(first.headers.get('ratelimit-policy')).to.equal('"default";q=2;w=60');
      expect(first.headers.get('ratelimit')).to.match(/^"default";r=1;t=\d+$/);
      expect(first.headers.get('x-ratelimit-limit')).to.equal('2');
      expect(first.headers.get('x-ratelimit-remaining')).to.equal('1');
      await expectOk(await t.request('/v1/neis/schedules', { headers }));
      const refused = await t.request('/v1/neis/timetables?grade=1&classNum=1', { headers });
      await expectEnvelope(refused, 429, 'TOO_MANY_REQUESTS', /^Too many requests; retry after \d+ seconds\.$/);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
      expect(refused.headers.get('x-ratelimit-remaining')).to.equal('0');
    });
  });

  describe('conditional requests', () => {
    it('ETag and 304: same query, same ETag; If-None-Match (also weak, lists, *) -> 304 without a body', async () => {
      const first = await get('/v1/neis/schedules?fromDate=2026-03-02&toDate=2026-03-06');
      await expectOk(first);
      const etag = first.headers.get('etag') ?? '';
      // fetch asks for gzip, and the week's answer is over 1 KB: the ETag names the gzip bytes.
      expect(etag).to.match(/^"[A-Za-z0-9_-]{32}-gz"$/);
      const again = await get('/v1/neis/schedules?fromDate=2026-03-02&toDate=2026-03-06');
      expect(again.headers.get('etag')).to.equal(etag);
      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const res = await get('/v1/neis/schedules?fromDate=2026-03-02&toDate=2026-03-06', { 'If-None-Match': ifNoneMatch });
        expect(res.status, ifNoneMatch).to.equal(304);
        expect(await res.text()).to.equal('');
        expect(res.headers.get('etag')).to.equal(etag);
        expect(res.headers.get('cache-control')).to.equal('private, no-cache');
      }
      const stale = await get('/v1/neis/schedules?fromDate=2026-03-02&toDate=2026-03-06', { 'If-None-Match': '"stale"' });
      expect(stale.status).to.equal(200);
    });

    it('a sync that changes the data changes the ETag (and the answer)', async () => {
      const first = await get('/v1/neis/meals?date=2026-03-20');
      const before = await expectOk<Meal[]>(first);
      const etag = first.headers.get('etag') ?? '';
      const rows = fakeMealRows(SCHOOL, '2026-03-20', ANCHOR).map((row) =>
        row['MMEAL_SC_CODE'] === '2' ? { ...row, DDISH_NM: '짜장면 (5.6.10.13.)<br/>탕수육 (1.5.6.10.12.13.)' } : row,
      );
      fake.script('mealServiceDietInfo', { kind: 'rows', rows });
      await new NeisSync({
        store: new NeisStore(t.db),
        client: new NeisClient({ baseUrl: fake.url, officeCode: 'F10', schoolCode: '7380292', timeoutMs: 2000 }),
        officeCode: 'F10',
        schoolCode: '7380292',
        logger: createLogger('silent'),
      }).run({ from: '2026-03-20', to: '2026-03-20', trigger: 'cli', datasets: ['meals'] });
      const changed = await get('/v1/neis/meals?date=2026-03-20', { 'If-None-Match': etag });
      const after = await expectOk<Meal[]>(changed);
      expect(changed.headers.get('etag')).to.not.equal(etag);
      expect(after[1]?.mealMenu).to.deep.equal(['짜장면', '탕수육']);
      expect(after[0]).to.deep.equal(before[0]);
    });
  });

  describe('GraphQL', () => {
    it('serves the same records at /graphql, checking NEIS_READ per field', async () => {
      const query = {
        query: '{ meals(date: "2026-03-16") { mealId mealType } timetables(grade: 1, classNum: 1, date: "2026-03-16") { period } }',
      };
      const res = await t.request('/graphql', {
        method: 'POST',
        headers: { 'X-API-KEY': key, 'content-type': 'application/json' },
        body: JSON.stringify(query),
      });
      const body = (await res.json()) as { data: { meals: { mealId: string }[]; timetables: unknown[] } };
      expect(body.data.meals.map((m) => m.mealId)).to.deep.equal(['7380292_20260316_1', '7380292_20260316_2', '7380292_20260316_3']);
      expect(body.data.timetables).to.have.length(7);
      const bad = await t.request('/graphql', {
        method: 'POST',
        headers: { 'X-API-KEY': key, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ schedules(date: "2026-03-16", toDate: "2026-03-17") { scheduleId } }' }),
      });
      const refused = (await bad.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(refused.errors[0]?.extensions.code).to.equal('BAD_REQUEST');
      expect(refused.errors[0]?.message).to.match(/^Invalid parameter 'date'/);
    });
  });
});
