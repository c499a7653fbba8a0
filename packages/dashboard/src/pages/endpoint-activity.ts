import type { ActivityTime, AttemptRecord, EndpointActivity } from "@postel/core";
import { type Html, html } from "@postel/web-kit";
import { href, type PageContext } from "./context.js";
import { badge, formatTime, printable, relative, snippet, time } from "./format.js";

/**
 * When an open circuit lets its next delivery through. Past its cooldown the circuit waits for a
 * delivery to come due: that one is the probe, so no time in the past is shown as "next".
 */
export function probe(ctx: PageContext, nextProbeAt: number | null, waitingForTraffic: boolean): Html | null {
  if (nextProbeAt !== null) return html`next probe ${time(nextProbeAt, ctx.now)}`;
  if (waitingForTraffic) return html`waiting for traffic: the next delivery probes it`;
  return null;
}

/**
 * "Why": what the endpoint's receiver answered last, the last error and response, since when it
 * fails, when the circuit probes it, and its newest attempts (`endpoints.activity(id)`). Every
 * receiver-controlled text (errors, snippets) is escaped by the template and shown with its control
 * characters visible.
 */
export function activityCard(ctx: PageContext, activity: EndpointActivity): Html {
  const { lastAttempt, lastFailure, lastSuccess, failingSince } = activity;
  const lookback = `${Math.round(activity.lookbackMs / 3_600_000)} h`;
  const last = lastAttempt ?? null;
  const failing =
    failingSince === null
      ? last === null
        ? "—"
        : "not failing: the last attempt succeeded"
      : lastSuccess === null
        ? moment(ctx, failingSince, `or earlier: no success in the last ${lookback}`)
        : moment(ctx, failingSince);
  const nextProbe =
    probe(ctx, activity.nextProbeAt, activity.waitingForTraffic) ??
    (activity.state === "disabled"
      ? "none: the endpoint is disabled, its deliveries are held"
      : "none: the circuit is closed");
  return html`<section class="card activity" id="activity" aria-labelledby="activity-title">
<h2 id="activity-title">Why: recent activity</h2>
<dl class="fields">
<dt>Last status</dt><dd id="activity-last-status">${last === null ? `no attempt in the last ${lookback}` : html`${badge(last.outcome)} <strong class="mono">${statusOf(last)}</strong> · ${last.latencyMs} ms · ${time(last.startedAt, ctx.now)}`}</dd>
<dt>Last error</dt><dd id="activity-last-error">${lastFailure === null ? "—" : html`${printable(lastFailure.error ?? statusOf(lastFailure))} · ${time(lastFailure.startedAt, ctx.now)}`}</dd>
<dt>Last response</dt><dd id="activity-last-response">${last === null ? "—" : snippet(last.responseSnippet)}</dd>
<dt>Last success</dt><dd id="activity-last-success">${lastSuccess === null ? `none in the last ${lookback}` : moment(ctx, lastSuccess)}</dd>
<dt>Failing since</dt><dd id="activity-failing-since">${failing}</dd>
<dt>Next probe</dt><dd id="activity-probe">${nextProbe}</dd>
</dl>
<h3>Recent attempts</h3>
<div class="table-wrap"><table id="activity-recent">
<thead><tr><th>When</th><th>#</th><th>Outcome</th><th>Status</th><th>Latency</th><th>Error</th><th>Message</th></tr></thead>
<tbody>${
    activity.recent.length > 0
      ? activity.recent.map((a) => attemptRow(ctx, a))
      : html`<tr><td colspan="7">No attempt in the last ${lookback}.</td></tr>`
  }</tbody>
</table></div>
</section>`;
}

function attemptRow(ctx: PageContext, a: AttemptRecord): Html {
  return html`<tr>
<td data-label="When">${time(a.startedAt, ctx.now)}</td>
<td data-label="#">${a.attemptNumber}</td>
<td data-label="Outcome">${badge(a.outcome)}</td>
<td data-label="Status" class="mono">${statusOf(a)}</td>
<td data-label="Latency">${a.latencyMs} ms</td>
<td data-label="Error">${a.error === null ? "—" : printable(a.error)}</td>
<td data-label="Message"><a class="mono id" href="${href(ctx, `/messages/${encodeURIComponent(a.messageId)}`)}">${a.messageId}</a></td>
</tr>`;
}

/** The HTTP status, or the network error's code when no response arrived. */
const statusOf = (a: AttemptRecord): string => String(a.statusCode ?? a.errorCode ?? "—");

/**
 * A moment as exactly as it is known: an attempt's own time, or "around" the start of the 10 s
 * health bucket it fell in; how long ago, and `note`, in muted text after it.
 */
function moment(ctx: PageContext, at: ActivityTime, note?: string): Html {
  const ago = relative(at.at, ctx.now);
  const notes = [at.exact ? ago : `within 10 s after it, ${ago}`, ...(note ? [note] : [])];
  return html`${at.exact ? "" : "around "}<time title="${ago}">${formatTime(at.at)}</time> <span class="muted">(${notes.join("; ")})</span>`;
}
