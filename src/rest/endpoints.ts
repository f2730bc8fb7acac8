import { z } from 'zod';
import {
  ApiScope,
  ClubSortBy,
  ClubStatus,
  ClubType,
  Major,
  ProjectSortBy,
  ProjectStatus,
  Sex,
  SortDirection,
  StudentRole,
  StudentSortBy,
} from '../data/__generated__/enums.js';
import { FEED_SCOPES } from '../data/events/types.js';
import { NotFoundError } from '../errors/index.js';
import { requireClass, resolveDateRange } from '../graphql/dates.js';
import { CHANGES_LIMIT, RANGES } from '../limits.js';
import type {
  RestChangesQuery,
  RestChangesQueryVariables,
  RestClubsQuery,
  RestClubsQueryVariables,
  RestMealsQuery,
  RestMealsQueryVariables,
  RestProjectsQuery,
  RestProjectsQueryVariables,
  RestPublicProjectQuery,
  RestPublicProjectQueryVariables,
  RestPublicProjectsQuery,
  RestPublicProjectsQueryVariables,
  RestSchedulesQuery,
  RestSchedulesQueryVariables,
  RestStudentsQuery,
  RestStudentsQueryVariables,
  RestTimetablesQuery,
  RestTimetablesQueryVariables,
} from './__generated__/operations.js';
import { CHANGES_OPERATION } from './operations/changes.js';
import { CLUBS_OPERATION } from './operations/clubs.js';
import { MEALS_OPERATION, SCHEDULES_OPERATION, TIMETABLES_OPERATION } from './operations/neis.js';
import { PROJECTS_OPERATION, PUBLIC_PROJECT_OPERATION, PUBLIC_PROJECTS_OPERATION } from './operations/projects.js';
import { STUDENTS_OPERATION } from './operations/students.js';
import { boolParam, dateParam, defined, enumParam, intParam, textParam } from './params.js';

/**
 * Every data endpoint of the REST API, as data. One handler serves every row
 * (src/rest/handler.ts); the router and its 405/OPTIONS rules (src/surfaces/data.ts), the
 * OpenAPI document (src/rest/openapi.ts) and the parameter tables of docs/data-api.md all come
 * from these rows. Adding an endpoint is a schema change, a resolver, an operation and a row here.
 */
export interface Endpoint {
  /** The path; `{name}` marks a path parameter, validated with the query (`query` names it too). */
  readonly path: `/v1/${string}`;
  /**
   * The scope a key needs; a list means any one of them, and the answer then depends on which the
   * key holds and on whether it is an operator's (the change feed presents its events by them:
   * presentEvent, src/data/events/outbox.ts), so it is cached per set of scopes and operator or
   * not. `PUBLIC`: no key at all, and a rate limit per client address instead (docs/decisions.md,
   * "Projects without a key").
   */
  readonly scope: ApiScope | readonly ApiScope[] | typeof PUBLIC;
  /** One line, Korean and English: the OpenAPI document shows both (Korean first), docs/data-api.md the English. */
  readonly summary: { readonly ko: string; readonly en: string };
  /** Every query parameter (docs/spec.md and docs/decisions.md); unknown ones are ignored. */
  readonly query: z.ZodObject;
  /** The operation this endpoint runs; its selection is the REST response shape. */
  readonly operation: string;
  /** Turns the validated parameters into the operation's variables; `today` is the school's. */
  variables(query: unknown, today: () => string): Record<string, unknown>;
  /** Picks the envelope's `data` from the operation's result. */
  data(result: unknown): unknown;
  /**
   * Its answer rests on the change feed's events that change no data too (a mass change's
   * announcement): cached per data version and `feed` version (src/data/platform/versions.ts).
   */
  readonly followsFeed?: boolean;
}

/** The scope of an endpoint anyone may call without a key (the public project list). */
export const PUBLIC = 'PUBLIC';

/** True for an endpoint without a key (its limit is per address: src/surfaces/data.ts). */
export function isPublic(endpoint: Pick<Endpoint, 'scope'>): boolean {
  return endpoint.scope === PUBLIC;
}

/** The names of the path's parameters (`/v1/public/projects/{id}`: id). */
export function pathParameters(endpoint: Pick<Endpoint, 'path'>): readonly string[] {
  return [...endpoint.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '');
}

