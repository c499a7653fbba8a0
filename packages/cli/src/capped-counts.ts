import type { EndpointStats, OutboundStats } from "@postel/core";

/** The counts `stats()` stops at its cap (`countCap`), as `EndpointStats` names them. */
export type CappedCount = "due" | "inFlight" | "scheduled" | "held" | "deadLetters" | "failed";

// What each count was read as: one capped count each, but in flight and scheduled, which are one
// capped count of the pending deliveries not due yet, split by lease.
const READ_AS: Record<CappedCount, readonly CappedCount[]> = {
  due: ["due"],
  inFlight: ["inFlight", "scheduled"],
  scheduled: ["inFlight", "scheduled"],
  held: ["held"],
  deadLetters: ["deadLetters"],
  failed: ["failed"],
};

/** A whole-outbox count of `stats()`. */
export function totalOf(stats: OutboundStats, name: CappedCount): number {
  if (name === "deadLetters" || name === "failed") return stats[name];
  return stats.backlog[name];
}

/** Whether one endpoint's `name` stopped at the cap: there are at least that many. */
export function endpointAtLeast(
  stats: Pick<OutboundStats, "countCap">,
  endpoint: Pick<EndpointStats, CappedCount>,
  name: CappedCount,
): boolean {
  const cap = stats.countCap;
  return cap !== null && READ_AS[name].reduce((sum, key) => sum + endpoint[key], 0) >= cap;
}

/**
 * Whether the total `name` may have stopped at the cap. A total is the sum of per-endpoint counts,
 * each stopped at the cap, deleted endpoints' included though they are not listed: what the listed
 * ones leave of the total is the deleted ones', and when that alone reaches the cap one of them may
 * have stopped (as `stats().capped` weighs it, per count here).
 */
export function totalAtLeast(stats: OutboundStats, name: CappedCount): boolean {
  const cap = stats.countCap;
  if (cap === null) return false;
  const keys = READ_AS[name];
  const total = keys.reduce((sum, key) => sum + totalOf(stats, key), 0);
  const listed = stats.endpoints.reduce((sum, e) => sum + keys.reduce((n, key) => n + e[key], 0), 0);
  return stats.endpoints.some((e) => endpointAtLeast(stats, e, name)) || total - listed >= cap;
}

/** `12`, or `>= 1000` for a count that stopped at the cap. */
export function countText(value: number, atLeast: boolean): string {
  return `${atLeast ? ">= " : ""}${value}`;
}
