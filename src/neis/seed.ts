import type { Config } from '../config/index.js';
import type { Database } from '../data/database.js';

/** Demo meals and schedules synced from the fake NEIS server. Placeholder until the NEIS issue lands. */
export async function seedDemoNeis(_db: Database, _config: Config): Promise<{ lines: string[] } | undefined> {
  return undefined;
}
