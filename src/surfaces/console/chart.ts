import { html, type Html } from '../../http/web/html.js';
import type { Lang } from '../../http/web/lang.js';
import type { KeyUsageDay } from '../../data/api-keys.js';

/** One day of the chart; days without requests have zeros. */
export interface UsageBar {
  readonly day: string;
  readonly requests: number;
  readonly clientErrors: number;
  readonly throttled: number;
}

/** Every day from `days[0]` on, with the counted usage filled in. */
export function fillDays(days: readonly string[], usage: readonly KeyUsageDay[]): UsageBar[] {
  const byDay = new Map(usage.map((u) => [u.day, u]));
  return days.map((day) => byDay.get(day) ?? { day, requests: 0, clientErrors: 0, throttled: 0 });
}

const WIDTH = 600;
const HEIGHT = 180;
const LEFT = 40;
const BOTTOM = 24;
const TOP = 10;

/**
 * Requests per day as a server-side SVG (no script): each day's bar stacks the successful
 * answers, the other 4xx and the 429s, always in that order (colours from web/assets/web.css,
 * named in the legend). The SVG is an image with a text summary; the same numbers follow as a
 * table for screen readers and for reading exact values.
 */
export function usageChart(lang: Lang, bars: readonly UsageBar[]): Html {
  const ko = lang === 'ko';
  const max = Math.max(1, ...bars.map((b) => b.requests));
  const plotWidth = WIDTH - LEFT - 8;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const step = plotWidth / Math.max(1, bars.length);
  const barWidth = Math.max(2, step - 3);
  const y = (value: number) => TOP + plotHeight - (value / max) * plotHeight;
  const totals = bars.reduce(
    (sum, b) => ({
      requests: sum.requests + b.requests,
      clientErrors: sum.clientErrors + b.clientErrors,
      throttled: sum.throttled + b.throttled,
    }),
    { requests: 0, clientErrors: 0, throttled: 0 },
  );
  const first = bars[0]?.day ?? '';
  const last = bars[bars.length - 1]?.day ?? '';
  const summary = ko
    ? `${first}부터 ${last}까지 ${bars.length}일 동안 요청 ${totals.requests}건, 그중 4xx ${totals.clientErrors}건 (429 ${totals.throttled}건). 가장 많은 날 ${max}건.`
    : `${totals.requests} requests from ${first} to ${last} (${bars.length} days), of which ${totals.clientErrors} were 4xx (${totals.throttled} were 429). Busiest day: ${max}.`;
  const segments = bars.map((bar, index) => {
    const x = LEFT + index * step + 1.5;
    const ok = bar.requests - bar.clientErrors;
    const other4xx = bar.clientErrors - bar.throttled;
    const parts: Html[] = [];
    let base = 0;
    for (const [value, cls] of [
      [ok, 'bar-ok'],
      [other4xx, 'bar-4xx'],
      [bar.throttled, 'bar-429'],
    ] as const) {
      if (value <= 0) continue;
      const top = y(base + value);
      parts.push(
        html`<rect
          class="${cls}"
          x="${x.toFixed(1)}"
          y="${top.toFixed(1)}"
          width="${barWidth.toFixed(1)}"
          height="${(y(base) - top).toFixed(1)}"
        />`,
      );
      base += value;
    }
    const label =
      index % 5 === 0 || index === bars.length - 1
        ? html`<text class="axis" x="${(x + barWidth / 2).toFixed(1)}" y="${HEIGHT - 6}" text-anchor="middle">${bar.day.slice(5)}</text>`
        : '';
    return html`${parts}${label}`;
  });
  return html`<figure class="chart">
      <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title chart-desc" class="usage" focusable="false">
        <title id="chart-title">${ko ? '최근 30일 일별 요청 수' : 'Requests per day, last 30 days'}</title>
        <desc id="chart-desc">${summary}</desc>
        <line class="axis-line" x1="${LEFT}" y1="${TOP + plotHeight}" x2="${WIDTH - 8}" y2="${TOP + plotHeight}" />
        <line class="grid" x1="${LEFT}" y1="${TOP}" x2="${WIDTH - 8}" y2="${TOP}" />
        <text class="axis" x="${LEFT - 6}" y="${TOP + 4}" text-anchor="end">${String(max)}</text>
        <text class="axis" x="${LEFT - 6}" y="${TOP + plotHeight}" text-anchor="end">0</text>
        ${segments}
      </svg>
      <figcaption>
        <span class="legend"><span class="swatch bar-ok"></span>${ko ? '성공 (2xx·3xx)' : 'Answered (2xx, 3xx)'}</span>
        <span class="legend"><span class="swatch bar-4xx"></span>${ko ? '4xx (429 제외)' : '4xx (other than 429)'}</span>
        <span class="legend"><span class="swatch bar-429"></span>${ko ? '429 (한도 초과)' : '429 (rate limited)'}</span>
        <span class="muted">${summary}</span>
      </figcaption>
    </figure>
    <details>
      <summary>${ko ? '표로 보기' : 'Show as a table'}</summary>
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">
            ${ko ? '일별 요청 수' : 'Requests per day'}
          </caption>
          <thead>
            <tr>
              <th scope="col">${ko ? '날짜' : 'Day'}</th>
              <th scope="col">${ko ? '요청' : 'Requests'}</th>
              <th scope="col">4xx</th>
              <th scope="col">429</th>
            </tr>
          </thead>
          <tbody>
            ${[...bars].reverse().map(
              (b) =>
                html`<tr>
                  <th scope="row">${b.day}</th>
                  <td>${String(b.requests)}</td>
                  <td>${String(b.clientErrors)}</td>
                  <td>${String(b.throttled)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
    </details>`;
}
