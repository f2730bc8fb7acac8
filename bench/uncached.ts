import { ApiKeyService, API_SCOPES } from '../src/data/keys/store.js';
import { openDatabase, type Database } from '../src/data/database.js';
import { seedDemoSchool } from '../src/data/school/demo.js';
import { benchDatabase, compare, type Figures, measure, report, startProcess, BENCH_POLICY } from './lib.js';

/** The target: uncached list queries on a school of 1,000 students answer with p99 at most 50 ms. */
const MAX_P99_MS = 50;
const SCHOOL_SIZES = [1000, 10_000];
/** The target: on 10,000 students at least this share of the rate on 1,000, for answers of the same size. */
const TARGET = 0.5;

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
 * The n-th query of a second sequence whose answers have the same size on any school of at least
 * 1,000 students: students only, unfiltered, pages of 1 to 97 within the first 970 (sorts,
 * directions, sizes and pages again from pairwise coprime moduli, so none repeats in a run).
 */
export function sameSizePath(n: number): string {
  const sortBy = STUDENT_SORTS[n % STUDENT_SORTS.length] ?? 'ID';
  return `/v1/students?size=${1 + (n % 97)}&page=${n % 10}&sortDirection=${n % 2 === 0 ? 'ASC' : 'DESC'}&sortBy=${sortBy}`;
}

/**
 * Uncached reads on a school of 1,000 students (the p99 target) and of 10,000, 16 connections,
 * every request a query the service has not answered before: the varied sequence (answers grow
 * with the school: how the cost grows), then answers of the same size on both, alternating
 * between the two schools (the target: 10,000 at least TARGET of 1,000's rate).
 */
export async function runUncachedBench(): Promise<boolean> {
  const database = await benchDatabase('bench');
  const schools: { students: number; db: Database; app: Awaited<ReturnType<typeof startProcess>>; key: string }[] = [];
  try {
    for (const students of SCHOOL_SIZES) {
      const url = new URL(database.uri);
      url.pathname = `/bench_uncached_${students}`;
      const db = await openDatabase(url.toString(), { backendIndexes: database.indexer });
      await seedDemoSchool(db, { students });
      const { key } = await new ApiKeyService(db, BENCH_POLICY).issue({
        scopes: [...API_SCOPES],
        rateLimit: { points: 1e9, durationSeconds: 60 },
        label: 'bench',
      });
      const app = await startProcess('bench/serve-app.ts', { MONGODB_URI: url.toString(), LOG_LEVEL: 'silent' });
      schools.push({ students, db, app, key });
    }
    let n = 0;
    const load = (school: (typeof schools)[number], path: (n: number) => string) => ({
      url: school.app.url,
      headers: { 'X-API-KEY': school.key },
      connections: 16,
      nextPath: () => path(n++),
    });
    const varied: { figures: Figures; maxP99?: number; note: string }[] = [];
    for (const school of schools) {
      // The first request loads the school; the warm-up round lets the JIT settle.
      await measure('warm-up', { ...load(school, uncachedPath), durationSeconds: 2 });
      const figures = await measure(`uncached lists, ${school.students.toLocaleString('en')} students`, {
        ...load(school, uncachedPath),
        durationSeconds: 5,
      });
      const note = 'absolute (no baseline)';
      varied.push(school === schools[0] ? { figures, maxP99: MAX_P99_MS, note } : { figures, note: `${note}: how the cost grows` });
    }
    const [small, large] = schools;
    if (!small || !large) throw new Error('two schools expected');
    const same = await compare(
      { label: `  same-size answers, ${small.students.toLocaleString('en')} students`, options: load(small, sameSizePath) },
      { label: `  same-size answers, ${large.students.toLocaleString('en')} students`, options: load(large, sameSizePath) },
    );
    return report(
      'Uncached list queries (varied: students, clubs, projects with varied filters, sorts, pages and sizes, 5 s each; same-size: students, pages of 1-97, median of 5 alternating 2 s rounds; 16 connections)',
      [...varied, { figures: same.baseline }, { figures: same.subject, baseline: same.baseline, target: TARGET }],
    );
  } finally {
    for (const school of schools) {
      await school.app.stop();
      await school.db.close();
    }
    await database.stop();
  }
}
