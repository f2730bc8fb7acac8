import { ApiScope } from '../__generated__/enums.js';
import { ANNOUNCED_BATCH_RECORDS } from '../../limits.js';

/*
 * The event types of the change feed and of webhooks, in one table (ARCHITECTURE "Rules declared
 * once": one table per concept). Each type has its one scope (a subscriber without it does not
 * receive the event, or receives the lesser form its row declares), a description (the event
 * table of docs/data-api.md, `npm run docs`), and the hints the developer console's webhook form shows. Everything
 * that lists the types or maps them to scopes reads it: the writers (src/data/events/outbox.ts,
 * src/data/neis/events.ts type their events by it), the feed (src/data/events/feed.ts), GraphQL's
 * and REST's feed scopes (src/graphql/resolvers/changes.ts, src/rest/endpoints.ts), webhooks'
 * choices and filters (src/data/events/webhooks.ts, src/events/delivery.ts, src/surfaces/console/webhooks.ts,
 * src/cli/commands/webhooks.ts). `viewOf` below is the rule; presentEvent (src/data/events/outbox.ts)
 * is the one presenter of an event for a subscriber, used by the feed and webhook delivery alike.
 */

/**
 * The lesser form of an event for subscribers holding one of `scopes` but not the type's own:
 * the fields of `data` named in `keeps` as they are, every other field null (so the shape stays,
 * and a field added later is hidden until it is declared here).
 */
export interface PartialView {
  readonly scopes: readonly ApiScope[];
  readonly keeps: readonly string[];
  /** What the lesser form shows, for the table of docs/data-api.md. */
  readonly shows: string;
}

export interface EventTypeRow {
  /** The scope a subscriber needs to receive the event whole. */
  readonly scope: ApiScope;
  /** Who else receives it, and what of it. */
  readonly partial?: PartialView;
  /** When it happens and what `data` holds (English; the event table of docs/data-api.md). */
  readonly description: string;
  /** What the developer console's webhook form says of it, Korean and English. */
  readonly hint: { readonly ko: string; readonly en: string };
}

/**
 * Every event type (docs/data-api.md, "GET /v1/changes"); `webhook.test`
 * (src/data/events/webhooks.ts) is sent by hand only, never in the feed.
 */
