import { expect } from 'chai';
import { ApiScope } from '../../src/data/__generated__/enums.js';
import {
  EVENT_TYPE_TABLE,
  EVENT_TYPES,
  FEED_SCOPES,
  isEventType,
  scopesReceiving,
  viewOf,
  type EventTypeRow,
  type Subscriber,
} from '../../src/data/events/types.js';
import { presentEvent, type EventDoc } from '../../src/data/events/outbox.js';
import { parseEventTypes, wantsType } from '../../src/data/events/webhooks.js';
import { BadRequestError } from '../../src/errors/index.js';
import { rootFieldRules, UndeclaredAccessError } from '../../src/graphql/access.js';
import { checkFeedAccess } from '../../src/graphql/resolvers/changes.js';
import { buildSchema } from '../../src/graphql/schema.js';

/**
 * The one table of event types (src/data/events/types.ts) and the one presenter of an event for a
 * subscriber (presentEvent, src/data/events/outbox.ts): an unknown type is refused everywhere, a
 * `batch.completed` reaches a subscriber without STUDENT_READ with counts only, and only an
 * operator sees which account made a change.
 */

const ALL = new Set(Object.values(ApiScope));
const subscriber = (operator: boolean, ...scopes: ApiScope[]): Subscriber => ({ scopes: new Set(scopes), operator });

/** A stored event as src/data/events/outbox.ts writes it. */
function stored(type: string, data: unknown, actorId: number | null = 7): EventDoc {
  return {
    _id: 42,
    type,
    at: new Date('2026-03-02T00:00:00.000Z'),
    actorKind: actorId === null ? 'CLI' : 'ACCOUNT',
    actorId,
    batchId: 'b1',
    data: JSON.stringify(data),
  };
}

const UNDO = {
  kind: 'UNDO',
  summary: 'undo of UPDATE student #1 홍건우',
  records: 1,
  counts: { created: 0, updated: 1, deleted: 0 },
};
const IMPORT = {
  kind: 'IMPORT',
  summary: 'import 2학년-명단.csv: 1 created, 0 updated, 0 removed, 0 unchanged',
  records: 1,
  counts: { created: 1, updated: 0, deleted: 0 },
};

