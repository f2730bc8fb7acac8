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
import { requireClass, resolveDateRange } from '../graphql/dates.js';
import { RANGES } from '../limits.js';
import type {
  RestClubsQuery,
  RestClubsQueryVariables,
  RestMealsQuery,
  RestMealsQueryVariables,
  RestProjectsQuery,
  RestProjectsQueryVariables,
  RestSchedulesQuery,
  RestSchedulesQueryVariables,
  RestStudentsQuery,
  RestStudentsQueryVariables,
  RestTimetablesQuery,
  RestTimetablesQueryVariables,
} from './__generated__/operations.js';
import { CLUBS_OPERATION } from './operations/clubs.js';
import { MEALS_OPERATION, SCHEDULES_OPERATION, TIMETABLES_OPERATION } from './operations/neis.js';
import { PROJECTS_OPERATION } from './operations/projects.js';
import { STUDENTS_OPERATION } from './operations/students.js';
import { boolParam, dateParam, defined, enumParam, intParam, textParam } from './params.js';

/**
 * Every data endpoint of the REST API, as data. One handler serves every row
 * (src/rest/handler.ts); the router and its 405/OPTIONS rules (src/surfaces/data.ts), the
 * OpenAPI document (src/rest/openapi.ts) and the README's parameter tables all come from these
 * rows. Adding an endpoint is a schema change, a resolver, an operation and a row here.
 */
export interface Endpoint {
  readonly path: `/v1/${string}`;
  readonly scope: ApiScope;
  /** One line for the OpenAPI document and the README. */
  readonly summary: string;
  /** Every query parameter (docs/spec.md and docs/decisions.md); unknown ones are ignored. */
  readonly query: z.ZodObject;
  /** The operation this endpoint runs; its selection is the REST response shape. */
  readonly operation: string;
  /** Turns the validated parameters into the operation's variables; `today` is the school's. */
  variables(query: unknown, today: () => string): Record<string, unknown>;
  /** Picks the envelope's `data` from the operation's result. */
  data(result: unknown): unknown;
}

/** Types one row against its operation's generated types, then erases them for the table. */
function endpoint<Q extends z.ZodObject, TVariables extends Record<string, unknown>, TData>(row: {
  path: `/v1/${string}`;
  scope: ApiScope;
  summary: string;
  query: Q;
  operation: string;
  variables(query: z.output<Q>, today: () => string): TVariables;
  data(result: TData): unknown;
}): Endpoint {
  return row;
}

const described = <T extends z.ZodType>(schema: T, description: string) => schema.optional().describe(description);

const paging = {
  page: described(intParam(RANGES.page), 'Zero-based page number.'),
  size: described(intParam(RANGES.size), 'Records per page.'),
};
const sortDirection = described(enumParam(SortDirection), 'Sort order (default ASC).');

const studentsQuery = z.object({
  studentId: described(intParam(RANGES.id), 'The student with this id.'),
  name: described(textParam(), 'Names containing this text (case-insensitive for Latin letters).'),
  email: described(textParam(), 'Emails containing this text (case-insensitive).'),
  grade: described(intParam(RANGES.grade), 'Grade.'),
  classNum: described(intParam(RANGES.classNum), 'Class.'),
  number: described(intParam(RANGES.number), 'Number in the class.'),
  sex: described(enumParam(Sex), 'Sex.'),
  role: described(enumParam(StudentRole), 'Role.'),
  major: described(enumParam(Major), 'Major.'),
  dormitoryRoom: described(intParam(RANGES.dormitoryRoom), 'Dormitory room.'),
  includeGraduates: described(boolParam(), 'Include graduates (default false).'),
  includeWithdrawn: described(boolParam(), 'Include withdrawn students (default false).'),
  onlyEnrolled: described(boolParam(), 'Only enrolled students, whatever the two flags above say (default false).'),
  ...paging,
  sortBy: described(enumParam(StudentSortBy), 'Sort key; id order when omitted, id breaks ties, nulls last.'),
  sortDirection,
});

