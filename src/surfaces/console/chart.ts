import type { KeyUsageDay } from '../../data/keys/store.js';
import { table } from '../web/components.js';
import { html, type Html } from '../web/html.js';
import type { Texts } from '../web/texts/index.js';

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
export function usageChart(t: Texts, bars: readonly UsageBar[]): Html {
  const c = t.console.chart;
  const busiest = Math.max(0, ...bars.map((b) => b.requests));
  // The scale needs a height even when no day had a request.
  const max = Math.max(1, busiest);
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
  const summary =
    totals.requests === 0
      ? c.empty(first, last, bars.length)
      : c.summary(first, last, bars.length, totals.requests, totals.clientErrors, totals.throttled, busiest);
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
        <title id="chart-title">${c.title}</title>
        <desc id="chart-desc">${summary}</desc>
        <line class="axis-line" x1="${LEFT}" y1="${TOP + plotHeight}" x2="${WIDTH - 8}" y2="${TOP + plotHeight}" />
        <line class="grid" x1="${LEFT}" y1="${TOP}" x2="${WIDTH - 8}" y2="${TOP}" />
        <text class="axis" x="${LEFT - 6}" y="${TOP + 4}" text-anchor="end">${String(max)}</text>
        <text class="axis" x="${LEFT - 6}" y="${TOP + plotHeight}" text-anchor="end">0</text>
        ${segments}
      </svg>
      <figcaption>
        <span class="legend"><span class="swatch bar-ok"></span>${c.ok}</span>
        <span class="legend"><span class="swatch bar-4xx"></span>${c.other4xx}</span>
        <span class="legend"><span class="swatch bar-429"></span>${c.throttled}</span>
        <span class="muted">${summary}</span>
      </figcaption>
    </figure>
    <details>
      <summary>${c.asTable}</summary>
      ${table(t, {
        caption: c.tableCaption,
        compact: true,
        columns: [c.day, c.requests, '4xx', '429'],
        rows: [...bars].reverse(),
        cells: (b) => [{ content: b.day, rowHeader: true }, b.requests, b.clientErrors, b.throttled],
      })}
    </details>`;
}
