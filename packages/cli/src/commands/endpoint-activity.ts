import {
  type ActivityTime,
  type AttemptRecord,
  type EndpointActivity,
  type EndpointStats,
  HEALTH_BUCKET_MS,
  type OutboundStats,
} from "@postel/core";
import { type CappedCount, countText, endpointAtLeast } from "../capped-counts.js";
import type { Output } from "../output.js";
import { formatDuration, formatTime, percent, relative } from "../time.js";

/** How much of a receiver's response `endpoints show` prints (the rest is in `messages show`). */
export const SNIPPET_CHARS = 200;

/**
 * Why the endpoint fails, or that it does not: what its receiver answered last, the last error and
 * response, the last success, since when it fails and when the circuit probes it. The response is
 * the receiver's text: printed through `fields`, which shows its control characters as escapes.
 */
export function printActivity(out: Output, activity: EndpointActivity): void {
  const { lastAttempt: last, lastFailure, lastSuccess, failingSince, at: now } = activity;
  const lookback = `${Math.round(activity.lookbackMs / 3_600_000)}h`;
  const moment = (time: ActivityTime) =>
    time.exact
      ? `${formatTime(time.at)} (${relative(time.at, now)})`
      : `around ${formatTime(time.at)} (to ${formatDuration(HEALTH_BUCKET_MS)}, ${relative(time.at, now)})`;
  const when = (a: AttemptRecord) => `${formatTime(a.startedAt)} (${relative(a.startedAt, now)})`;
  out.heading(`Activity, last ${lookback}`);
  out.fields([
    [
      "last status",
      last === null
        ? `no attempt in the last ${lookback}`
        : `${statusOf(last)} ${last.outcome}, ${last.latencyMs}ms, ${when(last)}`,
    ],
    [
      "last error",
      lastFailure === null ? "none" : `${lastFailure.error ?? statusOf(lastFailure)}, ${when(lastFailure)}`,
    ],
    ["last response", last === null ? "none" : snippet(last)],
    ["last success", lastSuccess === null ? `none in the last ${lookback}` : moment(lastSuccess)],
    [
      "failing since",
      failingSince === null
        ? last === null
          ? "-"
          : "not failing: the last attempt succeeded"
        : lastSuccess === null
          ? `at least since ${formatTime(failingSince.at)} (${relative(failingSince.at, now)}; no success in the last ${lookback})`
          : moment(failingSince),
    ],
    ["next probe", nextProbe(activity)],
  ]);
}

/** The newest attempts, newest first, as a table (or a line saying there were none). */
export function printRecentAttempts(out: Output, activity: EndpointActivity): void {
  out.heading("Recent attempts, newest first");
  if (activity.recent.length === 0) {
    out.text(`none in the last ${Math.round(activity.lookbackMs / 3_600_000)}h`);
    return;
  }
  out.table(
    [
      { header: "TIME", cell: (a: AttemptRecord) => formatTime(a.startedAt) },
      { header: "#", cell: (a) => a.attemptNumber },
      { header: "OUTCOME", cell: (a) => a.outcome },
      { header: "STATUS", cell: (a) => statusOf(a) },
      { header: "LATENCY", cell: (a) => `${a.latencyMs}ms` },
      { header: "MESSAGE", cell: (a) => a.messageId },
      { header: "ERROR", cell: (a) => a.error, shrink: true },
    ],
    activity.recent,
  );
}

/** The endpoint's line of `stats({ endpointId })`: its attempts over the window and its work by state. */
export function printHealth(out: Output, stats: OutboundStats, health: EndpointStats): void {
  const count = (name: CappedCount) => countText(health[name], endpointAtLeast(stats, health, name));
  out.heading(`Health, last ${formatDuration(stats.windowMs)}`);
  out.fields([
    ["attempts", health.attempts],
    ["failures", health.failures],
    ["failure rate", percent(health.failureRate) || "-"],
    ["due", count("due")],
    ["scheduled", count("scheduled")],
    ["in flight", count("inFlight")],
    ["held", count("held")],
    ["dead letters", count("deadLetters")],
    ["failed", count("failed")],
  ]);
}

/** The HTTP status, or the network error's code when no response arrived. */
function statusOf(a: AttemptRecord): string {
  return String(a.statusCode ?? a.errorCode ?? "-");
}

// The first SNIPPET_CHARS characters (by code point) of what the receiver answered, and where the rest is.
function snippet({ responseSnippet: text, messageId }: AttemptRecord): string {
  if (text === null) return "none (no response)";
  if (text === "") return "(empty body)";
  const chars = Array.from(text);
  if (chars.length <= SNIPPET_CHARS) return text;
  return `${chars.slice(0, SNIPPET_CHARS).join("")}… (${chars.length - SNIPPET_CHARS} more characters: postel messages show ${messageId})`;
}

// When an open circuit lets its next delivery through. Past its cooldown it waits for a delivery to
// come due, which is the probe: no time in the past is shown as "next".
function nextProbe(activity: EndpointActivity): string {
  if (activity.nextProbeAt !== null) {
    return `${formatTime(activity.nextProbeAt)} (${relative(activity.nextProbeAt, activity.at)})`;
  }
  if (activity.waitingForTraffic) return "waiting for traffic: the next delivery probes it";
  return activity.state === "disabled"
    ? "none: the endpoint is disabled, its deliveries are held"
    : "none: the circuit is closed";
}
