import { z } from 'zod';
import { labelOf, PROJECT_STATUS_LABELS } from '../../data/school/labels.js';
import { issueMessage } from '../../data/school/messages.js';
import {
  MAX_PROPOSAL_TEXT,
  PROPOSAL_STATES,
  ProposalDecidedError,
  projectFormValues,
  proposedFormValues,
  type ProjectProposalDoc,
  type ProposedProject,
} from '../../data/school/proposals.js';
import type { Actor } from '../../data/school/types.js';
import { anyOption, csrfField, errorSummary, facts, listPage, select, table, textArea, when, type FieldError } from '../web/components.js';
import { text } from '../web/forms.js';
import { html, type Html } from '../web/html.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type { AdminDeps } from './deps.js';
import { formLabel } from './ui.js';

const LIST = '/admin/proposals';
const FIELDS: readonly (keyof ProposedProject)[] = ['name', 'description', 'clubId', 'participants', 'startYear', 'status', 'endYear'];

const nameOf = (p: ProjectProposalDoc) => (p.proposed as Partial<ProposedProject>).name ?? '';

/** Who decides: the signed-in admin, as the school data's audit and the access log name them. */
function actorOf(req: PageRequest): Actor | undefined {
  return req.account ? { kind: 'ACCOUNT', accountId: req.account.accountId, email: req.account.email } : undefined;
}

/** GET /admin/proposals: students' proposals, the waiting ones first by default. */
export const proposalList: Handler<AdminDeps> = async (req, deps) => {
  const { t } = req;
  const p = t.admin.proposals;
  const asked = req.query('state');
  const state = asked === 'ALL' ? null : (PROPOSAL_STATES.find((s) => s === asked) ?? 'PENDING');
  const proposals = await deps.proposals.list({ state });
  return page(
    p.title,
    listPage(t, {
      path: LIST,
      before: html`<p>${p.intro}</p>`,
      filters: [
        select({
          name: 'state',
          label: p.state,
          value: state ?? 'ALL',
          options: anyOption(
            t,
            PROPOSAL_STATES.map((s) => ({ value: s, label: p.states[s] })),
          ).map((o) => (o.value === '' ? { ...o, value: 'ALL' } : o)),
        }),
      ],
      status: p.count(proposals.length),
      table: table(t, {
        columns: p.columns,
        rows: proposals,
        empty: p.none,
        cells: (proposal) => [
          when(deps, t, proposal.createdAt),
          proposal.proposerEmail,
          {
            content: html`<a href="${LIST}/${proposal._id}"
              >${proposal.projectId == null ? p.newWhat(nameOf(proposal)) : p.changeWhat(proposal.projectId, nameOf(proposal))}</a
            >`,
            rowHeader: true,
          },
          html`<span class="tag">${p.states[proposal.state]}</span>`,
        ],
      }),
      page: 0,
      totalPages: 1,
      params: { state: state ?? 'ALL' },
    }),
  );
};

/** GET /admin/proposals/:id: the proposal beside the record as it stands, and the decision. */
export const proposalDetail: Handler<AdminDeps> = async (req, deps) =>
  proposalPage(req, deps, await deps.proposals.get(req.param('id') ?? ''), []);

