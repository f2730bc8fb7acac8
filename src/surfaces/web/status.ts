import type { Config } from '../../config/index.js';
import { addDays } from '../../calendar.js';
import { NEIS_DATASETS } from '../../data/models/neis-state.model.js';
import { HISTORY_DAYS, minuteOf } from '../../data/operations/status-history.js';
import { isUnderWay } from '../../data/operations/incidents.js';
import {
  CHECK_REASONS,
  type CheckReason,
  type DayAvailability,
  type PartReport,
  type PartState,
  type PublicIncident,
  type StatusBoard,
  type StatusReport,
} from '../../data/operations/status.js';
import { STATUS_PATH } from '../../http/status.js';
import { formatDateTime, table } from './components.js';
import { html, type Html } from './html.js';
import type { Lang } from './lang.js';
import { page, type Handler, type RouteTable } from './routes.js';
import type { Texts } from './texts/index.js';
import type { Web } from './web.js';

/*
 * GET /status: the status page, for anyone (docs/operations.md, "The status page"). It shows the
 * board's report (src/data/operations/status.ts), the same as GET /v1/status: the state of each
 * part now, its last 90 days (bars as a picture, with the days that were not perfect as a table
 * for everyone, screen readers included), incidents and maintenance with their updates, planned
 * maintenance (a previewed school-year rollover among it) and a rollover being applied. It reads
 * no session and asks the database for nothing itself, so it shows while the database is down.
 */

export interface StatusPageDeps {
  readonly board: StatusBoard;
  readonly config: Config;
  /** Where GET /v1/status is (the data API may live at another address: BASE_URL). */
  readonly jsonUrl: string;
}

const STATE_CLASS: Readonly<Record<PartState, string>> = { UP: 'up', DEGRADED: 'degraded', DOWN: 'down', OFF: 'off' };
/** A day under this availability is drawn as an outage, above it with something amiss as degraded. */
const OUTAGE_BELOW = 0.99;

function stateTag(t: Texts, state: PartState): Html {
  return html`<span class="state ${STATE_CLASS[state]}">${t.status.states[state]}</span>`;
}

function isReason(value: unknown): value is CheckReason {
  return (CHECK_REASONS as readonly unknown[]).includes(value);
}

const numberOf = (value: unknown): number | null => (typeof value === 'number' ? value : null);
const textOf = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const fieldsOf = (value: unknown): Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};

/** What a part's check found, in words: why it is not up, and the part's own facts (NEIS datasets, webhook backlog). */
function partFacts(t: Texts, part: PartReport, timeZone: string): Html {
  const s = t.status;
  const when = (iso: string | null) => formatDateTime(t, iso ? new Date(iso) : null, timeZone);
  const reason = isReason(part.detail['reason']) ? s.reasons[part.detail['reason']] : null;
  const latency = numberOf(part.detail['latencyMs']);
  const lines: Html[] = [];
  if (reason || latency !== null)
    lines.push(html`<li>${[reason, latency === null ? null : s.latency(latency)].filter(Boolean).join(' · ')}</li>`);
  if (part.part === 'neis') {
    const datasets = fieldsOf(part.detail['datasets']);
    if (part.detail['sync'] === 'OFF') lines.push(html`<li>${s.neis.off}</li>`);
    for (const dataset of NEIS_DATASETS) {
      const d = fieldsOf(datasets[dataset]);
      const success = textOf(d['lastSuccessAt']);
      const age = numberOf(d['ageSeconds']);
      const failed = d['lastOutcome'] === 'failed';
      lines.push(
        html`<li>
          <strong>${s.neis.datasets[dataset]}</strong>:
          ${success && age !== null ? s.neis.synced(when(success), age) : s.neis.never}${failed ? html` · ${s.neis.lastFailed}` : ''}
        </li>`,
      );
    }
  }
  if (part.part === 'webhooks') {
    const backlog = numberOf(part.detail['backlog']) ?? 0;
    const waited = numberOf(part.detail['oldestPendingSeconds']);
    lines.push(html`<li>${s.webhooks.backlog(backlog)}${waited === null ? '' : html` · ${s.webhooks.oldest(waited)}`}</li>`);
    const retrying = numberOf(part.detail['retrying']) ?? 0;
    const failing = numberOf(part.detail['failing']) ?? 0;
    if (retrying + failing > 0) lines.push(html`<li>${s.webhooks.waitingOnReceivers(retrying, failing)}</li>`);
  }
  return lines.length > 0
    ? html`<ul class="plain facts-list">
        ${lines}
      </ul>`
    : html``;
}