describe('events and webhooks: the event-type table and the presenter of an event', () => {
  it('has every type the writers emit, each with one scope, a description and both hints', () => {
    expect(EVENT_TYPES).to.deep.equal([
      'student.created',
      'student.updated',
      'student.deleted',
      'club.created',
      'club.updated',
      'club.deleted',
      'project.created',
      'project.updated',
      'project.deleted',
      'batch.completed',
      'school.rollover.started',
      'school.rollover.completed',
      'neis.meals.updated',
      'neis.schedules.updated',
      'neis.timetables.updated',
    ]);
    for (const type of EVENT_TYPES) {
      const row: EventTypeRow = EVENT_TYPE_TABLE[type];
      expect(Object.values(ApiScope), type).to.include(row.scope);
      expect(
        [row.description, row.hint.ko, row.hint.en].every((text) => text.length > 0),
        type,
      ).to.equal(true);
    }
    // The feed's scopes come from the table: any scope some type is received with.
    expect(FEED_SCOPES).to.deep.equal(['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ', 'NEIS_READ']);
    expect(scopesReceiving('batch.completed')).to.deep.equal(['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ']);
    // The school-year signal: every school scope hears of a rollover, its counts whole.
    const started = { kind: 'ROLLOVER', records: 3, counts: { created: 0, updated: 3, deleted: 0 } };
    for (const [type, data] of [
      ['school.rollover.started', started],
      ['school.rollover.completed', { ...started, outcome: 'APPLIED' }],
    ] as const) {
      expect(scopesReceiving(type)).to.deep.equal(['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ']);
      expect(presentEvent(stored(type, data), subscriber(false, 'CLUB_READ'))?.data).to.deep.equal(data);
    }
  });

  it('an unknown type fails: a type error, refused as a webhook choice, and shown to no subscriber', () => {
    // @ts-expect-error a type that is no row of the table does not type-check
    expect(EVENT_TYPE_TABLE['student.renamed']).to.equal(undefined);
    // @ts-expect-error a row without its English hint does not type-check either
    const withoutEnglish: EventTypeRow = { scope: 'CLUB_READ', description: 'd', hint: { ko: '가' } };
    expect(withoutEnglish.hint.en).to.equal(undefined);
    expect(isEventType('student.renamed')).to.equal(false);
    expect(isEventType('toString')).to.equal(false);
    // Before the table, an unknown prefix fell back to "any school scope".
    expect(viewOf('student.renamed', ALL)).to.equal(null);
    expect(viewOf('audit.exported', ALL)).to.equal(null);
    expect(presentEvent(stored('audit.exported', { x: 1 }), subscriber(true, ...ALL))).to.equal(null);
    expect(() => parseEventTypes('student.created,student.renamed')).to.throw(BadRequestError, /^events: unknown student\.renamed; use /);
    expect(() => parseEventTypes('audit.*')).to.throw(BadRequestError, /^events: unknown audit\.\*/);
  });

  it('takes every type, each group of them (neis.* and neis.meals.* too) and *, and matches events by them', () => {
    expect(parseEventTypes('student.*, neis.*,neis.meals.*  batch.completed')).to.deep.equal([
      'student.*',
      'neis.*',
      'neis.meals.*',
      'batch.completed',
    ]);
    expect(parseEventTypes(['*'])).to.deep.equal(['*']);
    expect(parseEventTypes(EVENT_TYPES)).to.deep.equal(EVENT_TYPES);
    expect(EVENT_TYPES.filter((type) => wantsType(['neis.*'], type))).to.deep.equal([
      'neis.meals.updated',
      'neis.schedules.updated',
      'neis.timetables.updated',
    ]);
    expect(EVENT_TYPES.filter((type) => wantsType(['student.*', 'batch.completed'], type))).to.deep.equal([
      'student.created',
      'student.updated',
      'student.deleted',
      'batch.completed',
    ]);
  });

  it('shows a batch.completed whole with STUDENT_READ; with CLUB_READ or PROJECT_READ, its kind and counts only; with NEIS_READ not at all', () => {
    for (const data of [UNDO, IMPORT]) {
      expect(presentEvent(stored('batch.completed', data), subscriber(false, 'STUDENT_READ'))?.data).to.deep.equal(data);
      for (const scope of ['CLUB_READ', 'PROJECT_READ'] as const) {
        const shown = presentEvent(stored('batch.completed', data), subscriber(false, scope));
        expect(shown?.data, scope).to.deep.equal({ kind: data.kind, summary: null, records: data.records, counts: data.counts });
        expect(JSON.stringify(shown), scope).not.to.include('홍건우').and.not.to.include('명단.csv').and.not.to.include('#1');
      }
      expect(presentEvent(stored('batch.completed', data), subscriber(true, 'NEIS_READ'))).to.equal(null);
    }
    // The other types: their scope or nothing.
    expect(presentEvent(stored('student.updated', { before: null, after: null }), subscriber(false, 'CLUB_READ', 'PROJECT_READ'))).to.equal(
      null,
    );
    expect(presentEvent(stored('neis.meals.updated', { dates: [] }), subscriber(false, 'NEIS_READ'))?.data).to.deep.equal({ dates: [] });
  });

  it("shows the actor's account id to operators only; the field is always there", () => {
    const event = stored('club.updated', { before: null, after: null });
    expect(presentEvent(event, subscriber(true, 'CLUB_READ'))).to.deep.equal({
      id: '42',
      type: 'club.updated',
      time: '2026-03-02T00:00:00.000Z',
      actor: { kind: 'ACCOUNT', accountId: 7 },
      batchId: 'b1',
      data: { before: null, after: null },
    });
    expect(presentEvent(event, subscriber(false, 'CLUB_READ'))?.actor).to.deep.equal({ kind: 'ACCOUNT', accountId: null });
    const byCommand = stored('club.updated', { before: null, after: null }, null);
    expect(presentEvent(byCommand, subscriber(true, 'CLUB_READ'))?.actor).to.deep.equal({ kind: 'CLI', accountId: null });
  });

  it('GraphQL declares the change feed with the scopes of the table, or the schema does not build', () => {
    expect(rootFieldRules(buildSchema()).get('Query.changes')).to.deep.equal({ rule: 'DATA', scopes: FEED_SCOPES });
    const without = new Map([['Query.changes', { rule: 'DATA', scopes: ['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ'] } as const]]);
    expect(() => checkFeedAccess(without)).to.throw(
      UndeclaredAccessError,
      /^Query\.changes: .* must name the scopes of the event-type table/,
    );
  });
});
