import { expect } from 'chai';
import {
  brToNewlines,
  cleanDish,
  mapMeals,
  mapSchedules,
  mapTimetables,
  parseDishes,
  parseServeCount,
  targetGrades,
  toMeal,
} from '../../src/neis/mappers.js';
import type { NeisRow } from '../../src/neis/client.js';
import { SCHEDULE_FIELDS } from '../helpers/neis.js';

const SCHOOL = {
  ATPT_OFCDC_SC_CODE: 'F10',
  ATPT_OFCDC_SC_NM: '광주광역시교육청',
  SD_SCHUL_CODE: '7380292',
  SCHUL_NM: '광주소프트웨어마이스터고등학교',
};

function mealRow(overrides: NeisRow = {}): NeisRow {
  return {
    ...SCHOOL,
    MMEAL_SC_CODE: '2',
    MMEAL_SC_NM: '중식',
    MLSV_YMD: '20260316',
    MLSV_FGR: 530.0,
    DDISH_NM: '*쌀밥<br/>쇠고기미역국13.16.<br/>돈까스 (1.2.5.6.)<br/>얼갈이된장국 (5.6)<br/>배추김치#9.13.',
    ORPLC_INFO: '쌀 : 국내산<br/>쇠고기(종류) : 국내산(한우)',
    CAL_INFO: '780.3 Kcal',
    NTR_INFO: '탄수화물(g) : 109.0<br/>단백질(g) : 34.7',
    MLSV_FROM_YMD: '20260316',
    MLSV_TO_YMD: '20260316',
    LOAD_DTM: '20260310',
    ...overrides,
  };
}

describe('NEIS: mappers, dishes and allergy codes', () => {
  it('reads the parenthesised form with a trailing dot: 돈까스 (1.2.5.6.)', () => {
    expect(cleanDish('돈까스 (1.2.5.6.)')).to.deep.equal({ name: '돈까스', codes: ['1', '2', '5', '6'] });
  });

  it('reads the parenthesised form without a trailing dot: 얼갈이된장국 (5.6)', () => {
    expect(cleanDish('얼갈이된장국 (5.6)')).to.deep.equal({ name: '얼갈이된장국', codes: ['5', '6'] });
  });

  it('reads codes glued to the name: 쇠고기미역국13.16.', () => {
    expect(cleanDish('쇠고기미역국13.16.')).to.deep.equal({ name: '쇠고기미역국', codes: ['13', '16'] });
  });

  it('reads a single code in each form', () => {
    expect(cleanDish('고등어구이 (7.)')).to.deep.equal({ name: '고등어구이', codes: ['7'] });
    expect(cleanDish('요구르트(2)')).to.deep.equal({ name: '요구르트', codes: ['2'] });
    expect(cleanDish('잣죽19.')).to.deep.equal({ name: '잣죽', codes: ['19'] });
  });

  it('strips the * and # markers wherever they stand', () => {
    expect(cleanDish('*쌀밥')).to.deep.equal({ name: '쌀밥', codes: [] });
    expect(cleanDish('깍두기#')).to.deep.equal({ name: '깍두기', codes: [] });
    expect(cleanDish('*돈까스# (1.2.)')).to.deep.equal({ name: '돈까스', codes: ['1', '2'] });
    expect(cleanDish('배추김치#9.13.')).to.deep.equal({ name: '배추김치', codes: ['9', '13'] });
  });

  it('leaves numbers that are not allergy codes in the name', () => {
    expect(cleanDish('우유(200ml)')).to.deep.equal({ name: '우유(200ml)', codes: [] });
    expect(cleanDish('사과주스(200)')).to.deep.equal({ name: '사과주스(200)', codes: [] });
    expect(cleanDish('떡볶이2')).to.deep.equal({ name: '떡볶이2', codes: [] });
    expect(cleanDish('특식 (25.)')).to.deep.equal({ name: '특식 (25.)', codes: [] });
  });

  it('splits on <br/> (any spelling) and collects distinct codes in first-seen order', () => {
    const parsed = parseDishes('쌀밥<br/>쇠고기미역국 (5.6.13.16.)<br>돈까스 (1.2.5.6.)<BR />배추김치9.13.');
    expect(parsed).to.deep.equal({
      menu: ['쌀밥', '쇠고기미역국', '돈까스', '배추김치'],
      allergies: ['5', '6', '13', '16', '1', '2', '9'],
    });
  });

  it('splits older space-separated menus, keeping a detached code group with its dish', () => {
    expect(parseDishes('현미밥 북엇국1.5.6. 돈까스 (1.2.5.6.) *깍두기9.13.')).to.deep.equal({
      menu: ['현미밥', '북엇국', '돈까스', '깍두기'],
      allergies: ['1', '5', '6', '2', '9', '13'],
    });
  });

  it('gives null allergy codes when no dish has any, and an empty menu for no text', () => {
    expect(parseDishes('쌀밥<br/>사과')).to.deep.equal({ menu: ['쌀밥', '사과'], allergies: null });
    expect(parseDishes(null)).to.deep.equal({ menu: [], allergies: null });
  });
});