/** The class of a day's bar: nothing recorded, up all day, something amiss, or an outage. */
function dayClass(day: DayAvailability | undefined): string {
  if (!day || day.availability === null) return 'none';
  if (day.availability < OUTAGE_BELOW) return 'down';
  return day.down + day.degraded > 0 ? 'degraded' : 'up';
}

/** The 90 days of a part: bars (a picture, hidden from screen readers) and the days that were not perfect, as a table. */
function history(t: Texts, part: PartReport, today: string): Html {
  const s = t.status;
  const byDate = new Map(part.availability.days.map((day) => [day.date, day]));
  const dates = Array.from({ length: HISTORY_DAYS }, (_, i) => addDays(today, i - (HISTORY_DAYS - 1)));
  const amiss = [...part.availability.days].reverse().filter((day) => day.down + day.degraded > 0);
  const share = part.availability.days90;
  return html`<p>${share === null ? s.noHistory : s.availability90(share)}</p>
    <div class="uptime" aria-hidden="true">
      ${dates.map((date) => {
        const day = byDate.get(date);
        const label = day && day.availability !== null ? s.dayTitle(date, s.percent(day.availability)) : s.dayNone(date);
        return html`<span class="${dayClass(day)}" title="${label}"></span>`;
      })}
    </div>
    <p class="uptime-axis muted" aria-hidden="true"><span>${dates[0]}</span><span>${today}</span></p>
    ${
      amiss.length > 0
        ? html`<details>
            <summary>${s.days(amiss.length, part.availability.days.length)}</summary>
            ${table(t, {
              caption: `${s.parts[part.part].name}: ${s.barsLabel}`,
              columns: s.dayColumns,
              rows: amiss,
              cells: (day) => [
                { content: day.date, rowHeader: true },
                day.availability === null ? '—' : s.percent(day.availability),
                s.minutes(day.down),
                s.minutes(day.degraded),
              ],
            })}
          </details>`
        : ''
    }`;
}

/** An incident or maintenance with its updates, newest first. */
function incidentCard(t: Texts, incident: PublicIncident, timeZone: string): Html {
  const s = t.status;
  const when = (iso: string | null) => formatDateTime(t, iso ? new Date(iso) : null, timeZone);
  const parts = incident.parts.map((part) => s.parts[part].name).join(', ');
  return html`<article class="card incident" id="incident-${incident.id}" aria-labelledby="incident-${incident.id}-title">
    <h3 id="incident-${incident.id}-title">${incident.title}</h3>
    <p>
      <span class="tag">${s.kinds[incident.kind]}</span> <span class="tag">${s.incidentStates[incident.state]}</span>
      ${parts ? html` <span class="muted">${s.affects(parts)}</span>` : ''}
    </p>
    <p class="muted">
      ${incident.endsAt ? s.window(when(incident.startsAt), when(incident.endsAt)) : s.startedAt(when(incident.startsAt))}
    </p>
    <h4 class="visually-hidden">${s.updates}</h4>
    <ol class="updates" reversed>
      ${[...incident.updates].reverse().map(
        (update) =>
          html`<li>
            <p class="muted">
              <time datetime="${update.at}">${when(update.at)}</time> · <strong>${s.incidentStates[update.state]}</strong>
            </p>
            <p class="message">${update.message}</p>
          </li>`,
      )}
    </ol>
  </article>`;
}

/** A link from a part's card to an incident that concerns it, named by its title. */
function incidentLink(t: Texts, report: StatusReport, id: string): Html {
  const incident = report.current.find((i) => i.id === id);
  return incident ? html`<li>${t.status.seeIncident} <a href="#incident-${id}">${incident.title}</a></li>` : html``;
}

