import { academicYearOf, isoWeekday, toCompactDate } from '../calendar.js';
import type { NeisRow } from './client.js';

/**
 * Realistic NEIS rows for the fake server, generated per date (pure and deterministic: the same
 * date always yields the same rows). Dishes carry allergy codes in every form NEIS uses, served
 * counts come as numbers and as strings, some days have several events, holidays have no meals.
 */

export interface FakeSchool {
  readonly officeCode: string;
  readonly officeName: string;
  readonly schoolCode: string;
  readonly schoolName: string;
}

/** The school this service was written for (docs/neis.md); other codes get a generic demo school. */
export function fakeSchool(officeCode: string, schoolCode: string): FakeSchool {
  if (officeCode === 'F10' && schoolCode === '7380292') {
    return { officeCode, officeName: '광주광역시교육청', schoolCode, schoolName: '광주소프트웨어마이스터고등학교' };
  }
  return { officeCode, officeName: '데모교육청', schoolCode, schoolName: '데모고등학교' };
}

/** Public holidays by MM-DD: no meals, no lessons, one calendar entry. */
export const HOLIDAYS: Readonly<Record<string, string>> = {
  '01-01': '신정',
  '03-01': '삼일절',
  '05-05': '어린이날',
  '06-06': '현충일',
  '08-15': '광복절',
  '10-03': '개천절',
  '10-09': '한글날',
  '12-25': '기독탄신일',
};

interface FixtureEvent {
  readonly name: string;
  readonly content?: string;
  readonly grades: readonly number[];
  readonly category?: string;
}

/** The school year's events by MM-DD; several on one day where schools have them. */
export const ANNUAL_EVENTS: Readonly<Record<string, readonly FixtureEvent[]>> = {
  '03-02': [
    { name: '입학식', content: '신입생 입학식 (강당 10:00)', grades: [1] },
    { name: '시업식', grades: [2, 3] },
    { name: '기숙사 입사', content: '19:00까지 입사', grades: [1, 2, 3] },
  ],
  '04-22': [{ name: '1학기 1차 지필평가', grades: [1, 2, 3] }],
  '04-23': [{ name: '1학기 1차 지필평가', grades: [1, 2, 3] }],
  '05-15': [{ name: '스승의 날 기념식', grades: [1, 2, 3] }],
  '06-05': [
    { name: '체육대회', content: '반별 계주, 줄다리기', grades: [1, 2, 3] },
    { name: '학부모 공개수업', grades: [1] },
  ],
  '07-07': [{ name: '1학기 2차 지필평가', grades: [1, 2, 3] }],
  '07-17': [
    { name: '여름방학식', grades: [1, 2, 3] },
    { name: '대청소', grades: [1, 2, 3] },
  ],
  '08-17': [{ name: '2학기 개학식', grades: [1, 2, 3] }],
  '09-10': [{ name: '취업박람회', content: '협약 기업 채용 설명회', grades: [3] }],
  '10-14': [{ name: '2학기 1차 지필평가', grades: [1, 2, 3] }],
  '11-20': [
    { name: '전공동아리 발표회', grades: [1, 2] },
    { name: '진로 특강', content: '졸업생 선배와의 대화', grades: [3] },
  ],
  '12-09': [{ name: '2학기 2차 지필평가', grades: [1, 2, 3] }],
  '12-31': [{ name: '겨울방학식', grades: [1, 2, 3] }],
  '02-10': [
    { name: '졸업식', grades: [3] },
    { name: '종업식', grades: [1, 2] },
  ],
};

/** Ordinary days still have an entry, so the demo shows a calendar for every day. */
function routineEvent(date: string): FixtureEvent {
  const weekday = isoWeekday(date);
  if (weekday === 6) return { name: '토요휴업일', grades: [1, 2, 3], category: '휴업일' };
  if (weekday === 7) return { name: '기숙사 입사', content: '19:00까지 입사', grades: [1, 2, 3], category: '휴업일' };
  if (weekday === 5) return { name: '전공동아리 활동', content: '7교시', grades: [1, 2] };
  return { name: '방과후학교', content: '8~9교시', grades: [1, 2, 3] };
}

type AllergyForm = 'paren-dot' | 'paren' | 'suffix';

interface Dish {
  readonly name: string;
  readonly codes: readonly number[];
}

