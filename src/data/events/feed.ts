import { AppError, BadRequestError } from '../../errors/index.js';
import { CHANGES_LIMIT } from '../../limits.js';
import type { Database } from '../database.js';
import type { Subscriber } from './types.js';
import { readCommitted } from '../school/engine.js';
import { EVENT_RETENTION_DAYS, events, lastSequence, presentEvent, prunedThrough, type ChangeEvent } from './outbox.js';

/** Events read per request at most, visible or not, so a key that sees few types still gets an answer (and a cursor) quickly. */
const SCAN_MAX = 5000;

/** 410: the cursor names events older than the feed keeps. */
export class CursorExpiredError extends AppError {
  constructor(after: number, oldest: number) {
    super(
      'GONE',
      `after: cursor ${after} is older than the ${EVENT_RETENTION_DAYS} days of events the feed keeps (the oldest kept follows ${oldest}); read the data afresh from /v1/students, /v1/clubs and /v1/projects, then follow the feed from a cursor of now (GET /v1/changes without after, to its last nextCursor).`,
    );
  }
}

export interface ChangePage {
  events: ChangeEvent[];
  readonly nextCursor: string;
}

/**
 * One page of the change feed (GET /v1/changes, GraphQL `changes`): the events after the cursor
 * in commit order (their sequence numbers, src/data/events/outbox.ts), each as the subscriber may
 * see it (presentEvent: the types its scopes allow, in the form they allow), read through
 * readCommitted: the events of a batch still being written are never served, and the feed stops
 * before them without waiting, so what committed ahead of them (an announced rollover's
 * `school.rollover.started`, src/data/events/announcements.ts) is served while the batch applies.
 * `nextCursor` is the last event looked at, visible or not: resuming from it returns exactly the
 * events after it.
 */
export async function readChanges(
  db: Database,
  request: { after: string | null; limit: number | null; subscriber: Subscriber },
): Promise<ChangePage> {
  const limit = request.limit ?? CHANGES_LIMIT.default;
  if (!Number.isInteger(limit) || limit < CHANGES_LIMIT.min || limit > CHANGES_LIMIT.max) {
    throw new BadRequestError(`limit: must be an integer from ${CHANGES_LIMIT.min} to ${CHANGES_LIMIT.max}.`);
  }
  let after = 0;
  if (request.after !== null) {
    if (!/^(0|[1-9][0-9]{0,14})$/.test(request.after)) {
      throw new BadRequestError('after: must be a cursor the feed gave (nextCursor, or an event id: a non-negative integer).');
    }
    after = Number(request.after);
  }
  const { value, below } = await readCommitted(db, async () => {
    const [pruned, last] = await Promise.all([prunedThrough(db), lastSequence(db)]);
    if (request.after !== null && after < pruned) throw new CursorExpiredError(after, pruned);
    if (after > last) throw new BadRequestError(`after: cursor ${after} names no event yet (the newest is ${last}).`);
    const from = Math.max(after, pruned);
    const found = await events(db)
      .find({ _id: { $gt: from } })
      .sort({ _id: 1 })
      .limit(SCAN_MAX)
      .toArray();
    return { from, found };
  });
  const page: ChangeEvent[] = [];
  let cursor = value.from;
  for (const doc of value.found) {
    if (page.length === limit || doc._id >= below) break;
    cursor = doc._id;
    const shown = presentEvent(doc, request.subscriber);
    if (shown) page.push(shown);
  }
  return { events: page, nextCursor: String(cursor) };
}