/** The page's body from a report. */
function statusView(t: Texts, report: StatusReport, config: Config, jsonUrl: string, lang: Lang): Html {
  const s = t.status;
  const timeZone = config.schoolTimeZone;
  const when = (iso: string) => formatDateTime(t, new Date(iso), timeZone);
  const today = minuteOf(new Date(report.checkedAt), timeZone).day;
  const underWay = report.rollover.underWay;
  const planned = report.rollover.planned;
  const now = report.current.filter(isUnderWay);
  const scheduled = report.current.filter((i) => !isUnderWay(i));
  const databaseDown = report.parts.some((p) => p.part === 'database' && p.state === 'DOWN');
  return html`<p class="lead">${s.lead(config.schoolName[lang])}</p>
    <p class="status-banner ${STATE_CLASS[report.state]}" role="status">
      <strong>${s.overall[report.state]}</strong> <span class="muted">${s.checkedAt(when(report.checkedAt))}</span>
    </p>
    ${
      underWay
        ? html`<div class="notice" role="alert">
            <p><strong>${s.rolloverUnderWay(underWay.kind, underWay.records, when(underWay.since))}</strong></p>
            <p>${s.rolloverHelp}</p>
          </div>`
        : ''
    }
    ${databaseDown && report.historyAsOf ? html`<p class="notice">${s.historyAsOf(when(report.historyAsOf))}</p>` : ''}
    <section aria-labelledby="status-current">
      <h2 id="status-current">${s.current}</h2>
      ${now.length > 0 ? now.map((incident) => incidentCard(t, incident, timeZone)) : html`<p>${s.noCurrent}</p>`}
    </section>
    <section aria-labelledby="status-parts">
      <h2 id="status-parts">${s.partsTitle}</h2>
      <ul class="parts">
        ${report.parts.map(
          (part) =>
            html`<li class="card part" id="part-${part.part}">
              <h3>${s.parts[part.part].name} ${stateTag(t, part.state)}</h3>
              <p class="hint">${s.parts[part.part].hint}</p>
              ${partFacts(t, part, timeZone)}
              ${
                part.incidents.length > 0
                  ? html`<ul class="plain">
                      ${part.incidents.map((id) => incidentLink(t, report, id))}
                    </ul>`
                  : ''
              }
              ${history(t, part, today)}
            </li>`,
        )}
      </ul>
    </section>
    <section aria-labelledby="status-planned">
      <h2 id="status-planned">${s.planned}</h2>
      ${
        planned
          ? html`<article class="card incident" aria-labelledby="rollover-planned">
              <h3 id="rollover-planned">${s.plannedRollover}</h3>
              <p><span class="tag">${s.kinds.MAINTENANCE}</span> <span class="tag">${s.incidentStates.SCHEDULED}</span></p>
              <p>${s.plannedRolloverText(when(planned.previewedAt), when(planned.until))}</p>
            </article>`
          : ''
      }
      ${scheduled.map((incident) => incidentCard(t, incident, timeZone))}
      ${planned || scheduled.length > 0 ? '' : html`<p>${s.noPlanned}</p>`}
    </section>
    <section aria-labelledby="status-past">
      <h2 id="status-past">${s.past}</h2>
      ${report.past.length > 0 ? report.past.map((incident) => incidentCard(t, incident, timeZone)) : html`<p>${s.noPast}</p>`}
    </section>
    <p class="links">${s.forMachines}<a href="${jsonUrl}">${STATUS_PATH}</a></p>`;
}

const statusPage: Handler<StatusPageDeps> = async (req, deps) => {
  const report = await deps.board.report();
  return page(req.t.status.title, statusView(req.t, report, deps.config, deps.jsonUrl, req.lang));
};

/** The status page's table: one page, for anyone. */
export function statusRoutes(web: Web): RouteTable<StatusPageDeps> {
  return { access: 'anyone', csrf: web.anonymousForms, routes: [{ method: 'GET', path: '/status', handler: statusPage }] };
}
