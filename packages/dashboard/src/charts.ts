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
