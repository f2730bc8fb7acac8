import type { Config } from '../config/index.js';
import type { Database } from '../data/database.js';

/** Demo account and client for the README's OAuth walk-through. Placeholder until the OAuth issue lands. */
export async function seedDemoOAuth(_db: Database, _config: Config): Promise<{ lines: string[] } | undefined> {
  return undefined;
}
