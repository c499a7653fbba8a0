import type { EndpointStats, OutboundStats } from "@postel/core";

/** What `postel check` can hold the outbox to, in its order; a threshold is the most that is healthy. */
export const CHECK_NAMES = ["oldest-due", "due", "dead-letters", "failed", "disabled"] as const;

/** One check's name, which is also its flag's (`--max-<name>`). */
export type CheckName = (typeof CHECK_NAMES)[number];

/** The thresholds given: a count, or for `oldest-due` milliseconds. */
export type Thresholds = Partial<Record<CheckName, number>>;

/** One check as `postel check` reports it. */
export interface CheckResult {
  name: CheckName;
  /** A count, or the oldest due delivery's age in milliseconds (null when nothing is due). */
  value: number | null;
  /** The count stopped at `stats()`'s cap: there are at least `value`. */
  atLeast: boolean;
  threshold: number;
  /** Whether `value` is at most `threshold`. */
  ok: boolean;
}

type Reading = Omit<CheckResult, "ok">;
type CappedCount = "due" | "deadLetters" | "failed";

/**
 * Reads the outbox through `stats` and compares it with each threshold given. Counts are read capped
 * first, which costs the same beside any backlog: a count that stopped at the cap and is over its
 * threshold fails as it is; one at or under its threshold cannot say, and only then are exact counts
 * read (every pending, dead-lettered and failed row).
 */
export async function checkThresholds(
  stats: (options: { exact: boolean }) => Promise<OutboundStats>,
  thresholds: Thresholds,
): Promise<CheckResult[]> {
  const capped = await stats({ exact: false });
  const undecided = read(capped, thresholds).some((r) => r.atLeast && r.value! <= r.threshold);
  const snapshot = undecided ? await stats({ exact: true }) : capped;
  return read(snapshot, thresholds).map((r) => ({ ...r, ok: r.value === null || r.value <= r.threshold }));
}

function read(stats: OutboundStats, thresholds: Thresholds): Reading[] {
  const count = (key: CappedCount, value: number) => ({ value, atLeast: reachedCap(stats, key, value) });
  const readings: Record<CheckName, () => Pick<Reading, "value" | "atLeast">> = {
    "oldest-due": () => ({
      value: stats.backlog.oldestDueAt === null ? null : Math.max(0, stats.at - stats.backlog.oldestDueAt),
      atLeast: false,
    }),
    due: () => count("due", stats.backlog.due),
    "dead-letters": () => count("deadLetters", stats.deadLetters),
    failed: () => count("failed", stats.failed),
    // Every live endpoint is listed, uncapped: no second query.
    disabled: () => ({ value: stats.endpoints.filter((e) => e.state === "disabled").length, atLeast: false }),
  };
  return CHECK_NAMES.flatMap((name) => {
    const threshold = thresholds[name];
    return threshold === undefined ? [] : [{ name, ...readings[name](), threshold }];
  });
}

// A total is the sum of per-endpoint counts, each stopped at the cap, deleted endpoints' included
// though they are not listed: what the listed ones leave of the total is the deleted ones', and when
// that alone reaches the cap one of them may have stopped (as `stats().capped` weighs it, per count here).
function reachedCap(stats: OutboundStats, key: CappedCount, total: number): boolean {
  const cap = stats.countCap;
  if (cap === null) return false;
  const listed = stats.endpoints.reduce((sum, e: EndpointStats) => sum + e[key], 0);
  return stats.endpoints.some((e) => e[key] >= cap) || total - listed >= cap;
}
