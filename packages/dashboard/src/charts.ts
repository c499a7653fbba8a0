import { type Html, html } from "@postel/web-kit";

/** One bar of a health chart: attempts and failures over an interval. */
export interface HealthInterval {
  label: string;
  attempts: number;
  failures: number;
}

/**
 * Health over time as inline SVG, drawn on the server (no chart library, nothing to run in the
 * browser): one bar per interval, its red part the share of failed attempts, grey when there were none.
 */
export function healthChart(intervals: HealthInterval[], caption: string): Html {
  const width = 60;
  const height = 80;
  const gap = 12;
  const total = intervals.length * (width + gap);
  const bars = intervals.map((interval, i) => {
    const x = i * (width + gap);
    const rate = interval.attempts === 0 ? null : interval.failures / interval.attempts;
    const failed = rate === null ? 0 : Math.round(rate * height);
    const label = rate === null ? "no attempts" : `${Math.round(rate * 100)}% failed of ${interval.attempts}`;
    return html`<g><title>${interval.label}: ${label}</title>
<rect x="${x}" y="0" width="${width}" height="${height}" class="${rate === null ? "bar-none" : "bar-ok"}"></rect>
${failed > 0 ? html`<rect x="${x}" y="0" width="${width}" height="${failed}" class="bar-bad"></rect>` : ""}
<text x="${x + width / 2}" y="${height + 14}" class="axis">${interval.label}</text>
<text x="${x + width / 2}" y="${height + 28}" class="axis">${rate === null ? "—" : `${Math.round(rate * 100)}%`}</text></g>`;
  });
  return html`<figure class="chart"><svg viewBox="0 0 ${total} ${height + 32}" role="img" aria-label="${caption}">${bars}</svg><figcaption>${caption}</figcaption></figure>`;
}

/** The width and height of a sparkline's viewBox (the SVG scales to its figure). */
const LINE_WIDTH = 300;
const LINE_HEIGHT = 80;

/**
 * A sparkline's `points`: `values` right-aligned on `slots` evenly spaced positions (fewer values
 * than slots start further right), scaled to the largest value. `live.js` draws with the same
 * arithmetic, so its redraw of the same data is the same line.
 */
export function linePoints(values: readonly number[], slots: number): string {
  const max = Math.max(0, ...values) || 1;
  const step = slots > 1 ? LINE_WIDTH / (slots - 1) : 0;
  const start = LINE_WIDTH - step * (values.length - 1);
  return values
    .map((v, i) => `${(start + i * step).toFixed(1)},${(LINE_HEIGHT - 2 - (v / max) * 74).toFixed(1)}`)
    .join(" ");
}

/** A value as the charts print it: one decimal at most. */
export const oneDecimal = (v: number): string => String(Math.round(v * 10) / 10);

/**
 * A sparkline drawn on the server (so the page is not empty before `live.js` polls) and redrawn by
 * `live.js` into the same ids: `<id>` the SVG, `<id>-value` the newest value, `<id>-peak` the largest
 * (`unit` follows each, e.g. `"/s"`).
 */
export function sparkline(
  id: string,
  label: string,
  unit: string,
  values: readonly number[],
  slots: number,
): Html {
  const last = values.at(-1);
  return html`<figure class="chart"><svg id="${id}" viewBox="0 0 ${LINE_WIDTH} ${LINE_HEIGHT}" preserveAspectRatio="none" role="img" aria-label="${label}"><polyline points="${linePoints(values, slots)}" class="line"></polyline></svg><figcaption>${label}: <span id="${id}-value">${last === undefined ? "—" : oneDecimal(last)}</span>${unit} · peak <span id="${id}-peak">${oneDecimal(Math.max(0, ...values))}</span>${unit}</figcaption></figure>`;
}
