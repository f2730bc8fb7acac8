import { ApiKeyService, API_SCOPES } from '../src/data/api-keys.js';
import { openDatabase } from '../src/data/database.js';
import { seedDemoSchool } from '../src/data/seed/demo.js';
import { benchDatabase, type Figures, measure, report, startProcess } from './lib.js';

/** Issue 9's target: uncached list queries on a school of 1,000 students answer with p99 at most 50 ms. */
const MAX_P99_MS = 50;
const SCHOOL_SIZES = [1000, 10_000];

const STUDENT_SORTS = ['ID', 'NAME', 'EMAIL', 'STUDENT_NUMBER', 'GRADE', 'CLASS_NUM', 'NUMBER', 'MAJOR', 'ROLE', 'SEX', 'DORMITORY_ROOM'];
const STUDENT_FILTERS = ['', '&grade=2', '&classNum=3', '&includeGraduates=true&role=GRADUATE', `&name=${encodeURIComponent('김')}`];
const CLUB_SORTS = ['ID', 'NAME', 'TYPE'];
const CLUB_FILTERS = ['', '&clubType=MAJOR_CLUB', '&clubStatus=ABOLISHED', '&clubName=Quokka', '&clubType=AUTONOMOUS_CLUB'];
const PROJECT_SORTS = ['ID', 'NAME'];
const PROJECT_FILTERS = ['', '&status=ENDED', '&clubId=3', '&status=ACTIVE', `&projectName=${encodeURIComponent('앱')}`];

/**
 * The n-th query of a sequence that does not repeat within a run, so the response cache (keyed
 * by the parsed parameters, src/rest/handler.ts) misses every time: students, clubs and
 * projects in turn; within a kind, size (1-997), page (0-6) and direction are the remainders of
 * pairwise coprime moduli, so they repeat together only after 997 x 7 x 2 queries of that kind.
 */
export function uncachedPath(n: number): string {
  const m = Math.floor(n / 3);
  const common = `size=${1 + (m % 997)}&page=${m % 7}&sortDirection=${m % 2 === 0 ? 'ASC' : 'DESC'}`;
  const at = (list: readonly string[]) => list[m % list.length] ?? '';
  if (n % 3 === 0) return `/v1/students?${common}&sortBy=${at(STUDENT_SORTS)}${STUDENT_FILTERS[m % 5] ?? ''}`;
  if (n % 3 === 1) return `/v1/clubs?${common}&sortBy=${at(CLUB_SORTS)}${CLUB_FILTERS[m % 5] ?? ''}`;
  return `/v1/projects?${common}&sortBy=${at(PROJECT_SORTS)}${PROJECT_FILTERS[m % 5] ?? ''}`;
}

/**
 * Uncached reads: a school of 1,000 students (the target) and of 10,000 (how the cost grows),
 * 16 connections, every request a query the service has not answered before.
 */
export async function runUncachedBench(): Promise<boolean> {
  const database = await benchDatabase('bench');
  const uri = database.uri;
  const db = await openDatabase(uri);
  const rows: { figures: Figures; maxP99?: number; note: string }[] = [];
  try {
    for (const students of SCHOOL_SIZES) {
      await seedDemoSchool(db, { students });
      const { key } = await new ApiKeyService(db).issue({
        scopes: [...API_SCOPES],
        rateLimit: { points: 1e9, durationSeconds: 60 },
        label: 'bench',
      });
      const app = await startProcess('bench/serve-app.ts', { MONGODB_URI: uri, LOG_LEVEL: 'silent' });
      try {
        let n = 0;
        const options = { url: app.url, headers: { 'X-API-KEY': key }, connections: 16, nextPath: () => uncachedPath(n++) };
        // The first request loads the school; the warm-up round lets the JIT settle.
        await measure('warm-up', { ...options, durationSeconds: 2 });
        const figures = await measure(`uncached lists, ${students.toLocaleString('en')} students`, { ...options, durationSeconds: 5 });
        const note = 'absolute (no baseline)';
        rows.push(students === SCHOOL_SIZES[0] ? { figures, maxP99: MAX_P99_MS, note } : { figures, note: `${note}: how the cost grows` });
      } finally {
        await app.stop();
      }
    }
  } finally {
    await db.close();
    await database.stop();
  }
  return report('Uncached list queries (students, clubs, projects; varied filters, sorts, pages and sizes; 16 connections; 5 s)', rows);
}