const clubsQuery = z.object({
  clubId: described(intParam(RANGES.id), 'The club with this id.'),
  clubName: described(textParam(), 'Names containing this text (case-insensitive for Latin letters).'),
  clubType: described(enumParam(ClubType), 'Club type.'),
  clubStatus: described(enumParam(ClubStatus), 'Club status.'),
  includeLeaderInParticipants: described(boolParam(), 'List the leader among the participants too (default false).'),
  ...paging,
  sortBy: described(enumParam(ClubSortBy), 'Sort key; id order when omitted, id breaks ties.'),
  sortDirection,
});

const projectsQuery = z.object({
  projectId: described(intParam(RANGES.id), 'The project with this id.'),
  projectName: described(textParam(), 'Names containing this text (case-insensitive for Latin letters).'),
  clubId: described(intParam(RANGES.id), 'Projects of this club.'),
  status: described(enumParam(ProjectStatus), 'Project status.'),
  ...paging,
  sortBy: described(enumParam(ProjectSortBy), 'Sort key; id order when omitted, id breaks ties.'),
  sortDirection,
});

/** The date parameters of every NEIS endpoint (docs/decisions.md, "Meals and schedules"). */
const datesQuery = z.object({
  date: described(dateParam(), 'One day; with neither date nor a range: today in the school time zone.'),
  fromDate: described(dateParam(), 'First day of a range (with toDate; at most 366 days).'),
  toDate: described(dateParam(), 'Last day of a range (with fromDate).'),
});

const timetablesQuery = datesQuery.extend({
  grade: described(intParam(RANGES.grade), 'Grade (required).'),
  classNum: described(intParam(RANGES.classNum), 'Class (required).'),
});

export const ENDPOINTS: readonly Endpoint[] = [
  endpoint({
    path: '/v1/students',
    scope: ApiScope.StudentRead,
    summary: 'Students, paged; graduates and withdrawn students are left out unless asked for.',
    query: studentsQuery,
    operation: STUDENTS_OPERATION,
    variables: ({ page, size, sortBy, sortDirection, ...filter }): RestStudentsQueryVariables =>
      defined({ filter: defined(filter), page, size, sortBy, sortDirection }),
    data: (result: RestStudentsQuery) => result.students,
  }),
  endpoint({
    path: '/v1/clubs',
    scope: ApiScope.ClubRead,
    summary: 'Clubs with their leader and members, paged.',
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
    summary: 'Projects with their club and participants, paged.',
    query: projectsQuery,
    operation: PROJECTS_OPERATION,
    variables: ({ page, size, sortBy, sortDirection, ...filter }): RestProjectsQueryVariables =>
      defined({ filter: defined(filter), page, size, sortBy, sortDirection }),
    data: (result: RestProjectsQuery) => result.projects,
  }),
  endpoint({
    path: '/v1/neis/meals',
    scope: ApiScope.NeisRead,
    summary: 'School meals of a day or a date range, synced from NEIS (an array, not a page).',
    query: datesQuery,
    operation: MEALS_OPERATION,
    variables: (dates, today): RestMealsQueryVariables => resolveDateRange(dates, today()),
    data: (result: RestMealsQuery) => result.meals,
  }),
  endpoint({
    path: '/v1/neis/schedules',
    scope: ApiScope.NeisRead,
    summary: 'Academic calendar events of a day or a date range, synced from NEIS (an array).',
    query: datesQuery,
    operation: SCHEDULES_OPERATION,
    variables: (dates, today): RestSchedulesQueryVariables => resolveDateRange(dates, today()),
    data: (result: RestSchedulesQuery) => result.schedules,
  }),
  endpoint({
    path: '/v1/neis/timetables',
    scope: ApiScope.NeisRead,
    summary: "One class's periods of a day or a date range, synced from NEIS (an array).",
    query: timetablesQuery,
    operation: TIMETABLES_OPERATION,
    variables: ({ grade, classNum, ...dates }, today): RestTimetablesQueryVariables => ({
      ...requireClass(grade, classNum),
      ...resolveDateRange(dates, today()),
    }),
    data: (result: RestTimetablesQuery) => result.timetables,
  }),
];
