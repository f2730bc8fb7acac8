import { NotFoundError } from '../../errors/index.js';
import { html } from '../web/html.js';
import { page, redirect, type Handler, type Outcome, type PageRequest } from '../web/routes.js';
import type { SchoolJobFieldsFragment, SchoolJobQuery, SchoolJobQueryVariables } from './__generated__/operations.js';
import type { AdminDeps } from './deps.js';
import { SCHOOL_JOB } from './operations/transfer.js';
import { previewPage } from './preview.js';
import { language } from './ui.js';

/** How often the page of a running job reloads itself (the Refresh header: no script needed). */
const RELOAD_SECONDS = 1;

/**
 * The page of a background apply (src/data/school/jobs.ts): while it runs, its progress, reloading
 * itself; once applied, on to its changes in the audit log; refused on planning it again, the
 * preview with what refused it; failed or interrupted, why, and where to look.
 */
export const jobPage: Handler<AdminDeps> = async (req, deps) => {
  const id = req.param('id');
  if (!/^[0-9a-f-]{36}$/.test(id)) throw new NotFoundError(req.t.admin.job.gone);
  const data = await deps.school.run<SchoolJobQuery, SchoolJobQueryVariables>(req, SCHOOL_JOB, { id, lang: language(req.lang) });
  if (!data.schoolJob) throw new NotFoundError(req.t.admin.job.gone);
  return jobOutcome(req, data.schoolJob);
};

/** Where a just-started job leads: its page (post/redirect/get). */
export function toJob(job: Pick<SchoolJobFieldsFragment, 'id'>): Outcome {
  return redirect(`/admin/jobs/${encodeURIComponent(job.id)}`);
}

function jobOutcome(req: PageRequest, job: SchoolJobFieldsFragment): Outcome {
  const { t } = req;
  const j = t.admin.job;
  const kind = job.kind === 'ROLLOVER' ? 'ROLLOVER' : 'IMPORT';
  const result = job.result;
  if (job.state === 'DONE' && result) {
    if (result.applied && result.batchId)
      return redirect(`/admin/audit?batchId=${encodeURIComponent(result.batchId)}`, {
        kind: 'ok',
        text: kind === 'ROLLOVER' ? t.admin.audit.done.rolledOver : t.admin.audit.done.imported,
      });
    if (result.applied) return redirect('/admin/import', { kind: 'ok', text: t.admin.transfer.unchanged });
    // Planned again against the data of that moment, it met a problem: the preview says which.
    return previewPage(req, result, {
      title: kind === 'ROLLOVER' ? t.admin.schoolYear.previewTitle : t.admin.transfer.previewTitle,
      about: html``,
      applyAction: kind === 'ROLLOVER' ? '/admin/school-year/apply' : '/admin/import/apply',
      uploadAgain: kind === 'ROLLOVER' ? '/admin/school-year' : '/admin/import',
    });
  }
  const again = kind === 'ROLLOVER' ? '/admin/school-year' : '/admin/import';
  if (job.state === 'FAILED' || job.state === 'INTERRUPTED') {
    return page(
      j.title[kind],
      html`<div class="error" role="alert">
          <p>${job.state === 'FAILED' ? j.failed : j.interrupted}</p>
          ${job.error ? html`<p>${job.error}</p>` : ''}
        </div>
        <p><a href="/admin/audit">${j.audit}</a> · <a href="${again}">${j.again}</a></p>`,
      // Nothing reads it as done: the change was not made.
      409,
    );
  }
  req.ctx.set('Refresh', String(RELOAD_SECONDS));
  const n = (value: number) => value.toLocaleString(req.lang === 'ko' ? 'ko-KR' : 'en');
  return page(
    j.title[kind],
    html`<p>${j.running}</p>
      <div class="card" role="status" aria-live="polite">
        ${
          job.total === 0
            ? html`<p>${j.planning}</p>
                <progress aria-label="${j.planning}"></progress>`
            : html`<p data-progress="${job.written}/${job.total}">${j.progress(n(job.written), n(job.total))}</p>
                <progress value="${job.written}" max="${job.total}" aria-label="${j.progress(n(job.written), n(job.total))}"></progress>`
        }
      </div>`,
  );
}
