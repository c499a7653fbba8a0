import { HELD_KEYS_IN_STATS, isPostelError, type OutboundStats, type Timeline } from "@postel/core";
import { type Html, html } from "@postel/web-kit";
import { sparkline } from "../charts.js";
import { href, type PageContext } from "./context.js";
import { atLeast, badge, percent, time } from "./format.js";
import { layout } from "./layout.js";

/** The window of the figures and of the failing endpoints' ranking. */
const WINDOW = 5 * 60_000;
/** The window the charts start with: 90 points of 10 s. */
const TIMELINE_WINDOW = "15m";
/** The failing endpoints the live view ranks at most. */
const RANKED = 10;
/** The positions of the backlog chart, which `live.js` fills one poll (2 s) at a time. */
const BACKLOG_SLOTS = 150;

/** One endpoint of the failing endpoints' ranking, as `live.json` sends it. */
export interface FailingEndpoint {
  id: string;
  url: string;
  description: string | null;
  state: string;
  failures: number;
  attempts: number;
  failureRate: number | null;
  due: number;
  scheduled: number;
  /** Its page in the dashboard. */
  path: string;
}

/**
 * The endpoints with failed attempts in the window, worst first (most failures, then the highest
 * failure rate), at most `RANKED`: from `stats()`'s per-endpoint lines, no query of its own.
 */
export function rankFailing(ctx: PageContext, stats: OutboundStats): FailingEndpoint[] {
  return stats.endpoints
    .filter((line) => line.failures > 0)
    .sort((a, b) => b.failures - a.failures || (b.failureRate ?? 0) - (a.failureRate ?? 0))
    .slice(0, RANKED)
    .map((line) => ({
      id: line.id,
      url: line.url,
      description: line.description,
      state: line.state,
      failures: line.failures,
      attempts: line.attempts,
      failureRate: line.failureRate,
      due: line.due,
      scheduled: line.scheduled,
      path: href(ctx, `/endpoints/${encodeURIComponent(line.id)}`),
    }));
}

/** The attempts and failures per 10 s of the last 15 minutes; null on a storage without health buckets. */
async function readTimeline(ctx: PageContext): Promise<Timeline | null> {
  try {
    return await ctx.ops.timeline({ window: TIMELINE_WINDOW });
  } catch (error) {
    if (isPostelError(error) && error.code === "HEALTH_TIMELINE_UNSUPPORTED") return null;
    throw error;
  }
}

/**
 * The live view: backlog, dead letters, permanent failures, the failing endpoints ranked, and charts
 * of the last 15 minutes, refreshed by `live.js` from `live.json`.
 */
