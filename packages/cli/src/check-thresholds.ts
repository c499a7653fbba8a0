import { HELD_KEYS_IN_STATS, type OutboundStats } from "@postel/core";
import { type CappedCount, totalAtLeast, totalOf } from "./capped-counts.js";

/** What `postel check` can hold the outbox to, in its order; a threshold is the most that is healthy. */
export const CHECK_NAMES = ["oldest-due", "due", "dead-letters", "failed", "disabled", "held-keys"] as const;

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

/**
 * Reads the outbox through `stats` and compares it with each threshold given. Counts are read capped
 * first, which costs the same beside any backlog: a count that stopped at the cap and is over its
 * threshold fails as it is; one at or under its threshold cannot say, and only then are exact counts
 * read (every pending, dead-lettered and failed row). Held keys likewise: `stats()` lists up to
 * `HELD_KEYS_IN_STATS`, and only a full list under a higher threshold is counted on, through
 * `countHeld` (up to the threshold and one).
 */
export async function checkThresholds(
  stats: (options: { exact: boolean }) => Promise<OutboundStats>,
  thresholds: Thresholds,
  countHeld?: (upTo: number) => Promise<number>,
): Promise<CheckResult[]> {
  const capped = await stats({ exact: false });
  const undecided = read(capped, thresholds).some(
    (r) => r.name !== "held-keys" && r.atLeast && r.value! <= r.threshold,
  );
  const snapshot = undecided ? await stats({ exact: true }) : capped;
  const readings = read(snapshot, thresholds);
  for (const r of readings) {
    if (r.name !== "held-keys" || !r.atLeast || r.value! > r.threshold || countHeld === undefined) continue;
    r.value = await countHeld(r.threshold + 1);
    r.atLeast = r.value > r.threshold;
  }
  return readings.map((r) => ({ ...r, ok: r.value === null || r.value <= r.threshold }));
}

function read(stats: OutboundStats, thresholds: Thresholds): Reading[] {
  const count = (name: CappedCount) => ({ value: totalOf(stats, name), atLeast: totalAtLeast(stats, name) });
  const readings: Record<CheckName, () => Pick<Reading, "value" | "atLeast">> = {
    "oldest-due": () => ({
      value: stats.backlog.oldestDueAt === null ? null : Math.max(0, stats.at - stats.backlog.oldestDueAt),
      atLeast: false,
    }),
    due: () => count("due"),
    "dead-letters": () => count("deadLetters"),
    failed: () => count("failed"),
    // Every live endpoint is listed, uncapped: no second query.
    disabled: () => ({ value: stats.endpoints.filter((e) => e.state === "disabled").length, atLeast: false }),
    // Keys held by a head that dead-lettered or failed (onKeyFailure "hold"); none without ordering.
    "held-keys": () => {
      const listed = stats.ordering?.heldKeys.length ?? 0;
      return { value: listed, atLeast: listed >= HELD_KEYS_IN_STATS };
    },
  };
  return CHECK_NAMES.flatMap((name) => {
    const threshold = thresholds[name];
    return threshold === undefined ? [] : [{ name, ...readings[name](), threshold }];
  });
}