const RICE: readonly Dish[] = [
  { name: '쌀밥', codes: [] },
  { name: '현미밥', codes: [] },
  { name: '흑미밥', codes: [] },
  { name: '차조밥', codes: [] },
];
const SOUPS: readonly Dish[] = [
  { name: '쇠고기미역국', codes: [5, 6, 13, 16] },
  { name: '얼갈이된장국', codes: [5, 6] },
  { name: '김치찌개', codes: [5, 6, 9, 10, 13] },
  { name: '북엇국', codes: [1, 5, 6] },
  { name: '감자국', codes: [5, 6] },
  { name: '어묵국', codes: [1, 5, 6, 13] },
];
const MAINS: readonly Dish[] = [
  { name: '돈까스', codes: [1, 2, 5, 6, 10, 12] },
  { name: '제육볶음', codes: [5, 6, 10, 13] },
  { name: '닭갈비', codes: [5, 6, 13, 15] },
  { name: '고등어구이', codes: [7] },
  { name: '오징어볶음', codes: [5, 6, 13, 17] },
  { name: '소불고기', codes: [5, 6, 13, 16] },
];
const SIDES: readonly Dish[] = [
  { name: '시금치나물', codes: [5, 6] },
  { name: '콩나물무침', codes: [5] },
  { name: '계란말이', codes: [1, 5] },
  { name: '감자채볶음', codes: [5] },
  { name: '잣죽', codes: [19] },
  { name: '새우튀김', codes: [1, 5, 6, 9] },
];
const KIMCHI: readonly Dish[] = [
  { name: '배추김치', codes: [9, 13] },
  { name: '깍두기', codes: [9, 13] },
];
const DESSERTS: readonly Dish[] = [
  { name: '요구르트', codes: [2] },
  { name: '사과', codes: [] },
  { name: '바나나우유', codes: [2] },
  { name: '귤', codes: [] },
];

const ORIGINS =
  '쌀 : 국내산<br/>김치류 : 국내산<br/>고춧가루(김치류) : 국내산<br/>쇠고기(종류) : 국내산(한우)<br/>' +
  '돼지고기 : 국내산<br/>닭고기 : 국내산<br/>오징어 : 원양산<br/>고등어 : 노르웨이산';

/** FNV-1a: a stable number from a string, to seed one date's choices. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** A seeded pick: the same date and slot always choose the same item. */
function pick<T>(items: readonly T[], seed: string): T {
  return items[hash(seed) % items.length] as T;
}

/** A dish as NEIS writes it, in one of its allergy-code forms, sometimes with a marker. */
function writeDish(dish: Dish, form: AllergyForm, seed: string): string {
  const marker = hash(`${seed}:marker`) % 4 === 0 ? '*' : hash(`${seed}:marker`) % 4 === 1 ? '#' : '';
  const name = marker === '*' ? `*${dish.name}` : `${dish.name}${marker}`;
  if (dish.codes.length === 0) return name;
  const codes = dish.codes.join('.');
  if (form === 'paren-dot') return `${name} (${codes}.)`;
  if (form === 'paren') return `${name} (${codes})`;
  return `${name}${codes}.`;
}

/** The dishes of one meal in NEIS's DDISH_NM format (old space-separated style on the 7th, 17th, 27th). */
export function fakeMenu(date: string, mealCode: number): string {
  const seed = `${date}:${mealCode}`;
  const dishes = [
    pick(RICE, `${seed}:rice`),
    pick(SOUPS, `${seed}:soup`),
    pick(MAINS, `${seed}:main`),
    pick(SIDES, `${seed}:side`),
    pick(KIMCHI, `${seed}:kimchi`),
  ];
  if (mealCode === 2) dishes.push(pick(DESSERTS, `${seed}:dessert`));
  const forms: readonly AllergyForm[] = ['paren-dot', 'paren', 'suffix'];
  const oldStyle = date.endsWith('7');
  const written = dishes.map((dish, i) =>
    writeDish(dish, oldStyle ? 'suffix' : (forms[(hash(seed) + i) % forms.length] as AllergyForm), `${seed}:${i}`),
  );
  return written.join(oldStyle ? ' ' : '<br/>');
}

const MEAL_NAMES = ['조식', '중식', '석식'] as const;

function common(school: FakeSchool): NeisRow {
  return {
    ATPT_OFCDC_SC_CODE: school.officeCode,
    ATPT_OFCDC_SC_NM: school.officeName,
    SD_SCHUL_CODE: school.schoolCode,
    SCHUL_NM: school.schoolName,
  };
}

/** Whether the fake has no meals on `date` (public holidays; `today` always has meals for the demo). */
export function isMealFreeDay(date: string, today: string): boolean {
  return date !== today && HOLIDAYS[date.slice(5)] !== undefined;
}