export async function livePage(ctx: PageContext): Promise<Html> {
  const [stats, timeline] = await Promise.all([ctx.ops.stats({ window: WINDOW }), readTimeline(ctx)]);
  const { backlog } = stats;
  const figure = (id: string, label: string, value: string | number, link?: string) =>
    html`<div class="card figure"><span class="label">${link ? html`<a href="${link}">${label}</a>` : label}</span><span class="value" id="${id}">${value}</span></div>`;
  const failing = rankFailing(ctx, stats);
  const body = html`<section id="live" class="cards" data-source="${href(ctx, "/live.json")}">
${figure("backlog-due", "Due now", backlog.due)}
${figure("backlog-in-flight", "In flight", backlog.inFlight)}
${figure("backlog-scheduled", "Scheduled retries", backlog.scheduled)}
${figure("backlog-held", "Held (disabled)", backlog.held)}
${figure("backlog-unfanned", "Not fanned out", backlog.unfanned)}
${figure("dead-letters", "Dead letters", atLeast(stats.deadLetters, stats.countCap), href(ctx, "/dead-letters"))}
${figure("failed", "Failed permanently", atLeast(stats.failed, stats.countCap), href(ctx, "/dead-letters", { status: "failed" }))}
${
  stats.ordering === null
    ? ""
    : html`${figure("ordering-waiting", "Waiting behind their key", atLeast(stats.ordering.waiting, stats.countCap))}
${figure("held-keys", "Held keys", atLeast(stats.ordering.heldKeys.length, HELD_KEYS_IN_STATS), href(ctx, "/held-keys"))}`
}
${figure("window-attempts", "Attempts, last 5 min", stats.attempts.total)}
${figure("window-failure-rate", "Failed, last 5 min", percent(stats.attempts.failureRate))}
</section>
<p class="muted">Oldest due work: ${time(backlog.oldestDueAt, ctx.now)} · <span id="live-status">refreshing every 2 s</span></p>
<h2>Failing endpoints, last 5 min</h2>
<div class="table-wrap"><table id="failing">
<thead><tr><th>Endpoint</th><th>State</th><th>Failures</th><th>Failed</th><th>Attempts</th><th>Due</th><th>Scheduled</th></tr></thead>
<tbody id="failing-rows" data-empty="${NO_FAILURES}">${
    failing.length > 0
      ? failing.map(
          (e) => html`<tr>
<td data-label="Endpoint"><a class="mono" href="${e.path}">${e.url}</a>${e.description ? html`<div class="muted">${e.description}</div>` : ""}</td>
<td data-label="State">${badge(e.state)}</td>
<td data-label="Failures">${e.failures}</td>
<td data-label="Failed">${percent(e.failureRate)}</td>
<td data-label="Attempts">${e.attempts}</td>
<td data-label="Due">${atLeast(e.due, stats.countCap)}</td>
<td data-label="Scheduled">${atLeast(e.scheduled, stats.countCap)}</td>
</tr>`,
        )
      : html`<tr><td colspan="7">${NO_FAILURES}</td></tr>`
  }</tbody>
</table></div>
${charts(timeline, backlog.due)}`;
  return layout(ctx, { title: "Live", body, script: true });
}

const NO_FAILURES = "No endpoint failed in the last 5 min.";

/**
 * Throughput and failed attempts per second over the timeline's complete buckets (the newest one is
 * still filling: drawn, it would dip), and the backlog due, which has no history and starts when the
 * page opens.
 */
function charts(timeline: Timeline | null, due: number): Html {
  const backlog = sparkline("chart-backlog", "Backlog due since this page opened", "", [due], BACKLOG_SLOTS);
  if (timeline === null) {
    return html`<p class="notice warn">This storage keeps no health buckets (<span class="mono">Storage.healthBuckets</span>), so there are no charts of attempts over time.</p>
<section class="charts">${backlog}</section>`;
  }
  const complete = timeline.points.slice(0, -1);
  const perSecond = (n: number) => n / (timeline.bucketMs / 1000);
  const attempts = complete.map((p) => perSecond(p.attempts));
  const failures = complete.map((p) => perSecond(p.failures));
  return html`<section class="charts">
${sparkline("chart-throughput", "Attempts", "/s", attempts, complete.length)}
${sparkline("chart-failures", "Failed attempts", "/s", failures, complete.length)}
${backlog}
</section>
<p class="muted">Attempts and failures per 10 s over the last 15 min; the 10 s now under way is drawn once complete.</p>`;
}

/** What `live.js` polls: the figures, the failing endpoints ranked, and the last 15 minutes' timeline. */
export async function liveJson(ctx: PageContext): Promise<unknown> {
  const [stats, timeline] = await Promise.all([ctx.ops.stats({ window: WINDOW }), readTimeline(ctx)]);
  return {
    at: stats.at,
    backlog: stats.backlog,
    deadLetters: stats.deadLetters,
    failed: stats.failed,
    countCap: stats.countCap,
    // The held keys' count only (stats reads at most HELD_KEYS_IN_STATS of them: "20+").
    ordering:
      stats.ordering === null
        ? null
        : {
            waiting: stats.ordering.waiting,
            heldKeys: stats.ordering.heldKeys.length,
            heldKeysCap: HELD_KEYS_IN_STATS,
          },
    window: stats.attempts,
    failing: rankFailing(ctx, stats),
    timeline,
  };
}