/**
 * The pattern of a path with parameters (`/v1/public/projects/{id}`): each parameter one segment,
 * captured in the order `pathParameters` names them; a trailing slash allowed.
 */
export function pathPattern(path: string): RegExp {
  const literals = path.split(/\{\w+\}/).map((text) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literals.join('([^/]+)')}/?$`);
}

/** Types one row against its operation's generated types, then erases them for the table. */
function endpoint<Q extends z.ZodObject, TVariables extends Record<string, unknown>, TData>(row: {
  path: `/v1/${string}`;
  scope: ApiScope | readonly ApiScope[] | typeof PUBLIC;
  summary: { ko: string; en: string };
  query: Q;
  operation: string;
  variables(query: z.output<Q>, today: () => string): TVariables;
  data(result: TData): unknown;
  followsFeed?: boolean;
}): Endpoint {
  return row;
}

/**
 * An optional parameter with its description, Korean and English: the API reference (/docs) shows
 * both, Korean first (src/rest/openapi.ts); the tables of docs/data-api.md show the English.
 */
const described = <T extends z.ZodType>(schema: T, ko: string, en: string) => schema.optional().meta({ description: en, ko });

const paging = {
  page: described(intParam(RANGES.page), '0부터 세는 쪽 번호.', 'Zero-based page number.'),
  size: described(intParam(RANGES.size), '한 쪽의 레코드 수.', 'Records per page.'),
};
const sortDirection = described(enumParam(SortDirection), '정렬 방향 (기본 ASC).', 'Sort order (default ASC).');

const studentsQuery = z.object({
  studentId: described(intParam(RANGES.id), '이 ID의 학생.', 'The student with this id.'),
  name: described(
    textParam(),
    '이 글자가 들어간 이름 (로마자는 대소문자 무시).',
    'Names containing this text (case-insensitive for Latin letters).',
  ),
  email: described(textParam(), '이 글자가 들어간 이메일 (대소문자 무시).', 'Emails containing this text (case-insensitive).'),
  grade: described(intParam(RANGES.grade), '학년.', 'Grade.'),
  classNum: described(intParam(RANGES.classNum), '반.', 'Class.'),
  number: described(intParam(RANGES.number), '반 번호.', 'Number in the class.'),
  sex: described(enumParam(Sex), '성별.', 'Sex.'),
  role: described(enumParam(StudentRole), '소속.', 'Role.'),
  major: described(enumParam(Major), '학과.', 'Major.'),
  dormitoryRoom: described(intParam(RANGES.dormitoryRoom), '기숙사 호실.', 'Dormitory room.'),
  includeGraduates: described(boolParam(), '졸업생 포함 (기본 false).', 'Include graduates (default false).'),
  includeWithdrawn: described(boolParam(), '자퇴생 포함 (기본 false).', 'Include withdrawn students (default false).'),
  onlyEnrolled: described(
    boolParam(),
    '위 두 값과 상관없이 재학생만 (기본 false).',
    'Only enrolled students, whatever the two flags above say (default false).',
  ),
  ...paging,
  sortBy: described(
    enumParam(StudentSortBy),
    '정렬 기준; 없으면 ID 순, 같으면 ID 순, 빈 값은 마지막.',
    'Sort key; id order when omitted, id breaks ties, nulls last.',
  ),
  sortDirection,
});

const clubsQuery = z.object({
  clubId: described(intParam(RANGES.id), '이 ID의 동아리.', 'The club with this id.'),
  clubName: described(
    textParam(),
    '이 글자가 들어간 이름 (로마자는 대소문자 무시).',
    'Names containing this text (case-insensitive for Latin letters).',
  ),
  clubType: described(enumParam(ClubType), '동아리 종류.', 'Club type.'),
  clubStatus: described(enumParam(ClubStatus), '동아리 상태.', 'Club status.'),
  includeLeaderInParticipants: described(
    boolParam(),
    '부장도 부원 목록에 넣기 (기본 false).',
    'List the leader among the participants too (default false).',
  ),
  ...paging,
  sortBy: described(enumParam(ClubSortBy), '정렬 기준; 없으면 ID 순, 같으면 ID 순.', 'Sort key; id order when omitted, id breaks ties.'),
  sortDirection,
});

const projectsQuery = z.object({
  projectId: described(intParam(RANGES.id), '이 ID의 프로젝트.', 'The project with this id.'),
  projectName: described(
    textParam(),
    '이 글자가 들어간 이름 (로마자는 대소문자 무시).',
    'Names containing this text (case-insensitive for Latin letters).',
  ),
  clubId: described(intParam(RANGES.id), '이 동아리의 프로젝트.', 'Projects of this club.'),
  status: described(enumParam(ProjectStatus), '프로젝트 상태.', 'Project status.'),
  ...paging,
  sortBy: described(enumParam(ProjectSortBy), '정렬 기준; 없으면 ID 순, 같으면 ID 순.', 'Sort key; id order when omitted, id breaks ties.'),
  sortDirection,
});

/** The scopes an endpoint takes, as a list (any one of them admits; none for a public one). */
export function endpointScopes(endpoint: Pick<Endpoint, 'scope'>): readonly ApiScope[] {
  if (endpoint.scope === PUBLIC) return [];
  return typeof endpoint.scope === 'string' ? [endpoint.scope] : endpoint.scope;
}

const publicProjectsQuery = z.object({ ...paging });
const publicProjectQuery = z.object({
  id: intParam(RANGES.id).meta({ description: 'The project id.', ko: '프로젝트 ID.' }),
});

const changesQuery = z.object({
  after: described(
    textParam(),
    '이 커서 다음의 이벤트부터 (nextCursor 또는 이벤트 id); 없으면 보관된 가장 오래된 것부터.',
    'Events after this cursor (a nextCursor or an event id); none: from the oldest kept.',
  ),
  limit: described(intParam(CHANGES_LIMIT), '한 번에 받을 이벤트 수 (기본 100).', 'Events per answer (default 100).'),
});

/** The date parameters of every NEIS endpoint (docs/decisions.md, "Meals and schedules"). */
const datesQuery = z.object({
  date: described(
    dateParam(),
    '하루; 날짜도 기간도 없으면 학교 시간대의 오늘.',
    'One day; with neither date nor a range: today in the school time zone.',
  ),
  fromDate: described(dateParam(), '기간의 첫날 (toDate와 함께; 최대 366일).', 'First day of a range (with toDate; at most 366 days).'),
  toDate: described(dateParam(), '기간의 마지막 날 (fromDate와 함께).', 'Last day of a range (with fromDate).'),
});

const timetablesQuery = datesQuery.extend({
  grade: described(intParam(RANGES.grade), '학년 (필수).', 'Grade (required).'),
  classNum: described(intParam(RANGES.classNum), '반 (필수).', 'Class (required).'),
});

export const ENDPOINTS: readonly Endpoint[] = [
  endpoint({
    path: '/v1/students',
    scope: ApiScope.StudentRead,
    summary: {
      ko: '학생 목록 (쪽 단위); 졸업생과 자퇴생은 요청할 때만.',
      en: 'Students, paged; graduates and withdrawn students are left out unless asked for.',
    },
    query: studentsQuery,
    operation: STUDENTS_OPERATION,
    variables: ({ page, size, sortBy, sortDirection, ...filter }): RestStudentsQueryVariables =>
      defined({ filter: defined(filter), page, size, sortBy, sortDirection }),
    data: (result: RestStudentsQuery) => result.students,
  }),
  endpoint({
    path: '/v1/clubs',
    scope: ApiScope.ClubRead,
    summary: { ko: '동아리 목록과 부장, 부원 (쪽 단위).', en: 'Clubs with their leader and members, paged.' },
    query: clubsQuery,
    operation: CLUBS_OPERATION,
    variables: ({ page, size, sortBy, sortDirection, includeLeaderInParticipants, ...filter }): RestClubsQueryVariables =>
      // docs/decisions.md: the leader is left out of participants unless asked for.
      defined({ filter: defined(filter), page, size, sortBy, sortDirection, includeLeader: includeLeaderInParticipants ?? false }),
    data: (result: RestClubsQuery) => result.clubs,
  }),
  endpoint({
    path: '/v1/projects',
    scope: ApiScope.ProjectRead,
    summary: { ko: '프로젝트 목록과 동아리, 참여자 (쪽 단위).', en: 'Projects with their club and participants, paged.' },
    query: projectsQuery,
    operation: PROJECTS_OPERATION,
    variables: ({ page, size, sortBy, sortDirection, ...filter }): RestProjectsQueryVariables =>
      defined({ filter: defined(filter), page, size, sortBy, sortDirection }),
    data: (result: RestProjectsQuery) => result.projects,
  }),
  endpoint({
    path: '/v1/neis/meals',
    scope: ApiScope.NeisRead,
    summary: {
      ko: '하루 또는 기간의 급식, NEIS에서 동기화 (쪽이 아닌 배열).',
      en: 'School meals of a day or a date range, synced from NEIS (an array, not a page).',
    },
    query: datesQuery,
    operation: MEALS_OPERATION,
    variables: (dates, today): RestMealsQueryVariables => resolveDateRange(dates, today()),
    data: (result: RestMealsQuery) => result.meals,
  }),
  endpoint({
    path: '/v1/neis/schedules',
    scope: ApiScope.NeisRead,
    summary: {
      ko: '하루 또는 기간의 학사일정, NEIS에서 동기화 (배열).',
      en: 'Academic calendar events of a day or a date range, synced from NEIS (an array).',
    },
    query: datesQuery,
    operation: SCHEDULES_OPERATION,
    variables: (dates, today): RestSchedulesQueryVariables => resolveDateRange(dates, today()),
    data: (result: RestSchedulesQuery) => result.schedules,
  }),
  endpoint({
    path: '/v1/neis/timetables',
    scope: ApiScope.NeisRead,
    summary: {
      ko: '한 반의 하루 또는 기간의 시간표, NEIS에서 동기화 (배열).',
      en: "One class's periods of a day or a date range, synced from NEIS (an array).",
    },
    query: timetablesQuery,
    operation: TIMETABLES_OPERATION,
    variables: ({ grade, classNum, ...dates }, today): RestTimetablesQueryVariables => ({
      ...requireClass(grade, classNum),
      ...resolveDateRange(dates, today()),
    }),
    data: (result: RestTimetablesQuery) => result.timetables,
  }),
  endpoint({
    path: '/v1/changes',
    // Any scope some event type needs (src/data/events/types.ts).
    scope: FEED_SCOPES,
    summary: {
      ko: '학생, 동아리, 프로젝트, NEIS(급식·학사일정·시간표)의 변경 이벤트를 커밋 순서로 (키의 범위에 맞는 것만; 30일 보관).',
      en: "Change events of students, clubs, projects and NEIS data (meals, schedules, timetables) in commit order (those the key's scopes allow; kept 30 days).",
    },
    query: changesQuery,
    operation: CHANGES_OPERATION,
    variables: ({ after, limit }): RestChangesQueryVariables => defined({ after, limit }),
    data: (result: RestChangesQuery) => result.changes,
    followsFeed: true,
  }),
  endpoint({
    path: '/v1/public/projects',
    scope: PUBLIC,
    summary: {
      ko: '키 없이 보는 프로젝트 목록: 이름, 설명, 동아리 이름, 연도, 상태, 참여 인원 (개인 정보 없음, 쪽 단위).',
      en: 'Projects for anyone, without a key: name, description, club name, years, status and number of participants (no personal data), paged.',
    },
    query: publicProjectsQuery,
    operation: PUBLIC_PROJECTS_OPERATION,
    variables: ({ page, size }): RestPublicProjectsQueryVariables => defined({ page, size }),
    data: (result: RestPublicProjectsQuery) => result.publicProjects,
  }),
  endpoint({
    path: '/v1/public/projects/{id}',
    scope: PUBLIC,
    summary: {
      ko: '키 없이 보는 프로젝트 하나 (목록과 같은 필드).',
      en: 'One project for anyone, without a key (the fields of the list).',
    },
    query: publicProjectQuery,
    operation: PUBLIC_PROJECT_OPERATION,
    variables: ({ id }): RestPublicProjectQueryVariables => ({ id }),
    data: (result: RestPublicProjectQuery) => result.publicProject ?? notFound('No project has this id.'),
  }),
];

function notFound(message: string): never {
  throw new NotFoundError(message);
}