/** mealServiceDietInfo rows of one date: breakfast, lunch and dinner (a boarding school). */
export function fakeMealRows(school: FakeSchool, date: string, today: string): NeisRow[] {
  if (isMealFreeDay(date, today)) return [];
  const ymd = toCompactDate(date);
  return [1, 2, 3].map((code) => {
    const served = 300 + (hash(`${date}:${code}:fgr`) % 200);
    const calories = 650 + (hash(`${date}:${code}:cal`) % 2500) / 10;
    return {
      ...common(school),
      MMEAL_SC_CODE: String(code),
      MMEAL_SC_NM: MEAL_NAMES[code - 1],
      MLSV_YMD: ymd,
      // NEIS sends the served count as a number on some rows and as a string on others.
      MLSV_FGR: code === 2 ? String(served) : served + 0.0,
      DDISH_NM: fakeMenu(date, code),
      ORPLC_INFO: ORIGINS,
      CAL_INFO: `${calories.toFixed(1)} Kcal`,
      NTR_INFO: `탄수화물(g) : ${(90 + (hash(`${date}:${code}:c`) % 400) / 10).toFixed(1)}<br/>단백질(g) : ${(25 + (hash(`${date}:${code}:p`) % 150) / 10).toFixed(1)}<br/>지방(g) : ${(15 + (hash(`${date}:${code}:f`) % 120) / 10).toFixed(1)}<br/>칼슘(mg) : 263.9<br/>철분(mg) : 4.7`,
      MLSV_FROM_YMD: ymd,
      MLSV_TO_YMD: ymd,
      LOAD_DTM: ymd,
    };
  });
}

/** SchoolSchedule rows of one date: fixture events, a holiday, or the routine entry. */
export function fakeScheduleRows(school: FakeSchool, date: string): NeisRow[] {
  const holiday = HOLIDAYS[date.slice(5)];
  const events: readonly FixtureEvent[] =
    ANNUAL_EVENTS[date.slice(5)] ?? (holiday ? [{ name: holiday, grades: [1, 2, 3], category: '공휴일' }] : [routineEvent(date)]);
  const ymd = toCompactDate(date);
  return events.map((event) => ({
    ...common(school),
    AY: String(academicYearOf(date)),
    DGHT_CRSE_SC_NM: '주간',
    SCHUL_CRSE_SC_NM: '고등학교',
    SBTR_DD_SC_NM: event.category ?? '해당없음',
    AA_YMD: ymd,
    EVENT_NM: event.name,
    EVENT_CNTNT: event.content ?? '',
    ONE_GRADE_EVENT_YN: event.grades.includes(1) ? 'Y' : 'N',
    TW_GRADE_EVENT_YN: event.grades.includes(2) ? 'Y' : 'N',
    THREE_GRADE_EVENT_YN: event.grades.includes(3) ? 'Y' : 'N',
    FR_GRADE_EVENT_YN: 'N',
    FIV_GRADE_EVENT_YN: 'N',
    SIX_GRADE_EVENT_YN: 'N',
    LOAD_DTM: ymd,
  }));
}

const SUBJECTS: Readonly<Record<number, readonly string[]>> = {
  1: ['국어', '수학', '영어', '통합사회', '과학', '프로그래밍', '컴퓨터 구조', '체육', '음악'],
  2: ['문학', '수학Ⅰ', '영어Ⅰ', '자료구조', '데이터베이스', '웹 프로그래밍', '체육', '한국사'],
  3: ['화법과 작문', '확률과 통계', '실용 영어', '캡스톤 디자인', '정보 보안', '인공지능 기초', '진로와 직업'],
};
const DEPARTMENTS = ['소프트웨어개발과', '소프트웨어개발과', '스마트IoT과', '인공지능소프트웨어과'] as const;

/** hisTimetable rows of one date: periods 1–7 (6 on Fridays), weekdays that are not holidays. */
export function fakeTimetableRows(school: FakeSchool, date: string, grade?: number, classNum?: number): NeisRow[] {
  const weekday = isoWeekday(date);
  if (weekday > 5 || HOLIDAYS[date.slice(5)]) return [];
  const ymd = toCompactDate(date);
  const periods = weekday === 5 ? 6 : 7;
  const month = Number(date.slice(5, 7));
  const rows: NeisRow[] = [];
  for (const g of grade ? [grade] : [1, 2, 3]) {
    for (const c of classNum ? [classNum] : [1, 2, 3, 4]) {
      for (let p = 1; p <= periods; p++) {
        rows.push({
          ...common(school),
          AY: String(academicYearOf(date)),
          SEM: month >= 3 && month <= 8 ? '1' : '2',
          ALL_TI_YMD: ymd,
          DGHT_CRSE_SC_NM: '주간',
          ORD_SC_NM: '공업계',
          DDDEP_NM: DEPARTMENTS[c - 1] ?? DEPARTMENTS[0],
          GRADE: String(g),
          CLRM_NM: `${g}-${c}`,
          CLASS_NM: String(c),
          PERIO: String(p),
          ITRT_CNTNT: pick(SUBJECTS[g] ?? [], `${date}:${g}:${c}:${p}`),
          LOAD_DTM: ymd,
        });
      }
    }
  }
  return rows;
}
