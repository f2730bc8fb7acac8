import type { Command } from 'commander';
import { AccountStore } from '../../data/accounts/store.js';
import { splitRefs, UpdateRequestError, UpdateRequests, type UpdateRequestSummary } from '../../data/school/update-requests.js';
import { CliError, jsonCommand } from '../runtime.js';

interface RequestUpdateOptions {
  students?: string[];
  grade?: string;
  class?: string;
  search?: string;
  fields?: string[];
  message?: string;
  list?: boolean;
  withdraw?: string;
}

/**
 * `campus students request-update`: the data updates asked at sign-in, as /admin/students/requests
 * makes, lists and withdraws them (src/data/school/update-requests.ts).
 */
export function registerStudents(program: Command): void {
  const students = program.command('students').description('students of the school (the records themselves: campus import / export)');
  jsonCommand(
    students
      .command('request-update')
      .description(
        'ask students to confirm or correct fields of their record at their next sign-in (single sign-on included); --list shows the requests and who answered, --withdraw <id> ends one',
      )
      .option('--students <refs...>', 'the students: emails or four-digit student numbers (repeat, or separate with commas)')
      .option('--grade <n>', 'every enrolled student of a grade (1-3); with --class, of one class')
      .option('--class <n>', 'with --grade: one class (1-4)')
      .option('--search <text>', 'every enrolled student whose name or email contains the text, or with that student number')
      .option(
        '--fields <names...>',
        'studentNumber, dormitoryRoom, majorClubId, autonomousClubId, githubId, specialty (repeat, or separate with commas)',
      )
      .option('--message <text>', 'shown to the students above the form')
      .option('--list', 'list the requests, with who has and has not answered')
      .option('--withdraw <id>', 'withdraw a request: nobody is asked any more'),
    {
      json: 'the result',
      writes: (options: RequestUpdateOptions) => !options.list,
      run: async ({ db }, options: RequestUpdateOptions) => {
        const database = await db();
        const service = new UpdateRequests(database, new AccountStore(database));
        try {
          if (options.list) return service.list();
          if (options.withdraw) return [await service.withdraw(options.withdraw, { kind: 'CLI' })];
          return [
            await service.create({
              selection: selectionOf(options),
              fields: splitList(options.fields),
              message: options.message ?? null,
              actor: { kind: 'CLI' },
            }),
          ];
        } catch (err) {
          if (err instanceof UpdateRequestError) throw new CliError(err.message);
          throw err;
        }
      },
      human: (result) => (result.length === 0 ? 'No data update requests.' : result.map(describe).join('\n\n')),
      data: (result, options) => (options.list ? result : result[0]),
    },
  );
}

function splitList(values: string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

function selectionOf(o: RequestUpdateOptions) {
  const given = [o.students, o.grade, o.search].filter((v) => v !== undefined).length;
  if (given !== 1) throw new CliError('Name the students with exactly one of --students, --grade (and --class) and --search.');
  if (o.students) return { kind: 'list' as const, refs: splitList(o.students).flatMap(splitRefs) };
  if (o.grade !== undefined) {
    if (!/^[1-3]$/.test(o.grade)) throw new CliError('--grade must be 1, 2 or 3.');
    if (o.class !== undefined && !/^[1-4]$/.test(o.class)) throw new CliError('--class must be 1 to 4.');
    return { kind: 'class' as const, grade: Number(o.grade), classNum: o.class === undefined ? null : Number(o.class) };
  }
  return { kind: 'search' as const, query: o.search ?? '' };
}

function describe(r: UpdateRequestSummary): string {
  const lines = [
    `${r.id} ${r.status} asked ${r.createdAt} by ${r.createdBy ?? 'an operator'}: ${r.fields.join(', ')} (${r.answered} of ${r.asked} answered)`,
    ...(r.message ? [`  message: ${r.message}`] : []),
    ...r.students.map((s) => `  ${s.studentNumber ?? '----'} ${s.email} ${s.answeredAt ? `answered ${s.answeredAt}` : 'not yet'}`),
  ];
  return lines.join('\n');
}
