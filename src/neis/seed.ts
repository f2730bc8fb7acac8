import { addDays, todayIn } from '../calendar.js';
import type { Config } from '../config/index.js';
import type { Database } from '../data/database.js';
import { NeisStore } from '../data/neis/store.js';
import { createLogger, type Logger } from '../logger.js';
import { NeisClient } from './client.js';
import { startFakeNeis } from './fake-server.js';
import { NeisSync } from './sync.js';

/** The demo window: two weeks back and six weeks ahead of today, enough to browse around. */
export const DEMO_DAYS_BEFORE = 14;
export const DEMO_DAYS_AFTER = 42;

/**
 * Demo meals, schedules and timetables: starts the fake NEIS server in-process, syncs the
 * configured school from it through the real client and sync, and stops it. Today (in the
 * school's zone) is in the window, so a newcomer sees today's data without a NEIS key.
 * Running it again replaces the window with the same rows.
 */
export async function seedDemoNeis(
  db: Database,
  config: Config,
  logger: Logger = createLogger('warn', process.stderr),
): Promise<{ lines: string[] }> {
  const today = todayIn(config.schoolTimeZone, new Date());
  const fake = await startFakeNeis({ anchor: today });
  try {
    const { officeCode, schoolCode } = config.neis;
    const sync = new NeisSync({
      store: new NeisStore(db),
      client: new NeisClient({ baseUrl: fake.url, officeCode, schoolCode, timeoutMs: 10_000 }),
      officeCode,
      schoolCode,
      logger,
    });
    const from = addDays(today, -DEMO_DAYS_BEFORE);
    const to = addDays(today, DEMO_DAYS_AFTER);
    const result = await sync.run({ from, to, trigger: 'seed' });
    if (result.outcome === 'busy') {
      return { lines: [`NEIS demo data not loaded: a NEIS sync is running (${result.owner ?? 'unknown'}); run the seed again later.`] };
    }
    const count = (d: 'meals' | 'schedules' | 'timetables') => result.datasets[d]?.rows ?? 0;
    return {
      lines: [
        `NEIS demo data (from the built-in fake NEIS server, no NEIS key needed) for ${from}..${to}: ` +
          `${count('meals')} meals, ${count('schedules')} calendar events, ${count('timetables')} timetable periods; ` +
          `today is ${today} (${config.schoolTimeZone})${result.outcome === 'ok' ? '' : ` — sync ${result.outcome}: ${result.error ?? ''}`}.`,
      ],
    };
  } finally {
    await fake.close();
  }
}
