// Today's meals at the school, with the typed client (@campus/client). The answer is kept in a
// file with its ETag; the next run sends If-None-Match and, while the menu has not changed, gets
// a 304 without a body (and without spending the key's rate limit). See README.md.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createClient, type paths } from '@campus/client';

/** The envelope of GET /v1/neis/meals, typed from the service's OpenAPI document. */
type MealsAnswer = paths['/v1/neis/meals']['get']['responses'][200]['content']['application/json'];
interface Cached {
  readonly etag: string;
  readonly answer: MealsAnswer;
}

const baseUrl = process.env['CAMPUS_URL'] ?? 'http://127.0.0.1:8080';
// The demo key of `npm run demo`; use your own from the developer console (scope NEIS_READ).
const apiKey = process.env['CAMPUS_API_KEY'] ?? 'de70c0de-5eed-4a11-8c0d-000000000001';
const cacheFile = process.env['MEALS_CACHE'] ?? '.cache/meals.json';
// Today in the school's time zone unless a date is given (YYYY-MM-DD).
const date = process.env['DATE'];

const campus = createClient({ baseUrl, apiKey });

function readCache(): Cached | undefined {
  try {
    return JSON.parse(readFileSync(cacheFile, 'utf8')) as Cached;
  } catch {
    return undefined;
  }
}

const cached = readCache();
const { data, error, response } = await campus.GET('/v1/neis/meals', {
  params: { query: date ? { date } : {} },
  // A cached answer is only good for the same day: the ETag names the exact body.
  headers: cached && (!date || cached.answer.data[0]?.mealDate === date) ? { 'If-None-Match': cached.etag } : {},
});

let answer: MealsAnswer;
if (response.status === 304 && cached) {
  console.log('(304 Not Modified: 저장해 둔 답을 씁니다 / using the cached answer)');
  answer = cached.answer;
} else if (data) {
  answer = data;
  const etag = response.headers.get('ETag');
  if (etag) {
    mkdirSync(dirname(cacheFile), { recursive: true });
    writeFileSync(cacheFile, JSON.stringify({ etag, answer } satisfies Cached));
  }
  console.log(`(200 OK: 새로 받았습니다 / fresh, ETag ${etag ?? '-'})`);
} else {
  console.error(`급식을 가져오지 못했습니다 (could not get the meals): ${response.status} ${error ? error.message : ''}`);
  process.exit(1);
}

const NAMES = { BREAKFAST: '조식 (Breakfast)', LUNCH: '중식 (Lunch)', DINNER: '석식 (Dinner)' } as const;
if (answer.data.length === 0) console.log('오늘은 급식이 없습니다. (No meals today.)');
for (const meal of answer.data) {
  console.log(`\n${meal.mealDate} ${NAMES[meal.mealType]}${meal.mealCalories ? ` · ${meal.mealCalories}` : ''}`);
  for (const dish of meal.mealMenu) console.log(`  - ${dish}`);
}