describe('NEIS: mappers, meal fields', () => {
  it('maps a row to exactly the fields of the spec', () => {
    const meal = toMeal(mealRow());
    expect(meal).to.deep.equal({
      mealId: '7380292_20260316_2',
      schoolCode: '7380292',
      schoolName: '광주소프트웨어마이스터고등학교',
      officeCode: 'F10',
      officeName: '광주광역시교육청',
      mealDate: '2026-03-16',
      mealType: 'LUNCH',
      mealMenu: ['쌀밥', '쇠고기미역국', '돈까스', '얼갈이된장국', '배추김치'],
      mealAllergyInfo: ['13', '16', '1', '2', '5', '6', '9'],
      mealCalories: '780.3 Kcal',
      originInfo: '쌀 : 국내산\n쇠고기(종류) : 국내산(한우)',
      nutritionInfo: '탄수화물(g) : 109.0\n단백질(g) : 34.7',
      mealServeCount: 530,
    });
  });

  it('maps MMEAL_SC_CODE 1, 2, 3 to BREAKFAST, LUNCH, DINNER with the code in the id', () => {
    const types = ['1', '2', '3'].map((code) => toMeal(mealRow({ MMEAL_SC_CODE: code })));
    expect(types.map((m) => (typeof m === 'string' ? m : [m.mealType, m.mealId]))).to.deep.equal([
      ['BREAKFAST', '7380292_20260316_1'],
      ['LUNCH', '7380292_20260316_2'],
      ['DINNER', '7380292_20260316_3'],
    ]);
  });

  it('reads the served count as a number (530.0) or a string ("967")', () => {
    expect(parseServeCount(530.0)).to.equal(530);
    expect(parseServeCount('967')).to.equal(967);
    expect(parseServeCount(' 412.0 ')).to.equal(412);
    expect(parseServeCount('')).to.equal(null);
    expect(parseServeCount(undefined)).to.equal(null);
    expect(parseServeCount('많음')).to.equal(null);
    expect(parseServeCount(-3)).to.equal(null);
    const fromString = toMeal(mealRow({ MLSV_FGR: '967' }));
    expect(typeof fromString !== 'string' && fromString.mealServeCount).to.equal(967);
  });

  it('turns <br/> into line breaks in origin and nutrition text, null when empty', () => {
    expect(brToNewlines('a : 1<br/>b : 2<br />c : 3')).to.equal('a : 1\nb : 2\nc : 3');
    expect(brToNewlines('')).to.equal(null);
    expect(brToNewlines(null)).to.equal(null);
    const bare = toMeal(mealRow({ ORPLC_INFO: '', NTR_INFO: undefined, CAL_INFO: ' ', MLSV_FGR: undefined, DDISH_NM: '쌀밥' }));
    expect(bare).to.include({ originInfo: null, nutritionInfo: null, mealCalories: null, mealServeCount: null, mealAllergyInfo: null });
  });

  it('skips a row with an unknown meal code with a warning and keeps the other rows', () => {
    const { records, warnings } = mapMeals([
      mealRow({ MMEAL_SC_CODE: '1' }),
      mealRow({ MMEAL_SC_CODE: '4', MMEAL_SC_NM: '간식' }),
      mealRow({ MMEAL_SC_CODE: '3' }),
    ]);
    expect(records.map((r) => r.mealType)).to.deep.equal(['BREAKFAST', 'DINNER']);
    expect(warnings).to.deep.equal(["skipped meal of 2026-03-16 with an unknown MMEAL_SC_CODE '4' (간식)"]);
  });

  it('skips rows with an impossible date or no school code, and a repeated meal', () => {
    const { records, warnings } = mapMeals([mealRow({ MLSV_YMD: '20260231' }), mealRow({ SD_SCHUL_CODE: '' }), mealRow(), mealRow()]);
    expect(records).to.have.length(1);
    expect(warnings).to.have.length(3);
  });
});

function scheduleRow(overrides: NeisRow = {}): NeisRow {
  return {
    ...SCHOOL,
    AY: '2025',
    DGHT_CRSE_SC_NM: '주간',
    SCHUL_CRSE_SC_NM: '고등학교',
    SBTR_DD_SC_NM: '해당없음',
    AA_YMD: '20260302',
    EVENT_NM: '입학식',
    EVENT_CNTNT: '',
    ONE_GRADE_EVENT_YN: 'Y',
    TW_GRADE_EVENT_YN: 'N',
    THREE_GRADE_EVENT_YN: 'N',
    FR_GRADE_EVENT_YN: 'N',
    FIV_GRADE_EVENT_YN: 'N',
    SIX_GRADE_EVENT_YN: 'N',
    LOAD_DTM: '20260301',
    ...overrides,
  };
}

