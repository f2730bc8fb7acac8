import type { Database } from '../data/database.js';
import { errorEnvelope, successEnvelope } from './envelope.js';
import type { AppMiddleware } from './context.js';

/** Extra sections of the health report, contributed by surfaces (e.g. NEIS sync state). */
export type HealthContributor = () => Promise<Record<string, unknown>>;

/**
 * GET /v1/health: no credentials; 200 when the database answers, 503 (with the same report)
 * when it does not.
 */
export function healthHandler(db: Database, contributors: readonly HealthContributor[]): AppMiddleware {
  return async (ctx) => {
    const started = Date.now();
    const database = await db.ping().then(
      () => ({ status: 'UP', latencyMs: Date.now() - started }),
      () => ({ status: 'DOWN', latencyMs: Date.now() - started }),
    );
    const report: Record<string, unknown> = { database };
    // Side by side: while the database is away each waits for it to time out.
    const sections = await Promise.all(contributors.map((contribute) => contribute().catch(() => ({}))));
    for (const section of sections) Object.assign(report, section);
    ctx.set('Cache-Control', 'no-store');
    if (database.status === 'UP') {
      ctx.body = successEnvelope(report);
    } else {
      ctx.status = 503;
      ctx.body = errorEnvelope(503, 'The database is unreachable.', report);
    }
  };
}
