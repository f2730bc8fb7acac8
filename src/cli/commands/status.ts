import type { Command } from 'commander';
import { Redis } from 'ioredis';
import { isCalendarDate, zonedInstant } from '../../calendar.js';
import {
  INCIDENT_KINDS,
  Incidents,
  MAX_INCIDENT_MESSAGE,
  MAX_INCIDENT_TITLE,
  type IncidentDoc,
  type IncidentKind,
} from '../../data/operations/incidents.js';
import { StatusBoard, type StatusReport } from '../../data/operations/status.js';
import { CLI_ACTOR } from '../../data/school/types.js';
import { CliError, cliLogger, jsonCommand, type CommandContext } from '../runtime.js';

/*
 * `campus status`: the status page's report, and the incidents and maintenance of /admin/status
 * (docs/operations.md, "The status page"; docs/cli.md). The report's checks are made by the
 * command itself, now, against the same database and Redis; the history is what `campus serve`
 * recorded.
 */

/**
 * A time as the command takes it (pure): ISO 8601 with its offset (`2026-12-01T09:00:00+09:00`),
 * or `YYYY-MM-DD HH:MM` (or with a `T`) on the school's clock.
 */
export function parseTime(option: string, value: string, timeZone: string): Date {
  const wall = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})$/.exec(value.trim());
  if (wall?.[1] && isCalendarDate(wall[1]) && Number(wall[2]) < 24 && Number(wall[3]) < 60) {
    return zonedInstant(wall[1], `${wall[2]}:${wall[3]}`, timeZone);
  }
  const at = /^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:\d{2})$/.test(value.trim()) ? new Date(value.trim()) : new Date(Number.NaN);
  if (Number.isNaN(at.getTime()))
    throw new CliError(`${option}: a time written 2026-12-01T09:00:00+09:00, or YYYY-MM-DD HH:MM on the school's clock (got '${value}').`);
  return at;
}

function kindOf(value: string): IncidentKind {
  const kind = INCIDENT_KINDS.find((k) => k === value.toUpperCase());
  if (!kind) throw new CliError(`--kind: incident or maintenance (got '${value}').`);
  return kind;
}

function describeIncident(doc: IncidentDoc): string {
  const window = doc.endsAt ? `${doc.startsAt.toISOString()} to ${doc.endsAt.toISOString()}` : `since ${doc.startsAt.toISOString()}`;
  const parts = doc.parts.length > 0 ? `  parts: ${doc.parts.join(',')}` : '';
  return [
    `${doc._id}  ${doc.kind}  ${doc.state}  ${doc.title}  (${window})${parts}`,
    ...doc.updates.map((u) => `    ${u.at.toISOString()}  ${u.state}  ${u.byKind === 'CLI' ? 'campus' : (u.byEmail ?? '')}: ${u.message}`),
  ].join('\n');
}

function describeReport(report: StatusReport): string {
  const percent = (share: number | null) => (share === null ? 'no history' : `${(share * 100).toFixed(2)}% over 90 days`);
  const underWay = report.rollover.underWay;
  return [
    `Status: ${report.state} (checked ${report.checkedAt})`,
    ...report.parts.map((p) => `  ${p.part.padEnd(9)} ${p.state.padEnd(8)} ${percent(p.availability.days90)}`),
    underWay
      ? `A ${underWay.kind} of ${underWay.records} records is being applied (batch ${underWay.batchId}, since ${underWay.since}).`
      : 'No rollover is being applied.',
    ...(report.rollover.planned
      ? [`A rollover was previewed at ${report.rollover.planned.previewedAt} (until ${report.rollover.planned.until}).`]
      : []),
    report.current.length === 0
      ? 'No incident or maintenance is open.'
      : report.current.map((i) => `${i.id}  ${i.kind}  ${i.state}  ${i.title}`).join('\n'),
  ].join('\n');
}

/** The incidents of this command's database (posting one needs no status board, and no Redis). */
async function incidentsOf({ db }: CommandContext): Promise<Incidents> {
  return new Incidents(await db());
}

/** Runs `fn` with the status board of this command (the database, and Redis when REDIS_URL is set). */
async function withBoard<T>({ config, db }: CommandContext, fn: (board: StatusBoard) => Promise<T>): Promise<T> {
  const database = await db();
  // A client of its own, failing fast: the check says DOWN rather than waiting for Redis.
  const redis = config.redisUrl ? new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 }) : undefined;
  redis?.on('error', () => {});
  try {
    return await fn(new StatusBoard({ db: database, redis, config, now: () => new Date(), logger: cliLogger(config) }));
  } finally {
    redis?.disconnect();
  }
}

