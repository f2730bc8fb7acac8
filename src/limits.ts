/**
 * Limits written once. The ranges and defaults of the data API: the REST parameters
 * (src/rest/params.ts), the GraphQL arguments (src/graphql/args.ts, and the schema's own
 * defaults, set from here in src/graphql/schema.ts), the cost estimate (src/graphql/limits.ts)
 * and the OpenAPI document all read them. Sources: docs/spec.md ("Limits") and docs/decisions.md
 * ("Paging", "Meals and schedules"). Then the developer console's caps per account (at the end).
 */
export interface Range {
  readonly min: number;
  readonly max: number;
}

export const RANGES = {
  page: { min: 0, max: 2_147_483_647 },
  size: { min: 1, max: 1000 },
  grade: { min: 1, max: 3 },
  classNum: { min: 1, max: 4 },
  number: { min: 1, max: 18 },
  id: { min: 1, max: Number.MAX_SAFE_INTEGER },
  dormitoryRoom: { min: 1, max: 9999 },
} as const satisfies Record<string, Range>;

/** Events per answer of the change feed (GET /v1/changes, GraphQL `changes`): the range and the default. */
export const CHANGES_LIMIT = { min: 1, max: 1000, default: 100 } as const;

/** Characters of a text filter (name, email, clubName, projectName), in REST and GraphQL alike. */
export const MAX_TEXT_LENGTH = 100;

/** The first page is 0 (docs/spec.md). */
export const DEFAULT_PAGE = 0;

/** Page sizes when `size` is omitted, per list (the spec's "Default page size"). */
export const DEFAULT_PAGE_SIZE = { students: 300, clubs: 100, projects: 100, publicProjects: 100 } as const;

/** The longest date range a meals, schedules or timetables query may span, both ends included. */
export const MAX_RANGE_DAYS = 366;

/*
 * The developer console's caps per account (docs/limits-and-security.md,
 * "The developer console"): the code that enforces each and the message that names it read them here.
 */

/** Project proposals one account may have waiting for a decision at once (src/data/school/proposals.ts). */
export const MAX_PENDING_PROPOSALS = 5;

/** Saves of a student's own profile (/console/profile) per account (src/surfaces/console/profile.ts). */
export const PROFILE_SAVE_LIMIT = { points: 10, durationSeconds: 60 } as const;

/** Webhook test events and redeliveries sent from the console per account (src/surfaces/console/webhooks.ts). */
export const WEBHOOK_SEND_LIMIT = { points: 10, durationSeconds: 60 } as const;

/**
 * A school batch that writes at least this many records is announced in the change feed before it
 * applies, like every school-year rollover (src/data/events/announcements.ts; docs/decisions.md,
 * "The school-year signal"): more than two classes' worth, so that a class's edit is not.
 */
export const ANNOUNCED_BATCH_RECORDS = 50;

/**
 * NEIS data whose last successful sync is older than this is stale: the service syncs it again at
 * start-up (src/neis/scheduler.ts), and the status page shows its dataset as degraded. A day and a
 * little: the daily sync may run late.
 */
export const NEIS_STALE_AFTER_MS = 26 * 3_600_000;
