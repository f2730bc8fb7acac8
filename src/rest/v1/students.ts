import { z } from 'zod';
import { LIMITS } from '../../graphql/args.js';
import { MAJORS, SEXES, STUDENT_ROLES } from '../../data/models/student.model.js';
import type { AppMiddleware } from '../../http/context.js';
import type { RestStudentsQuery, RestStudentsQueryVariables } from './__generated__/operations.js';
import { respondWithOperation, type RestDeps } from './execute.js';
import { STUDENTS_OPERATION } from './operations/students.js';
import { boolParam, defined, enumParam, intParam, memoByQueryString, parseQuery, textParam } from './params.js';

const STUDENT_SORT_BY = ['ID', 'NAME', 'EMAIL', 'STUDENT_NUMBER', 'GRADE', 'CLASS_NUM', 'NUMBER', 'MAJOR', 'ROLE', 'SEX', 'DORMITORY_ROOM'] as const;

/** Every query parameter of GET /v1/students (spec + DECISIONS.md); unknown ones are ignored. */
export const studentsQuery = z.object({
  studentId: intParam(LIMITS.id).optional(),
  name: textParam().optional(),
  email: textParam().optional(),
  grade: intParam(LIMITS.grade).optional(),
  classNum: intParam(LIMITS.classNum).optional(),
  number: intParam(LIMITS.number).optional(),
  sex: enumParam(SEXES).optional(),
  role: enumParam(STUDENT_ROLES).optional(),
  major: enumParam(MAJORS).optional(),
  dormitoryRoom: intParam({ min: 1, max: 9999 }).optional(),
  includeGraduates: boolParam().optional(),
  includeWithdrawn: boolParam().optional(),
  onlyEnrolled: boolParam().optional(),
  page: intParam(LIMITS.page).optional(),
  size: intParam(LIMITS.size).optional(),
  sortBy: enumParam(STUDENT_SORT_BY).optional(),
  sortDirection: enumParam(['ASC', 'DESC']).optional(),
});

/** Builds the GraphQL variables of a parsed /v1/students query. */
export function studentsVariables(q: z.output<typeof studentsQuery>): RestStudentsQueryVariables {
  const { page, size, sortBy, sortDirection, ...filter } = q;
  return defined({ filter: defined(filter), page, size, sortBy, sortDirection });
}

/** GET /v1/students */
export function studentsHandler(deps: RestDeps): AppMiddleware {
  const request = memoByQueryString((query) => {
    const variables = studentsVariables(parseQuery(studentsQuery, query));
    return { variables, cacheKey: `students:${JSON.stringify(variables)}` };
  });
  return async (ctx) => {
    const { variables, cacheKey } = request(ctx.querystring, () => ctx.query);
    await respondWithOperation(ctx, deps, {
      cacheKey,
      query: STUDENTS_OPERATION,
      variables,
      pick: (data: RestStudentsQuery) => data.students,
    });
  };
}
