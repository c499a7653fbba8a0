import type { AttemptRecord } from "@postel/core";
import { type Html, html } from "@postel/web-kit";
import { href, type PageContext } from "./context.js";
import { percent, time } from "./format.js";
import { layout } from "./layout.js";

const WINDOW = 5 * 60_000;

/** The live view: backlog, dead letters and recent attempts, refreshed by `live.js` from `live.json`. */
export async function livePage(ctx: PageContext): Promise<Html> {
  const stats = await ctx.ops.stats({ window: WINDOW });
  const { backlog } = stats;
  const figure = (id: string, label: string, value: string | number) =>
    html`<div class="card figure"><span class="label">${label}</span><span class="value" id="${id}">${value}</span></div>`;
  const chart = (id: string, label: string, unit: string) =>
    html`<figure class="chart"><svg id="${id}" viewBox="0 0 300 80" preserveAspectRatio="none" role="img" aria-label="${label}"><polyline points="" class="line"></polyline></svg><figcaption>${label} <span id="${id}-value">—</span> ${unit}</figcaption></figure>`;
  const body = html`<section id="live" class="cards" data-source="${href(ctx, "/live.json")}" data-at="${stats.at}">
${figure("backlog-due", "Due now", backlog.due)}
${figure("backlog-in-flight", "In flight", backlog.inFlight)}
${figure("backlog-scheduled", "Scheduled retries", backlog.scheduled)}
${figure("backlog-held", "Held (disabled)", backlog.held)}
${figure("backlog-unfanned", "Not fanned out", backlog.unfanned)}
${figure("dead-letters", "Dead letters", stats.deadLetters)}
${figure("window-attempts", "Attempts, last 5 min", stats.attempts.total)}
${figure("window-failure-rate", "Failed, last 5 min", percent(stats.attempts.failureRate))}
</section>
<p class="muted">Oldest due work: ${time(backlog.oldestDueAt, ctx.now)} · <span id="live-status">refreshing every 2 s</span></p>
<section class="charts">
${chart("chart-throughput", "Throughput", "attempts/s")}
${chart("chart-latency", "Latency p95", "ms")}
${chart("chart-backlog", "Backlog due", "deliveries")}
</section>`;
  return layout(ctx, { title: "Live", body, script: true });
}

/** What `live.js` polls: the figures now, and the attempts since its last poll (`?since=`). */
export async function liveJson(ctx: PageContext): Promise<unknown> {
  const asked = Number(ctx.url.searchParams.get("since"));
  const since = Number.isFinite(asked) && asked > 0 ? Math.max(asked, ctx.now - WINDOW) : ctx.now - 10_000;
  const [stats, recent] = await Promise.all([
    ctx.ops.stats({ window: WINDOW }),
    ctx.ops.attempts.recent({ since: Math.min(since, ctx.now), limit: 1000 }),
  ]);
  return {
    at: stats.at,
    backlog: stats.backlog,
    deadLetters: stats.deadLetters,
    window: stats.attempts,
    sample: { since, ...summarise(recent) },
  };
}

function summarise(attempts: AttemptRecord[]) {
  const latencies = attempts.map((a) => a.latencyMs).sort((a, b) => a - b);
  const at = (q: number) =>
    latencies.length === 0
      ? null
      : latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return {
    count: attempts.length,
    failures: attempts.filter((a) => a.outcome !== "success").length,
    p50: at(0.5),
    p95: at(0.95),
  };
}
