import type { Command } from 'commander';
import type { Database } from '../../data/database.js';
import { issueMessage } from '../../data/school/messages.js';
import { PROPOSAL_STATES, ProjectProposals, type ProjectProposalDoc, type ProposalState } from '../../data/school/proposals.js';
import { CLI_ACTOR } from '../../data/school/types.js';
import { CliError, jsonCommand } from '../runtime.js';

/**
 * `campus projects proposals list|accept|refuse`: the admin console's /admin/proposals for
 * operators (docs/decisions.md, "Students propose projects; admins decide"). A decision is written
 * as the operator (CLI) in the audit log and the access log.
 */
export function registerProjects(program: Command): void {
  const proposals = program
    .command('projects')
    .description('school projects')
    .command('proposals')
    .description("students' proposals of new projects and of changes to their projects");

  jsonCommand(
    proposals
      .command('list')
      .description('list proposals, newest first')
      .option('--state <state>', `only this state: ${PROPOSAL_STATES.join(', ')}`),
    {
      json: 'the proposals',
      run: async ({ config, db }, options: { state?: string }) => {
        const state = stateOf(options.state);
        return service(await db(), config.schoolTimeZone).list({ state });
      },
      human: (list) => (list.length === 0 ? 'No proposals.' : list.map(describe).join('\n')),
    },
  );

  jsonCommand(
    proposals
      .command('accept <id>')
      .description('accept a waiting proposal: the project is created or changed through the one write path, as the operator'),
    {
      json: 'the proposal',
      writes: true,
      run: async ({ config, db }, _options, [id]: [string]) => {
        const outcome = await service(await db(), config.schoolTimeZone).accept(CLI_ACTOR, id);
        if (!outcome.ok)
          throw new CliError(
            `Proposal ${id} cannot be written: ${outcome.issues.map((i) => issueMessage(i, 'en')).join(' ')} It stays waiting.`,
          );
        return outcome.proposal;
      },
      human: (proposal) => `Accepted: ${describe(proposal)}`,
    },
  );

  jsonCommand(
    proposals
      .command('refuse <id>')
      .description('refuse a waiting proposal with a reason the student reads')
      .requiredOption('--reason <text>', 'why (the student sees it in /console/projects)'),
    {
      json: 'the proposal',
      writes: true,
      run: async ({ config, db }, options: { reason: string }, [id]: [string]) => {
        const reason = options.reason.trim();
        if (!reason) throw new CliError('--reason must not be empty: the student reads it.');
        return service(await db(), config.schoolTimeZone).refuse(CLI_ACTOR, id, reason);
      },
      human: (refused) => `Refused: ${describe(refused)}`,
    },
  );
}

function service(db: Database, timeZone: string): ProjectProposals {
  return new ProjectProposals(db, { timeZone, now: () => new Date() });
}

function stateOf(value: string | undefined): ProposalState | null {
  if (value === undefined) return null;
  const state = PROPOSAL_STATES.find((s) => s === value.toUpperCase());
  if (!state) throw new CliError(`--state must be one of ${PROPOSAL_STATES.join(', ')} (got '${value}').`);
  return state;
}

function describe(p: ProjectProposalDoc): string {
  const name = (p.proposed as { name?: string }).name ?? '';
  const what = p.projectId == null ? `new project "${name}"` : `change of project #${p.projectId} "${name}"`;
  const outcome =
    p.state === 'ACCEPTED' ? ` -> project #${p.resultProjectId ?? '?'}` : p.state === 'REFUSED' ? ` (reason: ${p.reason ?? ''})` : '';
  return `${p._id} ${p.state} ${what} by ${p.proposerEmail}${outcome}`;
}