async function proposalPage(
  req: PageRequest,
  deps: AdminDeps,
  proposal: ProjectProposalDoc,
  errors: readonly FieldError[],
  status = 200,
  reason = '',
): Promise<Outcome> {
  const { t, lang } = req;
  const p = t.admin.proposals;
  const school = await deps.proposals.school();
  const project = proposal.projectId == null ? undefined : school.projects.get(proposal.projectId);
  const now = project ? projectFormValues(project, school) : undefined;
  const proposed = proposedFormValues(proposal.proposed);
  const shown = (name: keyof ProposedProject, value: string | undefined): Html | string => {
    if (value === undefined) return p.newRecord;
    if (value === '') return '—';
    if (name === 'clubId') return school.clubs.get(Number(value))?.name ?? value;
    if (name === 'status') return labelOf(PROJECT_STATUS_LABELS, value, lang);
    if (name === 'participants') return html`${value.split('\n').map((line) => html`${line}<br />`)}`;
    return value;
  };
  const decider = proposal.decidedByKind === 'CLI' ? 'CLI' : (proposal.decidedByEmail ?? '');
  return page(
    p.detailTitle(nameOf(proposal)),
    html`<p><a href="${LIST}">← ${p.back}</a></p>
      ${errorSummary(t, errors, ['reason', ...FIELDS])}
      <section class="card" aria-labelledby="proposal-facts">
        <h2 id="proposal-facts">
          ${proposal.projectId == null ? p.newWhat(nameOf(proposal)) : p.changeWhat(proposal.projectId, nameOf(proposal))}
        </h2>
        ${facts([
          [p.state, html`<span class="tag">${p.states[proposal.state]}</span>`],
          [p.columns[1] ?? '', proposal.proposerEmail],
          [p.columns[0] ?? '', when(deps, t, proposal.createdAt)],
          ...(proposal.note ? [[p.note, proposal.note] as const] : []),
          ...(proposal.state !== 'PENDING'
            ? [[p.states[proposal.state], p.decided(when(deps, t, proposal.decidedAt), decider)] as const]
            : []),
          ...(proposal.reason ? [[p.reason, proposal.reason] as const] : []),
          ...(proposal.resultProjectId != null
            ? [['#', html`<a href="/admin/projects/${proposal.resultProjectId}">${p.project(proposal.resultProjectId)}</a>`] as const]
            : []),
        ])}
      </section>
      <section aria-labelledby="compare">
        <h2 id="compare">${p.compare}</h2>
        ${table(t, {
          columns: [p.field, p.current, p.proposed],
          rows: FIELDS,
          rowClass: (name) => (now && now[name] !== proposed[name] ? 'changed' : ''),
          cells: (name) => [
            {
              content: html`${formLabel(name, lang)}${now && now[name] !== proposed[name] ? html` <span class="tag">${p.changed}</span>` : ''}`,
              rowHeader: true,
            },
            shown(name, now?.[name]),
            now && now[name] !== proposed[name] ? html`<strong>${shown(name, proposed[name])}</strong>` : shown(name, proposed[name]),
          ],
        })}
      </section>
      ${
        proposal.state === 'PENDING'
          ? html`<section class="card" aria-labelledby="decide">
              <h2 id="decide">${p.accept} / ${p.refuse}</h2>
              <form method="post" action="${LIST}/${proposal._id}/accept">
                ${csrfField(req.csrf)}
                <p class="hint">${p.acceptHint}</p>
                <div class="actions"><button type="submit">${p.accept}</button></div>
              </form>
              <form method="post" action="${LIST}/${proposal._id}/refuse" novalidate>
                ${csrfField(req.csrf)} ${textArea({ name: 'reason', label: p.reason, value: reason, errors, rows: 3, required: true })}
                <div class="actions"><button type="submit" class="danger">${p.refuse}</button></div>
              </form>
            </section>`
          : ''
      }`,
    status,
  );
}

/** POST /admin/proposals/:id/accept: written through the one write path as this admin, or the rules' problems shown. */
export const acceptProposal: Handler<AdminDeps> = async (req, deps) => {
  const p = req.t.admin.proposals;
  const proposal = await deps.proposals.get(req.param('id') ?? '');
  const actor = actorOf(req);
  if (!actor) return redirect(LIST, { kind: 'error', text: p.alreadyDecided });
  try {
    const outcome = await deps.proposals.accept(actor, proposal._id);
    if (outcome.ok) {
      req.ctx.state.log.info({ event: 'admin.proposal_accepted', proposalId: proposal._id }, 'project proposal accepted');
      return redirect(`${LIST}/${proposal._id}`, { kind: 'ok', text: p.acceptedDone(outcome.proposal.resultProjectId ?? 0) });
    }
    const errors = outcome.issues.map((issue) => ({
      field: issue.field,
      message: issueMessage(issue, req.lang, formLabel(issue.field, req.lang)),
    }));
    return proposalPage(req, deps, await deps.proposals.get(proposal._id), errors, 422);
  } catch (err) {
    if (!(err instanceof ProposalDecidedError)) throw err;
    return redirect(`${LIST}/${proposal._id}`, { kind: 'error', text: p.alreadyDecided });
  }
};

/** POST /admin/proposals/:id/refuse: refused with the reason the student reads. */
export const refuseProposal: Handler<AdminDeps> = async (req, deps) => {
  const p = req.t.admin.proposals;
  const proposal = await deps.proposals.get(req.param('id') ?? '');
  const actor = actorOf(req);
  const { reason } = z.object({ reason: text() }).parse(req.form);
  const problem = !reason ? p.reasonMissing : reason.length > MAX_PROPOSAL_TEXT ? p.reasonTooLong : null;
  if (problem || !actor) return proposalPage(req, deps, proposal, [{ field: 'reason', message: problem ?? p.reasonMissing }], 422, reason);
  try {
    await deps.proposals.refuse(actor, proposal._id, reason);
    req.ctx.state.log.info({ event: 'admin.proposal_refused', proposalId: proposal._id }, 'project proposal refused');
    return redirect(`${LIST}/${proposal._id}`, { kind: 'ok', text: p.refusedDone });
  } catch (err) {
    if (!(err instanceof ProposalDecidedError)) throw err;
    return redirect(`${LIST}/${proposal._id}`, { kind: 'error', text: p.alreadyDecided });
  }
};

/** The waiting proposals, for /admin's tasks. */
export async function waitingProposals(deps: AdminDeps): Promise<number> {
  return (await deps.proposals.list({ state: 'PENDING' })).length;
}
