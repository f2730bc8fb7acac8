import { ProjectStatus } from '../../data/__generated__/enums.js';
import type { ProjectDoc } from '../../data/models/project.model.js';
import type { StudentDoc } from '../../data/models/student.model.js';
import type { SchoolSnapshot } from '../../data/school/read-model.js';
import { CLUB_STATUS_LABELS, PROJECT_STATUS_LABELS, labelOf } from '../../data/school/labels.js';
import { issueMessage } from '../../data/school/messages.js';
import {
  MAX_PROPOSAL_TEXT,
  projectFormValues,
  TooManyPendingProposalsError,
  type ProposalOutcome,
  type ProposedProject,
} from '../../data/school/proposals.js';
import { NotFoundError } from '../../errors/index.js';
import { MAX_PENDING_PROPOSALS } from '../../limits.js';
import { projectForm } from '../admin/projects.js';
import { formLabel, formValues } from '../admin/ui.js';
import { csrfField, errorSummary, field, linkButton, select, table, textArea, when, type FieldError } from '../web/components.js';
import { parseForm, text } from '../web/forms.js';
import { html } from '../web/html.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type { ConsoleDeps } from './deps.js';

const PATH = '/console/projects';
const INPUTS = ['name', 'description', 'clubId', 'participants', 'startYear', 'status', 'endYear', 'note'];
type Values = Readonly<Record<string, string>>;

/** The signed-in account's student (the one with its email, as userinfo links them) in the school of now. */
async function ownStudent(req: PageRequest, deps: ConsoleDeps): Promise<{ school: SchoolSnapshot; student: StudentDoc | undefined }> {
  const account = await deps.accounts.findById(req.account?.accountId ?? 0);
  if (!account) throw new NotFoundError('No such account.');
  const school = await deps.db.school.snapshot();
  return { school, student: school.studentByEmail(account.email) };
}

/** GET /console/projects: my projects, proposing a new one or a change, and my proposals with their outcome. */
export const myProjects: Handler<ConsoleDeps> = async (req, deps) => {
  const { t, lang } = req;
  const p = t.console.projects;
  const { school, student } = await ownStudent(req, deps);
  if (!student) return page(p.title, html`<p role="status">${p.notStudent}</p>`);
  const mine = school.projects.all.filter((project) => (project.participantIds ?? []).includes(student._id));
  const proposals = await deps.proposals.list({ proposerAccountId: req.account?.accountId ?? 0 });
  const nameOf = (proposed: unknown) => (proposed as Partial<ProposedProject>).name ?? '';
  return page(
    p.title,
    html`<p>${p.intro}</p>
      <section aria-labelledby="mine">
        <h2 id="mine">${p.mine}</h2>
        ${table(t, {
          columns: p.columns,
          rows: mine,
          empty: p.none,
          cells: (project) => [
            { content: project.name, rowHeader: true },
            project.clubId == null ? '—' : (school.clubs.get(project.clubId)?.name ?? '—'),
            labelOf(PROJECT_STATUS_LABELS, project.status, lang),
            `${project.startYear ?? '?'}–${project.endYear ?? ''}`,
            new Set(project.participantIds ?? []).size,
            html`<a href="${PATH}/${project._id}/propose" aria-label="${p.proposeChangeLabel(project.name)}">${p.proposeChange}</a>`,
          ],
        })}
        <p>${linkButton(`${PATH}/new`, p.proposeNew)}</p>
      </section>
      <section aria-labelledby="proposals">
        <h2 id="proposals">${p.proposals}</h2>
        <p class="hint">${p.pendingCap(MAX_PENDING_PROPOSALS, proposals.filter((proposal) => proposal.state === 'PENDING').length)}</p>
        ${table(t, {
          columns: p.proposalColumns,
          rows: proposals,
          empty: p.noProposals,
          cells: (proposal) => [
            when(deps, t, proposal.createdAt),
            {
              content: proposal.projectId == null ? p.newWhat(nameOf(proposal.proposed)) : p.changeWhat(nameOf(proposal.proposed)),
              rowHeader: true,
            },
            html`<span class="tag" data-state="${proposal.state}">${t.admin.proposals.states[proposal.state]}</span>`,
            proposal.state === 'ACCEPTED'
              ? p.accepted(proposal.resultProjectId ?? 0)
              : proposal.state === 'REFUSED'
                ? p.refused(proposal.reason ?? '')
                : p.waiting,
          ],
        })}
      </section>`,
  );
};

/** GET /console/projects/new and /console/projects/:id/propose: the proposal form, empty or with the project as it stands. */
export const newProposal: Handler<ConsoleDeps> = async (req, deps) => {
  const { school, student } = await ownStudent(req, deps);
  if (!student) return page(req.t.console.projects.title, html`<p role="status">${req.t.console.projects.notStudent}</p>`, 403);
  const project = projectOf(req, school, student);
  return proposalPage(
    req,
    school,
    project,
    project ? projectFormValues(project, school) : { status: 'ACTIVE', participants: student.email },
    [],
  );
};