export const EVENT_TYPE_TABLE = {
  'student.created': {
    scope: 'STUDENT_READ',
    description: 'A student was added. `data` `{before: null, after}`: the student as GET /v1/students shows it.',
    hint: { ko: '학생 추가', en: 'a student added' },
  },
  'student.updated': {
    scope: 'STUDENT_READ',
    description: "A student's record, or what GET /v1/students shows of it (its clubs' names), changed. `data` `{before, after}`.",
    hint: { ko: '학생 정보 변경 (소속 동아리 이름 포함)', en: "a student changed (their clubs' names too)" },
  },
  'student.deleted': {
    scope: 'STUDENT_READ',
    description: 'A student was removed. `data` `{before, after: null}`.',
    hint: { ko: '학생 삭제', en: 'a student deleted' },
  },
  'club.created': {
    scope: 'CLUB_READ',
    description:
      'A club was added. `data` `{before: null, after}`: the club as GET /v1/clubs shows it (leader apart, members as participant summaries).',
    hint: { ko: '동아리 추가', en: 'a club added' },
  },
  'club.updated': {
    scope: 'CLUB_READ',
    description: "A club, or its leader's or members' summaries, changed (a student joined, left, was renamed). `data` `{before, after}`.",
    hint: { ko: '동아리 변경 (참여 학생 요약 포함)', en: 'a club changed (participant summaries too)' },
  },
  'club.deleted': {
    scope: 'CLUB_READ',
    description: 'A club was removed. `data` `{before, after: null}`.',
    hint: { ko: '동아리 삭제', en: 'a club deleted' },
  },
  'project.created': {
    scope: 'PROJECT_READ',
    description: 'A project was added. `data` `{before: null, after}`: the project as GET /v1/projects shows it.',
    hint: { ko: '프로젝트 추가', en: 'a project added' },
  },
  'project.updated': {
    scope: 'PROJECT_READ',
    description: "A project, its club's summary or its participants' summaries changed. `data` `{before, after}`.",
    hint: { ko: '프로젝트 변경 (참여 학생 요약 포함)', en: 'a project changed (participant summaries too)' },
  },
  'project.deleted': {
    scope: 'PROJECT_READ',
    description: 'A project was removed. `data` `{before, after: null}`.',
    hint: { ko: '프로젝트 삭제', en: 'a project deleted' },
  },
  'batch.completed': {
    // Its summary names the records and the imported file (src/data/school/writes.ts, import.ts, audit.ts):
    // whole only with STUDENT_READ; the other school scopes learn that a batch ran and how much it changed.
    scope: 'STUDENT_READ',
    partial: {
      scopes: ['CLUB_READ', 'PROJECT_READ'],
      keeps: ['kind', 'records', 'counts'],
      shows: '`kind`, `records` and `counts` only (`summary` null)',
    },
    description:
      'After the record events of an import, a school-year rollover or an undo. `data` `{kind: "IMPORT"|"ROLLOVER"|"UNDO", summary, records, counts: {created, updated, deleted}}`; `summary` names the file and the records.',
    hint: {
      ko: '일괄 가져오기, 학년도 넘기기, 되돌리기가 끝날 때 한 번 (STUDENT_READ가 없으면 건수만)',
      en: 'once when an import, a school-year rollover or an undo finishes (counts only without STUDENT_READ)',
    },
  },
  'school.rollover.started': {
    // Counts only, no names: every school scope may know that a mass change is coming.
    scope: 'STUDENT_READ',
    partial: { scopes: ['CLUB_READ', 'PROJECT_READ'], keeps: ['kind', 'records', 'counts'], shows: 'the same `data`' },
    description:
      `Before a school-year rollover, or any school batch of ${ANNOUNCED_BATCH_RECORDS} records or more, applies: its record events follow, each with this \`batchId\`, then \`school.rollover.completed\`. ` +
      '`data` `{kind: "ROLLOVER"|"IMPORT"|"UNDO"|..., records, counts: {created, updated, deleted}}`: what the batch is about to write. See docs/webhooks.md, "Rollovers and mass changes".',
    hint: {
      ko: `학년도 전환이나 ${ANNOUNCED_BATCH_RECORDS}건 이상의 일괄 변경이 적용되기 전 (건수만)`,
      en: `before a school-year rollover or a change of ${ANNOUNCED_BATCH_RECORDS} or more records applies (counts only)`,
    },
  },
  'school.rollover.completed': {
    scope: 'STUDENT_READ',
    partial: { scopes: ['CLUB_READ', 'PROJECT_READ'], keeps: ['kind', 'outcome', 'records', 'counts'], shows: 'the same `data`' },
    description:
      'After the record events of an announced batch (same `batchId` as its `school.rollover.started`). `data` `{kind, outcome: "APPLIED"|"ROLLED_BACK", records, counts}`: what it wrote; ROLLED_BACK (zero counts) when nothing of it took effect, and no record event of it was sent.',
    hint: {
      ko: '알린 일괄 변경이 끝났을 때 (적용 또는 되돌림)',
      en: 'when an announced change has finished (applied or rolled back)',
    },
  },
  'neis.meals.updated': {
    scope: 'NEIS_READ',
    description:
      'A NEIS sync changed the meals served for some dates. `data` `{dataset, dates, from, to}`: the dates whose rows changed, and the window synced.',
    hint: { ko: '급식 동기화로 바뀐 날짜', en: 'dates whose meals a NEIS sync changed' },
  },
  'neis.schedules.updated': {
    scope: 'NEIS_READ',
    description: 'A NEIS sync changed the school calendar of some dates. `data` `{dataset, dates, from, to}`.',
    hint: { ko: '학사일정 동기화로 바뀐 날짜', en: 'dates whose school calendar a NEIS sync changed' },
  },
  'neis.timetables.updated': {
    scope: 'NEIS_READ',
    description: 'A NEIS sync changed the timetables of some dates. `data` `{dataset, dates, from, to}`.',
    hint: { ko: '시간표 동기화로 바뀐 날짜', en: 'dates whose timetables a NEIS sync changed' },
  },
} as const satisfies Record<string, EventTypeRow>;

export type EventType = keyof typeof EVENT_TYPE_TABLE;

/** Every event type, in the table's order. */
export const EVENT_TYPES = Object.keys(EVENT_TYPE_TABLE) as EventType[];

/** Whether `type` is a row of the table (a stored event of another type is shown to nobody). */
export function isEventType(type: string): type is EventType {
  return Object.hasOwn(EVENT_TYPE_TABLE, type);
}

/** The row of a type, as the row type (so `partial` reads the same for every row). */
export function eventTypeRow(type: EventType): EventTypeRow {
  return EVENT_TYPE_TABLE[type];
}

/** The scopes with which an event of `type` is received at all (whole or in part), in the schema's order. */
export function scopesReceiving(type: EventType): ApiScope[] {
  const row = eventTypeRow(type);
  const receiving = new Set<ApiScope>([row.scope, ...(row.partial?.scopes ?? [])]);
  return Object.values(ApiScope).filter((scope) => receiving.has(scope));
}

/** The scopes the change feed answers to: any one of them shows some event (GET /v1/changes, GraphQL `changes`). */
export const FEED_SCOPES: readonly ApiScope[] = Object.values(ApiScope).filter((scope) =>
  EVENT_TYPES.some((type) => scopesReceiving(type).includes(scope)),
);

/** Who receives events: a key reading the feed, or a webhook. */
export interface Subscriber {
  readonly scopes: ReadonlySet<ApiScope>;
  /**
   * An operator's key or webhook, one without an owner account (src/auth/policy.ts
   * belongsToOperators): only operators see which account made a change (presentEvent,
   * src/data/events/outbox.ts).
   */
  readonly operator: boolean;
}

/** What a subscriber with `scopes` receives of an event of `type`: all of it, a lesser form, or nothing (no row: nothing). */
export function viewOf(type: string, scopes: ReadonlySet<ApiScope>): 'WHOLE' | PartialView | null {
  if (!isEventType(type)) return null;
  const row = eventTypeRow(type);
  if (scopes.has(row.scope)) return 'WHOLE';
  return row.partial?.scopes.some((scope) => scopes.has(scope)) ? row.partial : null;
}