interface OpenOptions {
  title: string;
  message: string;
  kind: string;
  parts?: string;
  state?: string;
  starts?: string;
  ends?: string;
}

export function registerStatus(program: Command): void {
  const status = jsonCommand(
    program
      .command('status')
      .description(
        "the status page's report (each part's state, checked now by this command, with its 90 days recorded by `campus serve`), and its incidents",
      ),
    {
      json: 'the report (what GET /v1/status answers)',
      run: (ctx) => withBoard(ctx, (board) => board.report()),
      human: describeReport,
    },
  );

  const incident = status
    .command('incident')
    .description('incidents and planned maintenance shown on the status page (as /admin/status posts them)');

  jsonCommand(
    incident
      .command('open')
      .description('post an incident (or, with --kind maintenance, planned maintenance) with its first update')
      .requiredOption('--title <text>', `what is wrong, in a few words (up to ${MAX_INCIDENT_TITLE} characters)`)
      .requiredOption('--message <text>', `the first update: what is known, what happens next (up to ${MAX_INCIDENT_MESSAGE} characters)`)
      .option('--kind <kind>', 'incident or maintenance', 'incident')
      .option('--parts <parts>', 'comma-separated parts it concerns: data-api, sign-in, userinfo, database, redis, neis, webhooks')
      .option('--state <state>', 'its first state (incident: INVESTIGATING, IDENTIFIED, MONITORING; maintenance: SCHEDULED, IN_PROGRESS)')
      .option(
        '--starts <time>',
        "when it began (maintenance: is planned to begin); ISO 8601 or YYYY-MM-DD HH:MM on the school's clock; default now",
      )
      .option('--ends <time>', 'maintenance only: when it is planned to end'),
    {
      json: 'the incident',
      writes: true,
      run: async (ctx, options: OpenOptions) => {
        const kind = kindOf(options.kind);
        const zone = ctx.config.schoolTimeZone;
        const startsAt = options.starts === undefined ? undefined : parseTime('--starts', options.starts, zone);
        const endsAt = options.ends === undefined ? undefined : parseTime('--ends', options.ends, zone);
        if (endsAt && kind !== 'MAINTENANCE') throw new CliError('--ends is for maintenance only (--kind maintenance).');
        const parts = (options.parts ?? '')
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean);
        return (await incidentsOf(ctx)).open(
          { kind, title: options.title, message: options.message, parts, state: options.state?.toUpperCase(), startsAt, endsAt },
          CLI_ACTOR,
        );
      },
      human: (opened) => `Posted ${opened.kind.toLowerCase()} ${opened._id}.\n${describeIncident(opened)}`,
    },
  );

  jsonCommand(
    incident
      .command('update <id>')
      .description('post an update to an open incident or maintenance, moving it to another open state if asked')
      .requiredOption('--message <text>', `the update (up to ${MAX_INCIDENT_MESSAGE} characters)`)
      .option('--state <state>', 'its new state (default: as it is)'),
    {
      json: 'the incident',
      writes: true,
      run: (ctx, options: { message: string; state?: string }, [id]: [string]) =>
        incidentsOf(ctx).then((incidents) =>
          incidents.update(id, { message: options.message, state: options.state?.toUpperCase() }, CLI_ACTOR),
        ),
      human: (updated) => `Updated ${updated._id}.\n${describeIncident(updated)}`,
    },
  );

  jsonCommand(
    incident
      .command('resolve <id>')
      .description('close an incident (resolved) or maintenance (completed) with a last update')
      .requiredOption('--message <text>', `the closing update (up to ${MAX_INCIDENT_MESSAGE} characters)`),
    {
      json: 'the incident',
      writes: true,
      run: (ctx, options: { message: string }, [id]: [string]) =>
        incidentsOf(ctx).then((incidents) => incidents.resolve(id, { message: options.message }, CLI_ACTOR)),
      human: (resolved) => `Closed ${resolved._id} (${resolved.state}).\n${describeIncident(resolved)}`,
    },
  );

  jsonCommand(incident.command('list').description('every incident and maintenance, open ones first, with their updates'), {
    json: 'them',
    run: (ctx) => incidentsOf(ctx).then((incidents) => incidents.list()),
    human: (all) => (all.length === 0 ? 'No incidents.' : all.map(describeIncident).join('\n')),
  });
}