describe('NEIS: mappers, schedules', () => {
  it('maps a row to the schedule record of docs/decisions.md', () => {
    const { records } = mapSchedules([scheduleRow({ EVENT_CNTNT: '강당 10:00' })]);
    const [record] = records;
    expect(Object.keys(record ?? {})).to.deep.equal(SCHEDULE_FIELDS);
    expect(record).to.deep.include({
      schoolCode: '7380292',
      scheduleDate: '2026-03-02',
      academicYear: '2025',
      eventName: '입학식',
      eventContent: '강당 10:00',
      dayCategory: '해당없음',
      schoolCourseType: '고등학교',
      dayNightType: '주간',
      targetGrades: [1],
    });
    expect(record?.scheduleId).to.match(/^7380292_20260302_[0-9a-f]{8}$/);
  });

  it('gives several events on one day distinct ids, stable whatever order NEIS lists them in', () => {
    const rows = [scheduleRow(), scheduleRow({ EVENT_NM: '시업식' }), scheduleRow({ EVENT_NM: '기숙사 입사' })];
    const first = mapSchedules(rows).records;
    const reversed = mapSchedules([...rows].reverse()).records;
    expect(new Set(first.map((r) => r.scheduleId)).size).to.equal(3);
    const idOf = (records: typeof first, name: string) => records.find((r) => r.eventName === name)?.scheduleId;
    for (const name of ['입학식', '시업식', '기숙사 입사']) expect(idOf(first, name)).to.equal(idOf(reversed, name));
  });

  it('gives the same event name twice on one day two ids', () => {
    const { records } = mapSchedules([scheduleRow(), scheduleRow()]);
    expect(records[1]?.scheduleId).to.equal(`${records[0]?.scheduleId}_2`);
  });

  it('reads targetGrades from the grade flags (NEIS spells them TW, FR, FIV), [] when none, never null', () => {
    expect(targetGrades(scheduleRow({ ONE_GRADE_EVENT_YN: 'Y', TW_GRADE_EVENT_YN: 'Y', THREE_GRADE_EVENT_YN: 'Y' }))).to.deep.equal([
      1, 2, 3,
    ]);
    expect(targetGrades(scheduleRow({ ONE_GRADE_EVENT_YN: 'N', THREE_GRADE_EVENT_YN: 'Y' }))).to.deep.equal([3]);
    expect(targetGrades(scheduleRow({ ONE_GRADE_EVENT_YN: 'N', FR_GRADE_EVENT_YN: 'Y', SIX_GRADE_EVENT_YN: 'Y' }))).to.deep.equal([4, 6]);
    expect(targetGrades(scheduleRow({ ONE_GRADE_EVENT_YN: 'N' }))).to.deep.equal([]);
    expect(targetGrades({})).to.deep.equal([]);
  });

  it('uses null for empty optional text and orders records by date', () => {
    const { records } = mapSchedules([
      scheduleRow({ AA_YMD: '20260303', EVENT_NM: 'B', SBTR_DD_SC_NM: '', DGHT_CRSE_SC_NM: ' ' }),
      scheduleRow({ AA_YMD: '20260302', EVENT_NM: 'A' }),
    ]);
    expect(records.map((r) => r.eventName)).to.deep.equal(['A', 'B']);
    expect(records[1]).to.include({ eventContent: null, dayCategory: null, dayNightType: null });
  });

  it('skips rows without an event name or with a broken date, with warnings', () => {
    const { records, warnings } = mapSchedules([scheduleRow({ EVENT_NM: '' }), scheduleRow({ AA_YMD: '2026-03-02' }), scheduleRow()]);
    expect(records).to.have.length(1);
    expect(warnings).to.have.length(2);
  });
});

describe('NEIS: mappers, timetables', () => {
  const row = (overrides: NeisRow = {}): NeisRow => ({
    ...SCHOOL,
    AY: '2026',
    SEM: '1',
    ALL_TI_YMD: '20260316',
    DGHT_CRSE_SC_NM: '주간',
    DDDEP_NM: '소프트웨어개발과',
    GRADE: '1',
    CLRM_NM: '1-2',
    CLASS_NM: '2',
    PERIO: '3',
    ITRT_CNTNT: '프로그래밍',
    ...overrides,
  });

  it('maps a period to a timetable record', () => {
    expect(mapTimetables([row()]).records).to.deep.equal([
      {
        timetableId: '7380292_20260316_1_2_3',
        schoolCode: '7380292',
        schoolName: '광주소프트웨어마이스터고등학교',
        officeCode: 'F10',
        officeName: '광주광역시교육청',
        timetableDate: '2026-03-16',
        academicYear: '2026',
        semester: '1',
        grade: 1,
        classNum: 2,
        period: 3,
        subject: '프로그래밍',
        departmentName: '소프트웨어개발과',
        classroomName: '1-2',
      },
    ]);
  });

  it('skips rows without a subject or with a non-numeric class, with warnings', () => {
    const { records, warnings } = mapTimetables([row({ ITRT_CNTNT: '-' }), row({ CLASS_NM: 'A' }), row({ PERIO: '4' })]);
    expect(records.map((r) => r.period)).to.deep.equal([4]);
    expect(warnings).to.have.length(2);
  });
});