/** The project of the path (`:id`) the student takes part in; undefined for a new one; 404 for another. */
function projectOf(req: PageRequest, school: SchoolSnapshot, student: StudentDoc): ProjectDoc | undefined {
  const raw = req.param('id');
  if (raw === undefined || raw === '') return undefined;
  const project = /^\d{1,15}$/.test(raw) ? school.projects.get(Number(raw)) : undefined;
  if (!project || !(project.participantIds ?? []).includes(student._id))
    throw new NotFoundError('You take part in no project with this id.');
  return project;
}

/** POST /console/projects/new and /console/projects/:id/propose: checks the proposal (the admin form's rules) and sends it. */
export const sendProposal: Handler<ConsoleDeps> = async (req, deps) => {
  const { t, lang } = req;
  const p = t.console.projects;
  const { school, student } = await ownStudent(req, deps);
  const account = req.account;
  if (!student || !account) return page(p.title, html`<p role="status">${p.notStudent}</p>`, 403);
  const project = projectOf(req, school, student);
  const form = parseForm(projectForm(lang).extend({ note: text() }), req.form);
  let errors: FieldError[] = form.ok ? [] : form.errors;
  if (form.ok && form.value.note.length > MAX_PROPOSAL_TEXT) errors = [{ field: 'note', message: p.noteTooLong }];
  if (form.ok && errors.length === 0) {
    const { note, ...proposed } = form.value;
    let outcome: ProposalOutcome;
    try {
      outcome = await deps.proposals.propose(
        { accountId: account.accountId, email: account.email },
        { projectId: project?._id ?? null, proposed, note: note || null },
      );
    } catch (err) {
      if (!(err instanceof TooManyPendingProposalsError)) throw err;
      // Not a field's problem: said above the form (the summary lists it unlinked).
      return proposalPage(
        req,
        school,
        project,
        formValues(req),
        [{ field: 'proposals', message: p.tooManyPending(MAX_PENDING_PROPOSALS) }],
        422,
      );
    }
    if (outcome.ok) {
      req.ctx.state.log.info({ event: 'console.project_proposed', proposalId: outcome.proposal._id }, 'project proposed');
      return redirect(PATH, { kind: 'ok', text: p.sent });
    }
    errors = outcome.issues.map((issue) => ({
      field: INPUTS.includes(issue.field) ? issue.field : 'name',
      message: issueMessage(issue, lang),
    }));
  }
  return proposalPage(req, school, project, formValues(req), errors, 422);
};

function proposalPage(
  req: PageRequest,
  school: SchoolSnapshot,
  project: ProjectDoc | undefined,
  v: Values,
  errors: readonly FieldError[],
  status = 200,
): Outcome {
  const { t, lang } = req;
  const p = t.console.projects;
  const a = t.admin.projects;
  const label = (name: string) => formLabel(name, lang);
  const clubOptions = [
    { value: '', label: a.noClub },
    ...school.clubs.all.map((c) => ({
      value: String(c._id),
      label: c.status === 'ABOLISHED' ? `${c.name} (${labelOf(CLUB_STATUS_LABELS, c.status, lang)})` : c.name,
    })),
  ];
  const action = project ? `${PATH}/${project._id}/propose` : `${PATH}/new`;
  return page(
    project ? p.changeTitle(project.name) : p.newTitle,
    html`<p><a href="${PATH}">← ${p.back}</a></p>
      <p>${p.formIntro}</p>
      ${errorSummary(t, errors, INPUTS)}
      <form method="post" action="${action}" class="card" novalidate>
        ${csrfField(req.csrf)} ${field({ name: 'name', label: label('name'), value: v['name'], errors, required: true, hint: a.nameHint })}
        ${textArea({ name: 'description', label: label('description'), value: v['description'], errors, rows: 4, hint: a.descriptionHint })}
        ${select({ name: 'clubId', label: label('clubId'), value: v['clubId'], errors, options: clubOptions })}
        ${textArea({ name: 'participants', label: label('participants'), value: v['participants'], errors, rows: 4, hint: a.participantsHint })}
        ${field({ name: 'startYear', label: label('startYear'), value: v['startYear'], errors, type: 'number', inputmode: 'numeric', min: 1900, max: 2100 })}
        ${select({
          name: 'status',
          label: label('status'),
          value: v['status'],
          errors,
          options: Object.values(ProjectStatus).map((x) => ({ value: x, label: PROJECT_STATUS_LABELS[x][lang] })),
        })}
        ${field({ name: 'endYear', label: label('endYear'), value: v['endYear'], errors, type: 'number', inputmode: 'numeric', min: 1900, max: 2100, hint: a.endYearHint })}
        ${textArea({ name: 'note', label: p.note, value: v['note'], errors, rows: 3, hint: p.noteHint })}
        <div class="actions"><button type="submit">${p.submit}</button></div>
      </form>`,
    status,
  );
}
